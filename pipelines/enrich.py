"""ArxivEnrichPipeline: arXiv metadata for work items, without ever holding up the crawl.

A work item whose title the cache knows gets its enrichment at once, before
indexing. Any other passes on immediately, marked ``enrichment = {"status":
"pending", "reason": "queued"}``, while the background ``Enricher`` looks it up
in batches; the answer arrives later as the ``work_enriched`` signal (sent on
the reactor thread), which the index pipeline turns into an update.

The crawl hands it one ``PageItem`` a page: the page's listings are submitted
together (``Enricher.submit_many``: one read of the stored answers and one of the
cache for the page). A single work item is enriched the same way, alone.

When the crawl runs out of pages while lookups are outstanding, the spider is
kept open (``DontCloseSpider``) and the partial batch is sent, for as long as
answers keep coming: the crawl gives up after ``ARXIV_IDLE_WAIT_SECONDS``
without one, and whatever is left is reported "pending" with the reason.

Stats: ``arxiv/requests``, ``arxiv/retries``, ``arxiv/bad_queries`` (HTTP
requests made; retried; refused as malformed), ``arxiv/cache_hits`` and
``arxiv/cache_misses`` (work items answered from the cache or queued),
``arxiv/mirror_answers`` (titles the local arXiv mirror answered), and
``arxiv/matched``, ``arxiv/unmatched``, ``arxiv/pending``: distinct works by
their latest answer (a work answered twice moves between them, so "pending" at
the end is what ``scholarindex enrich --pending`` has left to do). The Enricher
keeps them, exact for the whole run: it already stores every answered work on
disk (see ``scholarindex.enrichment.service``), so counting needs no per-work memory here.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Mapping
from functools import reduce
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured

from crawler.cpu import CpuTally
from crawler.signals import lookups_adopted, work_enriched
from scholarindex.core import stat_keys
from scholarindex.core.enrichment_status import PENDING, QUEUED
from scholarindex.core.items import PageItem, WorkItem
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.models import Listing, Outcome, listing_from_item
from scholarindex.enrichment.ratelimit import effective_delay
from scholarindex.enrichment.service import Enricher, start_enricher
from scholarindex.indexing.shapes import Enrichment

logger = logging.getLogger(__name__)


def enrichment_fields(outcome: Outcome) -> dict[str, Any]:
    """The item fields an outcome sets: ``arxiv`` (metadata or None) and ``enrichment``."""
    enrichment: Enrichment = {"status": outcome.status, "reason": outcome.reason}
    if outcome.checked_at:
        enrichment["updated_at"] = outcome.checked_at
    return {"arxiv": outcome.arxiv, "enrichment": enrichment}


def _fields(listing: Any) -> Mapping[str, Any]:
    """A work item's fields as a mapping (a WorkItem's own attribute dict: no copy)."""
    return vars(listing) if isinstance(listing, WorkItem) else listing


class ArxivEnrichPipeline:
    """Attaches verified arXiv metadata to work items; see the module doc."""

    def __init__(self, crawler: Crawler, config: EnrichmentConfig) -> None:
        self.crawler = crawler
        self.config = config
        self._enricher: Enricher | None = None
        self._last_progress = time.monotonic()
        self._warned_fields = False
        # Answers from the worker thread, delivered on the reactor thread. Drained before
        # any decision to close, so an answer handed over is never left behind.
        self._answers: deque[Outcome] = deque()
        self.cpu = CpuTally("enrichment")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArxivEnrichPipeline:
        if not crawler.settings.getbool("ARXIV_ENABLED"):
            raise NotConfigured("arXiv enrichment is off (ARXIV_ENABLED=false)")
        pipeline = cls(crawler, EnrichmentConfig.from_settings(crawler.settings))
        crawler.signals.connect(pipeline.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(pipeline.adopt, signal=lookups_adopted)
        return pipeline

    # --- lifecycle -------------------------------------------------------------------

    def open_spider(self) -> None:
        self._enricher = start_enricher(self.config, on_result=self._from_worker,
                                        on_event=self._from_worker_event)
        logger.info("arXiv enrichment on: %s, %.1f s between requests, cache in %s",
                    self.config.api_url,
                    effective_delay(self.config.api_url, self.config.delay_seconds),
                    self.config.cache_dir)

    def close_spider(self) -> None:
        self.cpu.publish(self.crawler.stats)
        if self._enricher is None:
            return
        self._drain()
        for outcome in self._enricher.close("the crawl ended before the arXiv lookup finished"):
            self._deliver(outcome)
        self._count()

    def spider_idle(self) -> None:
        """Keep the crawl open while lookups are outstanding and answers keep coming."""
        self._drain()
        if self._enricher is None or not self._enricher.outstanding():
            return
        waited = time.monotonic() - self._last_progress
        if waited < self.config.idle_wait_seconds:
            self._enricher.flush()
            raise DontCloseSpider
        reason = (f"no arXiv answer for {waited:.0f} s after the crawl went idle "
                  f"(ARXIV_IDLE_WAIT_SECONDS={self.config.idle_wait_seconds:g})")
        logger.warning("giving up on %d arXiv lookups: %s", self._enricher.outstanding(), reason)
        for outcome in self._enricher.close(reason):
            self._deliver(outcome)
        self._count()

    # --- items (reactor thread) -------------------------------------------------------

    def process_item(self, item: Any) -> Any:
        if self._enricher is None:
            return item
        with self.cpu.measure():
            if isinstance(item, PageItem):  # the crawl's item: a page, all its listings at once
                self._enrich(item.works, item.works)
            elif ItemAdapter(item).get("kind") == "work":
                self._enrich([ItemAdapter(item).asdict()], [item])
        return item

    def _enrich(self, listings: list[Any], items: list[Any]) -> None:
        """Submit the listings (work items or their fields) and attach what the cache knows."""
        if not listings:
            return
        self._last_progress = time.monotonic()
        # Set at open_spider, before any item arrives.
        outcomes = self._enricher.submit_many(  # type: ignore[union-attr]
            [listing_from_item(_fields(listing)) for listing in listings])
        hits = 0
        for item, outcome in zip(items, outcomes, strict=True):
            if outcome is None:
                self._attach(item, {"arxiv": None,
                                    "enrichment": {"status": PENDING, "reason": QUEUED}})
            else:
                hits += 1
                self._attach(item, enrichment_fields(outcome))
        if hits:
            self._inc(stat_keys.ARXIV_CACHE_HITS, hits)
            self._count()
        if hits < len(outcomes):
            self._inc(stat_keys.ARXIV_CACHE_MISSES, len(outcomes) - hits)

    def _attach(self, item: Any, values: dict[str, Any]) -> None:
        if isinstance(item, WorkItem):  # declares both fields
            item.arxiv, item.enrichment = values["arxiv"], values["enrichment"]
            return
        adapter = ItemAdapter(item)
        for name, value in values.items():
            if name in adapter.field_names():
                adapter[name] = value
            else:  # an item class that does not declare the field yet: still carry it
                if not self._warned_fields:
                    logger.warning("%s declares no %r field; set as an attribute, not exported",
                                   type(item).__name__, name)
                    self._warned_fields = True
                setattr(item, name, value)

    def adopt(self, evidence: list[dict[str, Any]]) -> None:
        """Look up works another worker queued and died before answering (the distributed
        crawl, ``lookups_adopted``); every answer goes to the index as ``work_enriched``."""
        if self._enricher is None or not evidence:
            return
        listings = [reduce(Listing.merged, map(listing_from_item, value["listings"]))
                    for value in evidence]
        self._last_progress = time.monotonic()
        logger.info("looking up %d work(s) a dead worker of the job left unanswered",
                    len(listings))
        for outcome in self._enricher.submit_many(listings):
            if outcome is not None:
                self._deliver(outcome)

    # --- answers from the worker thread ----------------------------------------------

    def _from_worker(self, outcome: Outcome) -> None:
        from twisted.internet import reactor  # the reactor Scrapy installed, not a default one

        self._answers.append(outcome)  # before the Enricher stops counting it as outstanding
        reactor.callFromThread(self._drain)

    def _drain(self) -> None:
        while self._answers:
            self._deliver(self._answers.popleft())

    def _from_worker_event(self, key: str, count: int) -> None:
        from twisted.internet import reactor

        reactor.callFromThread(self._inc, key, count)

    def _deliver(self, outcome: Outcome) -> None:
        """On the reactor thread: count the answer and signal it to the index."""
        self._last_progress = time.monotonic()
        self._count()
        self.crawler.signals.send_catch_log(signal=work_enriched, work_id=outcome.work_id,
                                            arxiv=outcome.arxiv, status=outcome.status,
                                            reason=outcome.reason, updated_at=outcome.checked_at)

    def _count(self) -> None:
        """Copy the Enricher's distinct works per status into the stats."""
        if self._enricher is None or self.crawler.stats is None:
            return
        for status, works in self._enricher.counts().items():
            self.crawler.stats.set_value(stat_keys.ARXIV_BY_STATUS[status], works)

    def _inc(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)
