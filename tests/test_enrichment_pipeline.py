"""ArxivEnrichPipeline inside real Scrapy crawls, against the stand-in arXiv API.

Each crawl runs in this process (``tests.support.crawl``). The spider hands out
the seed and held-out listings a page at a time; a recording pipeline after ours
logs what items carried when they passed, a signal handler logs
``work_enriched``, a LoopingCall ticking every 50 ms shows when the reactor
thread ran, and every HTTP request to arXiv is logged with its thread and times.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import scrapy
from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from twisted.internet.task import LoopingCall
from twisted.python import threadable

from core.identity import work_id
from core.items import ResearcherItem, WorkItem
from pipelines.enrich import ArxivEnrichPipeline
from pipelines.signals import work_enriched
from standins.arxiv import ARXIV_ID_OF_SEED, ArxivStandIn, profile_works
from tests.support.crawl import run_spider
from tests.support.settings import settings_with

EXPECTED = {work_id(title): arxiv_id for title, arxiv_id in ARXIV_ID_OF_SEED.items()}
WORKS = profile_works()
DISTINCT = len({work_id(w["title"]) for w in WORKS})


@dataclass
class EnrichableWork(WorkItem):
    """WorkItem with the two fields this stage asks to add to it."""

    arxiv: dict | None = None
    enrichment: dict | None = None


class ListingSpider(scrapy.Spider):
    """Yields each fixture page's listings, one page every 50 ms, like a crawl parsing pages."""

    name = "listings"

    async def start(self):  # type: ignore[override]
        pages: dict[str, list[dict]] = {}
        for work in WORKS:
            pages.setdefault(work["page"], []).append(work)
        for page, works in pages.items():
            yield ResearcherItem(id=page, url=f"http://site.test/{page}",
                                 name=works[0]["researcher_name"] or "")
            for i, work in enumerate(works, 1):
                yield EnrichableWork(work_id=work_id(work["title"]), title=work["title"],
                                     researcher_id=page, researcher_name=work["researcher_name"],
                                     year=work["year"], authors=work["authors"] or None,
                                     position=i)
            await asyncio.sleep(0.05)


class Recorder:
    """Logs items, signals and reactor ticks; ``report`` holds them once the spider closed."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.items: list[dict] = []
        self.signals: list[dict] = []
        self.ticks: list[float] = []
        self.ticker = LoopingCall(lambda: self.ticks.append(time.monotonic()))
        self.report: dict[str, Any] = {}
        crawler.signals.connect(self.on_enriched, signal=work_enriched)
        crawler.signals.connect(self.on_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Recorder:
        return cls(crawler)

    def open_spider(self) -> None:
        self.ticker.start(0.05)

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        self.items.append({"kind": adapter["kind"], "work_id": adapter.get("work_id"),
                           "enrichment": adapter.get("enrichment"),
                           "arxiv_id": (adapter.get("arxiv") or {}).get("id"),
                           "at": time.monotonic()})
        return item

    def on_enriched(self, work_id: str, arxiv: dict | None, status: str, reason: str,
                    updated_at: str | None) -> None:
        self.signals.append({"work_id": work_id, "status": status, "reason": reason,
                             "updated_at": updated_at,
                             "arxiv_id": (arxiv or {}).get("id"),
                             "on_reactor": threadable.isInIOThread(),
                             "at": time.monotonic()})

    def on_closed(self, spider: scrapy.Spider, reason: str) -> None:
        if self.ticker.running:
            self.ticker.stop()
        self.report = {"items": self.items, "signals": self.signals, "ticks": self.ticks,
                       "reason": reason, "closed_at": time.monotonic(),
                       "stats": {k: v for k, v in self.crawler.stats.get_stats().items()
                                 if isinstance(v, int | float | str)}}


def crawl(api: ArxivStandIn, cache_dir: Path, **overrides: Any) -> dict:
    # The enrichment's own settings as declared; none of the project's other components.
    declared = settings_with()
    settings = {
        **{name: declared[name] for name in declared
           if name.startswith("ARXIV_") or name == "USER_AGENT"},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "ITEM_PIPELINES": {"pipelines.enrich.ArxivEnrichPipeline": 300,
                           f"{__name__}.Recorder": 900},
        "ARXIV_ENABLED": "true", "ARXIV_API_URL": api.api_url,
        "ARXIV_DELAY_SECONDS": 0.2, "ARXIV_CACHE_DIR": str(cache_dir),
        "ARXIV_BACKOFF_SECONDS": 0.05, "ARXIV_BACKOFF_MAX_SECONDS": 0.2,
        "ARXIV_TIMEOUT_SECONDS": 2, "TELNETCONSOLE_ENABLED": False, **overrides,
    }
    result = run_spider(ListingSpider, settings, timeout=60)
    recorder = result.crawler.get_item_pipeline(Recorder)
    assert recorder is not None
    return recorder.report


@dataclass
class HttpCall:
    start: float
    on_reactor: bool
    end: float | None = None  # None while it has not returned


@pytest.fixture
def arxiv_calls(monkeypatch: pytest.MonkeyPatch) -> list[HttpCall]:
    """Every HTTP request the enrichment makes (through requests), as it happens."""
    calls: list[HttpCall] = []
    request = requests.Session.request

    def logged(self: requests.Session, *args: Any, **kwargs: Any) -> Any:
        call = HttpCall(time.monotonic(), threadable.isInIOThread())
        calls.append(call)
        try:
            return request(self, *args, **kwargs)
        finally:
            call.end = time.monotonic()

    monkeypatch.setattr(requests.Session, "request", logged)
    return calls


@pytest.fixture
def arxiv_api() -> Iterator[ArxivStandIn]:
    with ArxivStandIn(hang_seconds=10) as server:
        yield server


def final_outcomes(report: dict) -> dict[str, dict]:
    """The last word on every work: a signal if one came, else what its item carried."""
    final: dict[str, dict] = {}
    for item in report["items"]:
        if item["kind"] == "work":
            final[item["work_id"]] = {**item["enrichment"], "arxiv_id": item["arxiv_id"]}
    for signal in report["signals"]:
        final[signal["work_id"]] = signal
    return final


def test_cold_crawl_enriches_in_background_and_warm_crawl_asks_nothing(
        arxiv_api: ArxivStandIn, arxiv_calls: list[HttpCall], tmp_path: Path) -> None:
    report = crawl(arxiv_api, tmp_path / "cache", ARXIV_DELAY_SECONDS=0.5)
    works = [i for i in report["items"] if i["kind"] == "work"]
    assert len(works) == len(WORKS)
    # Cold: a work item passes on at once, marked pending, unless a batch earlier in this
    # crawl already brought its title into the cache (a later profile listing it too).
    queued = [i for i in works if i["enrichment"] == {"status": "pending", "reason": "queued"}]
    answered = [i for i in works if i["enrichment"]["status"] in {"done", "none"}]
    assert len(queued) + len(answered) == len(works)
    assert len(queued) > len(works) / 2
    first_answer = min(s["at"] for s in report["signals"])
    assert first_answer < works[-1]["at"]  # the first batch was answered while parsing went on
    assert all(s["on_reactor"] for s in report["signals"])
    # Answers: the right id for every paper on arXiv, none for the others.
    final = final_outcomes(report)
    assert len(final) == DISTINCT
    for wid, outcome in final.items():
        assert outcome["arxiv_id"] == EXPECTED.get(wid), outcome
        assert outcome["status"] == ("done" if wid in EXPECTED else "none")
    assert arxiv_api.request_count * 10 <= DISTINCT
    # The lookups, and the 0.5 s waits between them, kept off the reactor thread.
    assert len(arxiv_calls) == arxiv_api.request_count
    assert not any(call.on_reactor for call in arxiv_calls)
    stats = report["stats"]
    assert stats["arxiv/requests"] == arxiv_api.request_count
    assert stats["arxiv/cache_misses"] == len(queued)
    assert stats.get("arxiv/cache_hits", 0) == len(answered)
    assert stats["arxiv/matched"] == len(EXPECTED)
    assert stats["arxiv/unmatched"] == DISTINCT - len(EXPECTED)
    assert "arxiv/pending" not in stats

    arxiv_api.reset()
    warm = crawl(arxiv_api, tmp_path / "cache")
    assert arxiv_api.request_count == 0
    assert warm["signals"] == []
    for item in warm["items"]:
        if item["kind"] == "work":
            assert item["arxiv_id"] == EXPECTED.get(item["work_id"])
            assert item["enrichment"]["status"] in {"done", "none"}
            # answered as of the same moment as in the first crawl: the index stays as it was
            assert item["enrichment"]["updated_at"] == final[item["work_id"]]["updated_at"]
    assert warm["stats"]["arxiv/cache_hits"] == len(WORKS)


def test_outage_indexes_everything_pending_with_the_reason(arxiv_api: ArxivStandIn,
                                                           tmp_path: Path) -> None:
    arxiv_api.fail_next("503", times=1000)
    report = crawl(arxiv_api, tmp_path / "cache", ARXIV_MAX_ATTEMPTS=2)
    assert report["reason"] == "finished"
    assert len([i for i in report["items"] if i["kind"] == "work"]) == len(WORKS)
    final = final_outcomes(report)
    assert {o["status"] for o in final.values()} == {"pending"}
    assert all("HTTP 503" in o["reason"] for o in final.values())
    assert report["stats"]["arxiv/pending"] == DISTINCT
    assert arxiv_api.request_count == 2


def test_crawl_gives_up_waiting_for_a_hung_arxiv(arxiv_api: ArxivStandIn,
                                                 arxiv_calls: list[HttpCall],
                                                 tmp_path: Path) -> None:
    arxiv_api.fail_next("hang", times=1000)  # no answer until the stand-in closes
    report = crawl(arxiv_api, tmp_path / "cache",
                   ARXIV_TIMEOUT_SECONDS=30, ARXIV_IDLE_WAIT_SECONDS=1)
    assert report["reason"] == "finished"
    # The crawl closed while the request still hung: it did not wait for an answer.
    assert arxiv_calls
    assert all(call.end is None or call.end > report["closed_at"] for call in arxiv_calls)
    final = final_outcomes(report)
    assert {o["status"] for o in final.values()} == {"pending"}
    assert any("ARXIV_IDLE_WAIT_SECONDS" in o["reason"] for o in final.values())
    # A hung request never touched the reactor: it hung on another thread while the
    # reactor went on ticking.
    assert not any(call.on_reactor for call in arxiv_calls)
    assert any(arxiv_calls[0].start < tick for tick in report["ticks"])


def test_switched_off_is_not_configured() -> None:
    crawler = get_crawler(settings_dict={"ARXIV_ENABLED": "false"})
    with pytest.raises(NotConfigured):
        ArxivEnrichPipeline.from_crawler(crawler)
