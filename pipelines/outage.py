"""The crawl's side of an OpenSearch outage: pause, probe, then resume or give up.

When the writer hands a batch back (the cluster stayed unavailable through its
retries, or a disk past its flood stage made the indices read-only), ``OutageWatch``
pauses the crawl (``CrawlPause``), probes the cluster with the writer's backoff and
tells the index pipeline when it answers again (``on_back``) or when the outage
outlasted ``OPENSEARCH_OUTAGE_WAIT`` or the crawl was stopped by hand during it
(``on_give_up``). The pipeline keeps the held changes; this keeps the time.

``connect_patiently`` is the same patience at the start: a crawl that starts while a
node dies or a manager is elected starts; one that starts during a flood-stage block
waits as through an outage.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from opensearchpy import OpenSearch
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from pipelines.pause import CrawlPause
from scholarindex.core import stat_keys
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import (
    FLOOD_STAGE_HINT,
    is_disk_block,
    is_flood_stage_block,
    translate_errors,
)
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import read_only_indices
from scholarindex.indexing.outage import Outage

logger = logging.getLogger(__name__)


class OutageWatch:
    """One outage at a time: ``begin`` it, and it ends by itself, back or given up."""

    def __init__(self, crawler: Crawler, client: OpenSearch, prefix: str, safe_url: str,
                 policy: RetryPolicy, max_wait: float, *, on_back: Callable[[float], None],
                 on_give_up: Callable[[str], None]) -> None:
        self.crawler = crawler
        self.client = client
        self.prefix = prefix
        self.safe_url = safe_url
        self.policy = policy  # the probes' backoff
        self.max_wait = max_wait  # OPENSEARCH_OUTAGE_WAIT
        self.on_back = on_back  # called with the seconds paused, the crawl resumed
        self.on_give_up = on_give_up  # called with why, before the crawl resumes to close
        self.outage: Outage | None = None
        # The pipeline's last flush waits on the outage: stopped by hand then, give up.
        self.closing = False
        self._pause: CrawlPause | None = None  # made at the first outage (needs the engine)

    @property
    def active(self) -> bool:
        return self.outage is not None

    def begin(self, reason: str, holding: int) -> None:
        """The writer handed ``holding`` changes back for ``reason``: pause and probe."""
        if self.outage is not None:
            return
        blocked = is_flood_stage_block(reason)
        self.outage = Outage(time.monotonic(), self.max_wait, last_error=reason,
                             write_blocked=blocked)
        self.crawler.stats.inc_value(stat_keys.INDEX_PAUSES)
        if self._pause is None:
            self._pause = CrawlPause(self.crawler.engine)
        self._pause.pause()
        if blocked:
            logger.warning("OpenSearch at %s refuses writes: %s. Crawl paused, holding %d "
                           "change(s); checking until the block is lifted, for up to "
                           "OPENSEARCH_OUTAGE_WAIT=%gs (cause: %s)", self.safe_url,
                           FLOOD_STAGE_HINT, holding, self.max_wait, reason)
        else:
            logger.warning("OpenSearch at %s unavailable (%s): crawl paused, holding %d "
                           "change(s); probing until it answers, for up to "
                           "OPENSEARCH_OUTAGE_WAIT=%gs", self.safe_url, reason, holding,
                           self.max_wait)
        self._schedule_probe()

    def give_up_stopped(self) -> None:
        """Stopped by hand (Ctrl-C, SIGTERM) during the outage: do not wait for the cluster."""
        if self.outage is not None:
            self._give_up("the crawl was stopped while OpenSearch was unavailable: "
                          f"{self.outage.last_error}")

    def _schedule_probe(self) -> None:
        from twisted.internet import reactor

        assert self.outage is not None
        delay = self.outage.next_probe_in(self.policy, time.monotonic())
        probe = deferLater(reactor, delay, deferToThread, self._probe, self.outage.write_blocked)
        probe.addCallbacks(self._answered, self._failed,
                           callbackArgs=(self.outage,), errbackArgs=(self.outage,))
        probe.addErrback(log_failure)

    def _probe(self, write_blocked: bool) -> None:
        """Runs in a thread: does the cluster answer (``GET /``)? After a flood-stage
        block, has it been lifted from our indices too (the cluster answered throughout)?"""
        with translate_errors("GET /"):
            self.client.info()
        if write_blocked:
            blocked = read_only_indices(self.client, self.prefix)
            if blocked:
                raise IndexUnavailable(f"{len(blocked)} index(es) still read-only "
                                       f"({', '.join(blocked[:3])}): cluster_block_exception, "
                                       "flood-stage watermark", retryable=True)

    def _answered(self, _: Any, outage: Outage) -> None:
        if self.outage is not outage:
            return  # given up meanwhile
        paused = self._end(outage)
        assert self._pause is not None
        self._pause.resume()
        self.on_back(paused)

    def _failed(self, failure: Failure, outage: Outage) -> None:
        if self.outage is not outage:
            return  # given up meanwhile
        if not failure.check(IndexUnavailable):
            log_failure(failure)  # a bug in the probe: keep probing all the same
        outage.last_error = str(failure.value)
        assert self._pause is not None
        if not self.crawler.crawling:
            # Stopped by hand (Ctrl-C, SIGTERM): let the pages already queued finish, or
            # the engine waits for them forever; what they yield is held with the rest.
            self._pause.resume()
            if self.closing:  # the last flush waits for the cluster: not any more
                self.give_up_stopped()
                return
        if outage.expired(time.monotonic()):
            self.crawler.stats.set_value(stat_keys.INDEX_OUTAGE_EXPIRED, 1)  # exit 3, however
            self._give_up(f"OpenSearch unavailable for over OPENSEARCH_OUTAGE_WAIT="  # it closes
                          f"{self.max_wait:g}s: {outage.last_error}")
        else:
            self._schedule_probe()

    def _give_up(self, why: str) -> None:
        assert self.outage is not None and self._pause is not None
        self._end(self.outage)
        self.on_give_up(why)
        self._pause.resume()  # closing now: the queued pages finish, nothing new starts

    def _end(self, outage: Outage) -> float:
        """The outage is over, one way or the other: the seconds it paused the crawl."""
        self.outage = None
        paused = outage.lasted(time.monotonic())
        # inc_value is typed for whole numbers; the paused time is seconds to the ms.
        stats, key = self.crawler.stats, stat_keys.INDEX_PAUSED_SECONDS
        stats.set_value(key, stats.get_value(key, 0) + round(paused, 3))
        return paused


async def connect_patiently(connect: Callable[[], None], policy: RetryPolicy,
                            outage_wait: float, safe_url: str) -> None:
    """``connect`` in a thread, tried again with the writer's backoff while it fails in a
    way that passes (``INDEX_MAX_ATTEMPTS`` tries), and for up to ``outage_wait`` seconds
    while a disk past its flood stage blocks the indices' creation."""
    from twisted.internet import reactor

    blocked_since: float | None = None
    attempt = 0
    while True:
        attempt += 1
        try:
            await maybe_deferred_to_future(deferToThread(connect))
            return
        except IndexUnavailable as exc:
            if not exc.retryable:
                raise
            if is_disk_block(str(exc)):
                # The cluster refuses new indices (and writes) until it lifts the block,
                # minutes maybe: waited on as an outage is, not a few retries.
                now = time.monotonic()
                blocked_since = blocked_since if blocked_since is not None else now
                if now - blocked_since > outage_wait:
                    raise
                delay = policy.delay(min(attempt, policy.attempts))
                logger.warning("OpenSearch at %s refuses to create the indices (%s): %s; "
                               "waiting for the block to be lifted, trying again in %.1fs "
                               "(for up to OPENSEARCH_OUTAGE_WAIT=%gs)",
                               safe_url, exc, FLOOD_STAGE_HINT, delay, outage_wait)
            elif attempt >= policy.attempts:
                raise
            else:
                delay = policy.delay(attempt)
                logger.warning("OpenSearch at %s not ready (%s); trying again in %.1fs",
                               safe_url, exc, delay)
            await maybe_deferred_to_future(deferLater(reactor, delay, lambda: None))


def log_failure(failure: Failure) -> None:
    logger.error("index pipeline error: %s", failure.getTraceback())
