"""``CrawlStats``: Scrapy's in-memory stats collector, without its per-read wrapper.

Scrapy wraps every stats method to warn when a caller still passes the deprecated
``spider`` argument, in a ``__getattribute__`` that runs on every attribute read of
the collector (its own ``_stats`` dict included) and, for each name it has not
wrapped, raises and catches an ``AttributeError``; a crawl calls its stats dozens of
times a page on the reactor thread (what that costs: docs/performance.md). This is
Scrapy's ``MemoryStatsCollector`` with plain attribute reads: the same stats, and no
deprecation warning for a ``spider`` argument (nothing in the project passes one).
"""

from __future__ import annotations

from scrapy.statscollectors import MemoryStatsCollector


class CrawlStats(MemoryStatsCollector):
    __getattribute__ = object.__getattribute__
