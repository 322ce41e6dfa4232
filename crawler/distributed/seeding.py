"""Spider middleware: the URL list goes into the job's queue once per run.

Every worker runs the same command, so every worker's ``start()`` yields the whole
list. The first workers of a run queue all of it in Redis straight away, in batches
(a few hundred URLs a round trip, not one URL per engine cycle; the seen-set in Redis
drops the copies, so two workers seeding at once is harmless), and mark the run seeded
once the last one is queued; the engine then takes them back from Redis like any
other request. A worker that joins a seeded run consumes ``start()`` (the spider
counts the list) without queueing anything. Until
the run is seeded no worker treats an empty queue as the end of the job, so a seeding
worker that dies half-way leaves the list to the next one.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future

from crawler.distributed.scheduler import RedisScheduler

logger = logging.getLogger(__name__)


class SeedOnce:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeedOnce:
        return cls(crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        scheduler = self.crawler.engine.scheduler
        if not isinstance(scheduler, RedisScheduler):  # SCHEDULER set by hand
            async for request in start:
                yield request
            return
        if await maybe_deferred_to_future(scheduler.is_seeded()):
            async for _ in start:
                pass
            logger.info("job %s: the URL list is already queued; taking from the shared queue",
                        scheduler.keys.job)
            return
        async for output in start:
            if isinstance(output, Request):
                scheduler.enqueue_request(output)
            else:  # an item from start(): the engine's to pass on
                yield output
        await maybe_deferred_to_future(scheduler.seeded())
