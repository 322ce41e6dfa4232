"""At the end of a crawl that finished, resolve the index's works (``indexing.resolution``).

Runs after the index pipeline has delivered everything (``spider_closed`` comes after
the pipelines closed), in a thread, so a scheduled ``scrapy crawl`` leaves one document
per paper without a second command. A crawl stopped early (Ctrl-C, a drained worker,
an OpenSearch outage) skips it: the next finished crawl, or ``scholarindex works
resolve``, resolves everything then. A pass that fails is logged and counted
(``resolution/error``); it never changes the run's exit status, since every document
is already delivered.

The pass is incremental (``ResolutionPass.run_pending``): it reads the works marked
changed since the last pass (by this crawl, a replay, an earlier crawl that stopped
early, another worker), their neighbours and the works those belong to, so its time
grows with the change, not the index; when most works are marked (a first crawl into an
empty index) it reads everything at once, the cheaper way there. ``scholarindex works
resolve --full`` always reads everything. Its figures go to the stats
(``resolution/...``) and, through ``finished``, to the run report's ``resolution``
(``crawler.extensions.report``).

Several workers of one distributed job each run it when they finish: one at a time
(``scholarindex.indexing.passlock``), the later one reading what the earlier left, so
two passes never regroup the same documents at once.
"""

from __future__ import annotations

import logging
import time

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from scholarindex.core import stat_keys
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import build_client, is_disk_block
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.resolution import ResolutionPass, ResolutionReport

logger = logging.getLogger(__name__)

STAT_PREFIX = "resolution/"


class WorkResolution:
    def __init__(self, crawler: Crawler, config: OpenSearchConfig, policy: RetryPolicy,
                 outage_wait: float = 0.0) -> None:
        self.crawler = crawler
        self.config = config
        self.policy = policy
        self.outage_wait = outage_wait  # OPENSEARCH_OUTAGE_WAIT: how long a disk block is waited on
        self._waiting: list[Deferred[None]] | None = None  # None: not started
        self._done = False
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WorkResolution:
        settings = crawler.settings
        if not settings.getbool("INDEX_ENABLED") or not settings.getbool("WORKS_RESOLVE"):
            raise NotConfigured("works are resolved only when indexing with WORKS_RESOLVE on")
        return cls(crawler, OpenSearchConfig.from_settings(settings),
                   RetryPolicy.from_settings(settings, "INDEX"),
                   settings.getfloat("OPENSEARCH_OUTAGE_WAIT"))

    def finished(self, reason: str) -> Deferred[None]:
        """Fires once the crawl's pass is over (or skipped), its figures in the stats.

        The first caller starts the pass (this extension's ``spider_closed``, or the run
        report, which waits for it); each caller gets a Deferred of its own."""
        waiter: Deferred[None] = Deferred()
        if self._done:
            waiter.callback(None)
            return waiter
        starting = self._waiting is None
        self._waiting = [*(self._waiting or ()), waiter]
        if starting:
            deferred_from_coro(self._resolve(reason)).addBoth(self._release)
        return waiter

    def _release(self, result: object) -> None:
        self._done = True
        if isinstance(result, Failure):  # a bug, not the cluster: IndexUnavailable is handled
            logger.error("resolving works failed: %s", result.getTraceback())
            self.crawler.stats.set_value(f"{STAT_PREFIX}error", result.getErrorMessage())
        for waiter in self._waiting or ():
            waiter.callback(None)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        await maybe_deferred_to_future(self.finished(reason))

    async def _resolve(self, reason: str) -> None:
        stats = self.crawler.stats
        if reason != "finished" or stats.get_value(stat_keys.INDEX_ERROR):
            logger.info("works not resolved: the crawl did not finish (%s)", reason)
            return
        from twisted.internet import reactor

        attempt = 0
        began = time.monotonic()
        while True:
            attempt += 1
            try:
                report = await maybe_deferred_to_future(deferToThread(self._run))
                break
            except IndexUnavailable as exc:
                # A node that died mid-pass fails its shards' reads for the seconds its
                # replicas take to be promoted: the pass is run again, as a write is. A
                # disk's flood-stage blocks (the pass creates its lock index) last minutes:
                # waited on as an outage is.
                waiting = (is_disk_block(str(exc))
                           and time.monotonic() - began < self.outage_wait)
                if exc.retryable and (attempt < self.policy.attempts or waiting):
                    delay = self.policy.delay(min(attempt, self.policy.attempts))
                    logger.warning("resolving works failed (%s); trying again in %.1f s",
                                   exc, delay)
                    stats.inc_value(f"{STAT_PREFIX}retries")
                    await maybe_deferred_to_future(deferLater(reactor, delay, lambda: None))
                    continue
                logger.error("resolving works failed (the next finished crawl or "
                             "`scholarindex works resolve` will): %s", exc)
                stats.set_value(f"{STAT_PREFIX}error", str(exc))
                return
        for key, value in report.as_dict().items():
            stats.set_value(f"{STAT_PREFIX}{key}", value)
        logger.info("works resolved (%s) in %.1f s: %d documents read, %d marked changed, "
                    "%d works; %d group(s) regrouped, %d left for the next pass", report.mode,
                    report.seconds, report.documents, report.pending, report.works,
                    report.groups_changed, report.conflicts)

    def _run(self) -> ResolutionReport:
        client = build_client(self.config)
        try:
            return ResolutionPass(client, self.config.prefix, self.policy,
                                  self.config.layout).run_pending()
        finally:
            client.close()
