"""The record counts and the run report share one receiver of Scrapy's item signals."""

from __future__ import annotations

import logging

import pytest
from pydispatch.dispatcher import getAllReceivers, liveReceivers
from scrapy import signals
from scrapy.utils.test import get_crawler

from crawler.extensions.itemsignals import ItemSignals
from crawler.extensions.records import RecordCounts
from crawler.extensions.report import RunReport
from scholarindex.core.items import PageItem, ResearcherItem, WorkItem

PAGE = PageItem(ResearcherItem(id="r", url="https://site/r", name="R"),
                [WorkItem(work_id=w, title=w, researcher_id="r", researcher_name="R")
                 for w in ("a", "b", "a")])


def _receivers(crawler, signal) -> list:
    return list(liveReceivers(getAllReceivers(crawler.signals.sender, signal)))


def test_records_and_report_count_through_one_receiver() -> None:
    crawler = get_crawler()
    crawler.stats.open_spider()
    before = {s: len(_receivers(crawler, s)) for s in (signals.item_scraped,
                                                       signals.item_dropped)}
    RecordCounts(crawler)
    report = RunReport(crawler, "")
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


def test_a_failing_callback_is_logged_and_the_others_still_run(
        caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler()
    seen: list[object] = []

    def broken(**_: object) -> None:
        raise RuntimeError("bug")

    hub = ItemSignals.of(crawler)
    assert ItemSignals.of(crawler) is hub
    hub.connect(broken, signals.item_scraped)
    hub.connect(lambda item, **_: seen.append(item), signals.item_scraped)
    with caplog.at_level(logging.ERROR, logger="crawler.extensions.itemsignals"):
        crawler.signals.send_catch_log(signals.item_scraped, item=PAGE, response=None,
                                       spider=None)
    assert seen == [PAGE]
    assert "Error caught on signal handler" in caplog.text
