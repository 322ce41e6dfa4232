"""The record counts and the run report share one receiver of Scrapy's item signals."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from pydispatch.dispatcher import getAllReceivers, liveReceivers
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from crawler.extensions.itemsignals import ItemSignals
from crawler.extensions.records import RecordCounts
from crawler.extensions.report import RunReport
from crawler.extensions.verdict import RunVerdict
from crawler.signals import run_verdict
from scholarindex.core.items import PageItem, ResearcherItem, WorkItem

PAGE = PageItem(ResearcherItem(id="r", url="https://site/r", name="R"),
                [WorkItem(work_id=w, title=w, researcher_id="r", researcher_name="R")
                 for w in ("a", "b", "a")])


def _receivers(crawler, signal) -> list:
    return list(liveReceivers(getAllReceivers(crawler.signals.sender, signal)))


def _crawler(extensions: dict[type, int]) -> Crawler:
    return get_crawler(settings_dict={"EXTENSIONS": extensions, "RUN_REPORT": "",
                                      "INDEX_ENABLED": False})


def test_records_and_report_count_through_one_receiver() -> None:
    crawler = _crawler({})
    crawler.stats.open_spider()
    before = {s: len(_receivers(crawler, s)) for s in (signals.item_scraped,
                                                       signals.item_dropped)}
    crawler = _crawler({ItemSignals: 0, RecordCounts: 0, RunReport: 0})
    crawler.stats.open_spider()
    crawler.signals.send_catch_log(signals.engine_started)
    report = crawler.get_extension(RunReport)
    assert report is not None
    assert {s: len(_receivers(crawler, s)) - n for s, n in before.items()} == {
        signals.item_scraped: 1, signals.item_dropped: 1}
    crawler.signals.send_catch_log(signals.item_scraped, item=PAGE, response=None,
                                   spider=None)
    crawler.signals.send_catch_log(signals.item_dropped, item=PAGE, response=None,
                                   spider=None, exception=ValueError("x"))
    stats = crawler.stats.get_stats()  # Scrapy's CoreStats counts the page item as one
    assert stats["item_scraped_count"] == 4 and stats["item_dropped_count"] == 4
    assert stats["item_dropped_reasons_count/ValueError"] == 4
    assert len(report.works) == 2  # a and b, each once


def test_without_the_hub_the_callbacks_are_scrapys_receivers() -> None:
    crawler = _crawler({RecordCounts: 0})
    crawler.stats.open_spider()
    crawler.signals.send_catch_log(signals.engine_started)
    crawler.signals.send_catch_log(signals.item_scraped, item=PAGE, response=None, spider=None)
    assert crawler.stats.get_value("item_scraped_count") == 4


def test_a_failing_callback_is_logged_and_the_others_still_run(
        caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler()
    seen: list[object] = []

    def broken(**_: object) -> None:
        raise RuntimeError("bug")

    hub = ItemSignals(crawler)
    hub.connect(broken, signals.item_scraped)
    hub.connect(lambda item, **_: seen.append(item), signals.item_scraped)
    with caplog.at_level(logging.ERROR, logger="crawler.extensions.itemsignals"):
        crawler.signals.send_catch_log(signals.item_scraped, item=PAGE, response=None,
                                       spider=None)
    assert seen == [PAGE]
    assert "Error caught on signal handler" in caplog.text


def test_the_report_has_the_verdict_whichever_extension_closes_first(tmp_path) -> None:
    """The run report asks for the verdict itself: listed before the verdict, or after,
    the report carries it and the verdict is judged and announced once."""
    for order in ({RunReport: 0, RunVerdict: 1}, {RunVerdict: 0, RunReport: 1}):
        crawler = get_crawler(settings_dict={"EXTENSIONS": order, "INDEX_ENABLED": False,
                                             "RUN_REPORT": str(tmp_path / "report.json")})
        crawler.stats.open_spider()
        announced: list[object] = []
        crawler.signals.connect(lambda verdict, reason, seen=announced: seen.append(verdict),
                                signal=run_verdict, weak=False)
        report, verdicts = crawler.get_extension(RunReport), crawler.get_extension(RunVerdict)
        assert report is not None and verdicts is not None
        first, second = ((report, verdicts) if next(iter(order)) is RunReport
                         else (verdicts, report))
        for extension in (first, second):
            closed = extension.spider_closed(Spider("t"), "finished")
            if asyncio.iscoroutine(closed):
                asyncio.run(closed)
        verdict = verdicts.verdict
        assert verdict is not None and announced == [verdict]
        assert report.report is not None and report.report["exit_code"] == verdict.exit_code
        assert json.loads((tmp_path / "report.json").read_text())["exit_reason"] == \
            verdict.reason
