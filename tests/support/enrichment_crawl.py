"""A real Scrapy crawl through the arXiv enrichment stage, recorded: the harness of the
enrichment crawl tests.

``ListingSpider`` hands out the seed and held-out listings a page at a time; the
``Recorder`` pipeline after ours logs what items carried when they passed, a signal
handler logs ``work_enriched``, and a LoopingCall ticking every 50 ms shows when the
reactor thread ran. ``crawl`` runs it in this process (``tests.support.crawl``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import scrapy
from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler
from twisted.internet.task import LoopingCall
from twisted.python import threadable

from crawler.signals import work_enriched
from scholarindex.core.identity import work_id
from scholarindex.core.items import ResearcherItem, WorkItem
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

    async def start(self) -> AsyncIterator[Any]:
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
           if name.startswith(("ARXIV_", "REDIS_")) or name == "USER_AGENT"},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "ITEM_PIPELINES": {"pipelines.enrich.ArxivEnrichPipeline": 300,
                           "tests.support.enrichment_crawl.Recorder": 900},
        "ARXIV_ENABLED": "true", "ARXIV_API_URL": api.api_url,
        "ARXIV_DELAY_SECONDS": 0.2, "ARXIV_CACHE_DIR": str(cache_dir),
        "ARXIV_BACKOFF_SECONDS": 0.05, "ARXIV_BACKOFF_MAX_SECONDS": 0.2,
        "ARXIV_TIMEOUT_SECONDS": 2, "TELNETCONSOLE_ENABLED": False, **overrides,
    }
    result = run_spider(ListingSpider, settings, timeout=60)
    recorder = result.crawler.get_item_pipeline(Recorder)
    assert recorder is not None
    return recorder.report


def final_outcomes(report: dict) -> dict[str, dict]:
    """The last word on every work: a signal if one came, else what its item carried."""
    final: dict[str, dict] = {}
    for item in report["items"]:
        if item["kind"] == "work":
            final[item["work_id"]] = {**item["enrichment"], "arxiv_id": item["arxiv_id"]}
    for signal in report["signals"]:
        final[signal["work_id"]] = signal
    return final
