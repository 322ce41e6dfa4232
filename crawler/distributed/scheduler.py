"""The Redis scheduler: this worker's window on the job's shared frontier.

Requests the crawl makes (the URL list, followed links) are pushed to the job's queue
in Redis, where the seen-set drops those queued before by any worker. The engine's
``next_request`` takes from Redis with a lease (a few at a time, ``REDIS_TAKE_BATCH``);
a retry or redirect of a leased request stays in this worker under the same lease.
A page is acknowledged when it is done (``tracking``: output consumed, items through
the pipelines) and, with indexing on, only once the index pipeline has delivered the
flush that holds its items (``index_delivered``): a worker killed before that leaves
the lease to expire, and another worker does the page again. Leases held are renewed
every third of ``REDIS_LEASE_SECONDS``, with a heartbeat naming this worker.

Idle: the spider closes only when Redis says the job is done (the URL list seeded,
nothing queued, nothing leased by anyone); while another worker's lease may still
expire, this one waits and takes it. At close (the end, or a drain by SIGTERM), done
pages are acknowledged and the requests taken but not done go back to the front of
the queue; the first worker to find the job done marks the run finished.

Redis calls run on the reactor thread (each is one short round trip); while Redis is
unreachable they are retried for up to ``REDIS_RETRY_SECONDS`` (``distributed.connection``),
and the crawl waits.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import time
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.request import request_from_dict
from twisted.internet.task import LoopingCall

from core import stat_keys
from core.flags import as_bool
from crawler.distributed.tracking import FP_META, PageTracker
from crawler.extensions.job import safe_name
from crawler.spiders.profiles import read_url_list
from distributed.connection import RedisConfig, RedisLink, RedisUnavailable
from distributed.frontier import Frontier, FrontierState
from distributed.jobs import definition_digest, finish, heartbeat, join, leave, worker_id
from distributed.keys import JobKeys
from pipelines.signals import index_delivered, index_ticket

logger = logging.getLogger(__name__)

INDEX_PIPELINE = "pipelines.index.OpenSearchIndexPipeline"
# The close reason when Redis stayed unreachable: the verdict makes it exit 3.
CLOSE_REASON = "redis_unavailable"
_PUSH_BATCH = 500
_SCHEDULERS: WeakKeyDictionary[Crawler, RedisScheduler] = WeakKeyDictionary()


class JobRefused(RuntimeError):
    """A run of the job with a different URL list is in progress."""


def job_definition(urls: str | None, url_file: str | None, follow: Any) -> str:
    """The definition digest for the spider arguments, as the spider will read them."""
    given = [u.strip() for u in (urls or "").split(",") if u.strip()]
    if url_file:
        given += read_url_list(Path(url_file).read_text(encoding="utf-8"))
    return definition_digest(given, as_bool(follow or False))


def serialize(request: Request, spider: Spider) -> bytes:
    return pickle.dumps(request.to_dict(spider=spider), protocol=4)


def deserialize(payload: bytes, spider: Spider) -> Request:
    return request_from_dict(pickle.loads(payload), spider=spider)


class RedisScheduler:
    def __init__(self, crawler: Crawler, config: RedisConfig, take_batch: int,
                 max_deliveries: int) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.take_batch = max(take_batch, 1)
        self.keys = JobKeys(config.key_prefix, safe_name(str(crawler.settings["RUN_JOB"])))
        self.link = RedisLink.from_config(config)
        self.worker = worker_id()
        self.frontier = Frontier(self.link, self.keys, self.worker, config.lease_seconds,
                                 max_deliveries)
        pipelines = crawler.settings.getwithbase("ITEM_PIPELINES")
        # With the index on, a page is acknowledged when its items are in the index.
        self.wait_for_index = (crawler.settings.getbool("INDEX_ENABLED")
                               and pipelines.get(INDEX_PIPELINE) is not None)
        self.run_id = ""
        self._local: deque[Request] = deque()  # taken (leased), not yet handed to the engine
        self._pushes: list[tuple[str, bytes, bool]] = []
        self._held: set[str] = set()  # leased by this worker, not acknowledged
        self._waiting: list[tuple[str, int, float]] = []  # (page, index ticket, done at)
        self._delivered = 0  # the last index flush delivered (index_delivered)
        self._acks: list[str] = []
        self._idle_since: float | None = None  # the engine found nothing to do since
        self._said_waiting = 0.0  # when the log last said what this worker waits for
        self._last_state: FrontierState | None = None
        self._closing = False
        self._unavailable = False  # Redis stayed away past REDIS_RETRY_SECONDS
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._ticker: LoopingCall | None = None
        self.tracker = PageTracker.of(crawler)
        self.tracker.on_done = self._page_done
        crawler.signals.connect(self._idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_delivered, signal=index_delivered)
        _SCHEDULERS[crawler] = self

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        settings = crawler.settings
        if not settings.get("RUN_JOB"):
            raise ValueError("the distributed crawl needs a job name: -a job=NAME or "
                             "-s RUN_JOB=NAME (the crawl command sets it)")
        return cls(crawler, RedisConfig.from_settings(settings),
                   settings.getint("REDIS_TAKE_BATCH"), settings.getint("REDIS_MAX_DELIVERIES"))

    @classmethod
    def of(cls, crawler: Crawler) -> RedisScheduler | None:
        return _SCHEDULERS.get(crawler)

    # --- Scrapy's scheduler interface ---------------------------------------------------

    def open(self, spider: Spider) -> None:
        definition = definition_digest(getattr(spider, "start_urls", []) or [],
                                       bool(getattr(spider, "follow", False)))
        joined = join(self.link, self.keys, definition,
                      str(self.crawler.settings.get("REDIS_RUN_ID") or ""))
        if joined.refused:
            raise JobRefused(f"job {self.keys.job} is running with a different URL list")
        self.run_id = joined.run_id
        self.stats.set_value(stat_keys.RUN_JOB, self.keys.job)
        self.stats.set_value(stat_keys.RUN_ID, self.run_id)
        self.stats.set_value(stat_keys.RUN_RESUMED, joined.outcome == "joined")
        self.stats.set_value(stat_keys.RUN_WORKER, self.worker)
        for key in (stat_keys.FRONTIER_PUSHED, stat_keys.FRONTIER_TAKEN,
                    stat_keys.FRONTIER_ACKED, stat_keys.FRONTIER_RELEASED,
                    stat_keys.FRONTIER_RECLAIMED):
            self.stats.set_value(key, 0)
        self._beat()
        interval = max(min(self.config.lease_seconds / 3, 10.0), 0.2)
        self._ticker = LoopingCall(self._tick)
        self._ticker.start(interval, now=False).addErrback(
            lambda f: logger.error("frontier upkeep failed: %s", f.getErrorMessage()))
        logger.info("worker %s %s job %s (run %s) on Redis at %s", self.worker, {
            "started": "started", "joined": "joined",
            "finished": "found finished (nothing left to do)"}[joined.outcome],
            self.keys.job, self.run_id, self.config.safe_url)

    def close(self, reason: str) -> None:
        self._closing = True
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        if self._unavailable:
            self.link.close()
            return
        try:
            self._flush_pushes()
            # The pipelines have closed: what they had is in the index or dead-lettered.
            self._acks.extend(fp for fp, _, _ in self._waiting)
            self._waiting = []
            self._flush_acks()
            unfinished = sorted(self._held)
            released = self.frontier.release(unfinished)
            self.stats.inc_value(stat_keys.FRONTIER_RELEASED, released)
            finished = finish(self.link, self.keys, self.run_id)
            leave(self.link, self.keys, self.worker)
            self.stats.set_value(stat_keys.FRONTIER_ROUND_TRIPS, self.link.round_trips)
        except RedisUnavailable as exc:
            logger.error("%s; the leases of this worker expire by themselves", exc)
            return
        finally:
            self.link.close()
        logger.info("worker %s leaves job %s (%s): %d lease(s) handed back%s", self.worker,
                    self.keys.job, reason, released,
                    "; the job is done" if finished else "")

    def has_pending_requests(self) -> bool:
        return bool(self._local or self._pushes)

    def enqueue_request(self, request: Request) -> bool:
        fp = request.meta.get(FP_META)
        if fp is not None:
            if fp in self._held:  # a retry or redirect of a page this worker leased
                self._local.append(request)
                return True
            request.meta.pop(FP_META)  # a lease that is no longer ours: queue it afresh
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request).hex()
        assert self.crawler.spider is not None
        self._pushes.append((fingerprint, serialize(request, self.crawler.spider),
                             request.dont_filter))
        self.stats.inc_value(stat_keys.FRONTIER_PUSHED)
        if len(self._pushes) >= _PUSH_BATCH:
            self._flush_pushes()
        return True

    def next_request(self) -> Request | None:
        try:
            if len(self._acks) >= self.take_batch:
                self._flush_acks()
            if not self._local and not self._closing:
                self._flush_pushes()  # links found so far become takeable, by anyone
                self._take()
        except RedisUnavailable as exc:
            self._give_up(exc)
        if self._local:
            self._idle_since = None
            return self._local.popleft()
        return None

    def _give_up(self, exc: RedisUnavailable) -> None:
        """Redis stayed away past REDIS_RETRY_SECONDS: close (exit 3); leases expire."""
        if self._unavailable:
            return
        self._unavailable = True
        self._closing = True
        logger.error("%s; closing this worker (its leases expire and go back to the queue)",
                     exc)
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=CLOSE_REASON))

    # --- seeding (crawler.distributed.seeding) --------------------------------------------

    def is_seeded(self) -> bool:
        return self.frontier.seeded()

    def seeded(self) -> None:
        self._flush_pushes()
        self.frontier.mark_seeded()
        logger.info("job %s: URL list queued", self.keys.job)

    # --- leases and acknowledgements ----------------------------------------------------

    def _take(self) -> None:
        taken = self.frontier.take(self.take_batch)
        spider = self.crawler.spider
        assert spider is not None
        for fp, payload in taken.requests:
            request = deserialize(payload, spider)
            request.meta[FP_META] = fp
            self._held.add(fp)
            self._local.append(request)
        self.stats.inc_value(stat_keys.FRONTIER_TAKEN, len(taken.requests))
        if taken.reclaimed:
            self.stats.inc_value(stat_keys.FRONTIER_RECLAIMED, taken.reclaimed)
            logger.info("job %s: %d expired lease(s) back in the queue", self.keys.job,
                        taken.reclaimed)

    def _page_done(self, fp: str, items: int) -> None:
        if fp not in self._held:
            return
        ticket = self._index_ticket() if items and self.wait_for_index else 0
        if ticket > self._delivered:
            self._waiting.append((fp, ticket, time.monotonic()))
        else:
            self._acks.append(fp)

    def _index_ticket(self) -> int:
        """The index flush that carries the items buffered so far (``index_ticket``)."""
        answers = self.crawler.signals.send_catch_log(index_ticket)
        return max((n for _, n in answers if isinstance(n, int)), default=0)

    def _on_delivered(self, number: int) -> None:
        self._delivered = max(self._delivered, number)
        ready = [fp for fp, ticket, _ in self._waiting if ticket <= number]
        if ready:
            self._waiting = [entry for entry in self._waiting if entry[1] > number]
            self._acks.extend(ready)

    def _flush_acks(self) -> None:
        if not self._acks:
            return
        acks, self._acks = self._acks, []
        self.frontier.ack(acks)
        self._held.difference_update(acks)
        self.stats.inc_value(stat_keys.FRONTIER_ACKED, len(acks))

    def _flush_pushes(self) -> None:
        if self._pushes:
            pushes, self._pushes = self._pushes, []
            self.frontier.push(pushes)

    def _beat(self) -> None:
        info = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": self._started_at}
        heartbeat(self.link, self.keys, self.worker, self.config.lease_seconds, info)

    def _tick(self) -> None:
        if self._unavailable:
            return
        try:
            self._flush_pushes()
            self._flush_acks()
            self.frontier.renew(sorted(self._held))
            self._beat()
        except RedisUnavailable as exc:
            self._give_up(exc)
            return
        self._say_what_it_waits_for()

    def _say_what_it_waits_for(self) -> None:
        """Once a minute while the engine has nothing to do: what keeps this worker open."""
        now = time.monotonic()
        if self._idle_since is None or now - max(self._idle_since, self._said_waiting) < 60:
            return
        self._said_waiting = now
        reasons = []
        if self._waiting:
            oldest = now - min(at for _, _, at in self._waiting)
            reasons.append(f"{len(self._waiting)} page(s) of this worker waiting for the index "
                           f"(oldest {oldest:.0f} s, ticket {min(t for _, t, _ in self._waiting)}"
                           f", delivered {self._delivered})")
        others = len(self._held) - len(self._waiting)
        if others:
            reasons.append(f"{others} other page(s) leased by this worker not yet done")
        state = self._last_state
        if state is not None:
            if not state.seeded:
                reasons.append("the URL list not yet queued by the seeding worker")
            if state.queued:
                reasons.append(f"{state.queued} request(s) queued")
            if state.leased > len(self._held):
                reasons.append(f"{state.leased - len(self._held)} page(s) leased by other "
                               "workers (taken here if their leases expire)")
        logger.info("job %s: worker %s idle for %.0f s, waiting: %s", self.keys.job,
                    self.worker, now - self._idle_since, "; ".join(reasons) or "nothing known")

    def _idle(self, spider: Spider) -> None:
        if self._unavailable:
            return
        try:
            self._flush_pushes()
            self._flush_acks()
            self._last_state = self.frontier.state()
            done = not self._held and self._last_state.idle
        except RedisUnavailable as exc:
            self._give_up(exc)
            return
        # Not done: pages of this worker still on their way to the index, requests
        # queued, or leased by a worker that may yet die.
        if not done:
            if self._idle_since is None:
                self._idle_since = time.monotonic()
            raise DontCloseSpider
