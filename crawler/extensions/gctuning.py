"""Run Python's cyclic garbage collector less often during a crawl.

A crawl allocates a burst of short-lived objects per page (the parse tree's
proxies, items, changes) while it holds long-lived state (Scrapy's queues, the
index buffer, caches). With the default first-generation threshold (700
allocations) the collector runs hundreds of times a page, and its older
generations keep re-walking the long-lived state (what that costs a crawl:
docs/performance.md). ``GC_THRESHOLDS`` sets
``gc.set_threshold`` until the engine stops; empty leaves Python's defaults.
"""

from __future__ import annotations

import gc
import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)


class GcTuning:
    def __init__(self, thresholds: tuple[int, ...]) -> None:
        self.thresholds = thresholds
        self.previous = gc.get_threshold()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GcTuning:
        values = crawler.settings.getlist("GC_THRESHOLDS")
        if not values:
            raise NotConfigured
        try:
            thresholds = tuple(int(v) for v in values)
            tuning = cls(thresholds)
            gc.set_threshold(*thresholds)
        except (TypeError, ValueError) as exc:
            logger.warning("GC_THRESHOLDS=%r ignored: %s", values, exc)
            raise NotConfigured from exc
        crawler.signals.connect(tuning.engine_stopped, signal=signals.engine_stopped)
        return tuning

    def engine_stopped(self) -> None:
        """Put the defaults back (a process may run more than a crawl, tests do)."""
        gc.set_threshold(*self.previous)
