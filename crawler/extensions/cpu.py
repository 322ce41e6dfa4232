"""``CpuAccounting``: the crawl's CPU time between spider open and close, in the stats.

``cpu/main_thread_seconds``: the reactor thread (fetching, parsing, Scrapy's item
machinery, the pipelines' own work); ``cpu/process_seconds``: every thread of the
crawl's process. The stages' shares are recorded by the components themselves
(``crawler.cpu``); the benchmark sets them against these totals.
"""

from __future__ import annotations

import time

from scrapy import signals
from scrapy.crawler import Crawler

from scholarindex.core import stat_keys


class CpuAccounting:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        self._thread = self._process = 0.0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CpuAccounting:
        return cls(crawler)

    def spider_opened(self) -> None:
        self._thread, self._process = time.thread_time(), time.process_time()

    def spider_closed(self) -> None:
        self.stats.set_value(stat_keys.CPU_MAIN_THREAD_SECONDS,
                             round(time.thread_time() - self._thread, 4))
        self.stats.set_value(stat_keys.CPU_PROCESS_SECONDS,
                             round(time.process_time() - self._process, 4))
