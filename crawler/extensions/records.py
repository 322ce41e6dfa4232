"""Item counts in records: a page item counts as its researcher plus its listings.

The spider yields one ``PageItem`` a page (``scholarindex.core.items``), and Scrapy counts one
item per item (``CoreStats``). Exports, the run report and the people reading the
stats count records (one per researcher and per listing, one line each in a feed),
as before pages became the item: this adds the rest of each page's records to
``item_scraped_count`` and, for a dropped page, to ``item_dropped_count`` and its
reason.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

from crawler.extensions.itemsignals import watch_items
from scholarindex.core import stat_keys
from scholarindex.core.items import PageItem


class RecordCounts:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        watch_items(crawler, self.item_scraped, signals.item_scraped)
        watch_items(crawler, self.item_dropped, signals.item_dropped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RecordCounts:
        return cls(crawler)

    def item_scraped(self, item: Any, **_: Any) -> None:
        if isinstance(item, PageItem) and item.works:
            self.stats.inc_value(stat_keys.SCRAPY_ITEMS_SCRAPED, len(item.works))

    def item_dropped(self, item: Any, exception: BaseException, **_: Any) -> None:
        if isinstance(item, PageItem) and item.works:
            self.stats.inc_value(stat_keys.SCRAPY_ITEMS_DROPPED, len(item.works))
            self.stats.inc_value(f"{stat_keys.SCRAPY_ITEMS_DROPPED_BY_REASON}"
                                 f"{type(exception).__name__}", len(item.works))
