"""Feed exporters that write one record a line, as before pages became the item.

The spider yields one ``PageItem`` a page (``scholarindex.core.items``); ``-o``/``-O`` exports
keep their shape: one line (row, element) per researcher and per listing, the
researcher first. Each class is Scrapy's exporter of the same format, unpacking a
page with ``scholarindex.core.items.records``; ``FEED_EXPORTERS`` in ``crawler/settings.py``
puts them in place of Scrapy's for every built-in format.
"""

from __future__ import annotations

from typing import Any

from scrapy import exporters

from scholarindex.core.items import records


class _Records:
    """Mixin: export each record of an item through the format's own ``export_item``."""

    def export_item(self, item: Any) -> None:
        for record in records(item):
            super().export_item(record)  # type: ignore[misc]  # a mixin: the format's exporter comes next


class JsonItemExporter(_Records, exporters.JsonItemExporter):
    pass


class JsonLinesItemExporter(_Records, exporters.JsonLinesItemExporter):
    pass


class CsvItemExporter(_Records, exporters.CsvItemExporter):
    pass


class XmlItemExporter(_Records, exporters.XmlItemExporter):
    pass


class MarshalItemExporter(_Records, exporters.MarshalItemExporter):
    pass


class PickleItemExporter(_Records, exporters.PickleItemExporter):
    pass

