"""The feed exporters: a page item is exported as its records, one a line (row, element)."""

from __future__ import annotations

import csv
import io
import json

from crawler import feeds
from crawler.environment import project_settings
from scholarindex.core.items import PageItem, ResearcherItem, WorkItem


def _page() -> PageItem:
    researcher = ResearcherItem(id="r1", url="http://x/r1", name="Ann Lee", work_ids=["w1", "w2"],
                                complete=True)
    works = [WorkItem(work_id=f"w{i}", title=f"Title {i}", researcher_id="r1",
                      researcher_name="Ann Lee", position=i) for i in (1, 2)]
    return PageItem(researcher, works)


def test_json_lines_one_record_a_line_researcher_first() -> None:
    out = io.BytesIO()
    exporter = feeds.JsonLinesItemExporter(out)
    exporter.start_exporting()
    exporter.export_item(_page())
    exporter.export_item(WorkItem(work_id="w9", title="Alone", researcher_id="r9",
                                  researcher_name="Bo Chen"))  # any other item: as it is
    exporter.finish_exporting()
    lines = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    assert [(r["kind"], r.get("work_id") or r["id"]) for r in lines] == [
        ("researcher", "r1"), ("work", "w1"), ("work", "w2"), ("work", "w9")]
    assert lines[1]["position"] == 1 and lines[0]["work_ids"] == ["w1", "w2"]


def test_csv_and_json_keep_one_row_per_record() -> None:
    out = io.BytesIO()
    exporter = feeds.CsvItemExporter(out, fields_to_export=["kind", "id", "work_id"])
    exporter.start_exporting()
    exporter.export_item(_page())
    exporter.finish_exporting()
    rows = list(csv.DictReader(io.StringIO(out.getvalue().decode())))
    assert [(r["kind"], r["id"], r["work_id"]) for r in rows] == [
        ("researcher", "r1", ""), ("work", "", "w1"), ("work", "", "w2")]
    out = io.BytesIO()
    json_exporter = feeds.JsonItemExporter(out)
    json_exporter.start_exporting()
    json_exporter.export_item(_page())
    json_exporter.finish_exporting()
    assert [r["kind"] for r in json.loads(out.getvalue())] == ["researcher", "work", "work"]


def test_every_built_in_format_exports_records() -> None:
    from scrapy.utils.misc import load_object

    settings = project_settings()
    formats = settings.getdict("FEED_EXPORTERS_BASE")
    ours = settings.getdict("FEED_EXPORTERS")
    assert set(ours) == set(formats)
    for name, path in ours.items():
        cls = load_object(path)
        assert issubclass(cls, load_object(formats[name])), name
        assert cls.export_item is not load_object(formats[name]).export_item, name
