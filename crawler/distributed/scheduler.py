"""The Redis scheduler: this worker's window on the job's shared frontier.

Requests the crawl makes (the URL list, followed links) are pushed to the job's queue
in Redis, where the seen-set drops those queued before by any worker. Requests are
taken from Redis with a lease a few at a time (``REDIS_TAKE_BATCH``) ahead of the
engine's ``next_request``; a retry or redirect of a leased request stays in this worker
under the same lease. A page is acknowledged when it is done (``tracking``: output
consumed, items through the pipelines). With indexing on, its items then wait in the
index pipeline's buffer for the flush that carries them (``index_ticket``,
``index_delivered``); meanwhile they are kept in this worker's outbox in Redis, written
by the same script that acknowledges the lease (``Frontier.hand_off``,
``scholarindex.distributed.outbox``), and taken out once delivered. So a worker killed at
any moment leaves to be fetched again only the pages it had fetched and not yet parsed:
its parsed pages' items are delivered by the worker that adopts its outbox, however
slow the index was. A worker holds at most ``REDIS_MAX_UNACKED`` pages leased and not
acknowledged (taken, in the downloader, being parsed; or all its pages while Redis is
away and nothing can be handed off): at that many it takes nothing more. Leases held
are renewed every third of ``REDIS_LEASE_SECONDS``, with a heartbeat naming this worker;
a renewal also names the pages parsed since the last one, whose take then does not count
towards ``REDIS_MAX_DELIVERIES`` (``frontier``).

The works of a page that the arXiv stage queued are written to this worker's lookups in
Redis once the page's items are delivered, before its outbox entry goes
(``scholarindex.distributed.lookups``, ``lookupbook``), and taken out once their answers
are in the index; the idle check adopts the outboxes and lookups of workers whose
heartbeat lapsed: the outboxes' items go to the index pipeline (``items_adopted``) and
are then waited for as this worker's own pages; their works queued for arXiv and the
lookups go to the arXiv stage (``lookups_adopted``).

Every Redis call runs on one thread of its own (``calls``), never on the reactor: the
crawl goes on while a call waits, and SIGTERM is handled while Redis is away. While
Redis is unreachable (restarting) the calls are retried for up to
``REDIS_RETRY_SECONDS`` (``scholarindex.distributed.connection``): the pages in flight finish and
reach the index, nothing new is taken (a take waits in line), and the acknowledgements
go when Redis answers again. Past that time the worker closes with
``redis_unavailable`` (exit 3). Told to stop (SIGTERM) it waits for Redis at most
``_STOP_WAIT`` seconds more.

Idle: the spider closes only when Redis says the job is done (the URL list seeded,
nothing queued, nothing leased by anyone); while another worker's lease may still
expire, this one waits and takes it, and says every minute what it waits for. At
close (the end, or a drain by SIGTERM), done pages are acknowledged and the requests
taken but not done go back to the front of the queue; the first worker to find the job
done marks the run finished.

The scheduler makes the Redis calls and sends the signals; where each page stands is
``pagebook``'s (pure bookkeeping), one call of a kind in flight at a time
``singleflight``'s, and what an idle worker says it waits for ``idlereport``'s. Its
``Phase``: open; closing (nothing more taken); Redis unavailable (no more calls).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import time
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.reactor import CallLaterOnce
from scrapy.utils.request import request_from_dict
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.python.failure import Failure

from crawler.close_reasons import REDIS_UNAVAILABLE
from crawler.distributed.calls import RedisCalls
from crawler.distributed.idlereport import IdleReport
from crawler.distributed.lookupbook import LookupBook, merge_into, queued_works
from crawler.distributed.pagebook import Done, PageBook
from crawler.distributed.singleflight import SingleFlight
from crawler.distributed.tracking import FP_META, PageTracker
from crawler.job import given_urls, safe_name
from crawler.signals import (
    index_delivered,
    index_flush_soon,
    index_ticket,
    items_adopted,
    lookups_adopted,
    work_enriched,
)
from scholarindex.core import stat_keys
from scholarindex.core.flags import as_bool
from scholarindex.distributed.connection import RedisConfig, RedisLink, RedisUnavailable, hurry
from scholarindex.distributed.frontier import Frontier, FrontierState, Taken
from scholarindex.distributed.jobs import (
    definition_digest,
    finish,
    heartbeat,
    join,
    leave,
    worker_id,
)
from scholarindex.distributed.keys import JobKeys
from scholarindex.distributed.lookups import Lookups
from scholarindex.distributed.outbox import ADOPT_LIMIT, Outbox, items_of

logger = logging.getLogger(__name__)

_PUSH_BATCH = 500
_STOP_WAIT = 5.0  # seconds a worker told to stop still waits for an unreachable Redis


class JobRefused(RuntimeError):
    """A run of the job with a different URL list is in progress."""


def job_definition(urls: str | None, url_file: str | None, follow: Any) -> str:
    """The definition digest for the spider arguments, as the spider will read them."""
    return definition_digest(given_urls(urls, url_file), as_bool(follow or False))


def adoption_limit(tickets: Iterable[int], delivered: int) -> int:
    """How many pages of dead workers' outboxes to adopt now, given the index flushes
    (``tickets``) this worker's waiting pages wait for and the last flush delivered.

    A part at a time, the next once every page waiting is in the flush in flight or the
    one after it: the index has the next part to write as it ends a part. (Waiting for
    a part's delivery left the adopter's index idle between parts, and a part was often
    two flushes: in the 4 x 2,000 soak the last part was adopted nearly eight minutes
    after the last fetch.)"""
    return ADOPT_LIMIT if all(ticket <= delivered + 1 for ticket in tickets) else 0


def serialize(request: Request, spider: Spider) -> bytes:
    return pickle.dumps(request.to_dict(spider=spider), protocol=4)


def deserialize(payload: bytes, spider: Spider) -> Request:
    return request_from_dict(pickle.loads(payload), spider=spider)


class Phase(Enum):
    OPEN = "open"
    CLOSING = "closing"  # nothing more taken, nor handed to the engine
    UNAVAILABLE = "unavailable"  # Redis stayed away past REDIS_RETRY_SECONDS: no more calls


class RedisScheduler:
    def __init__(self, crawler: Crawler, config: RedisConfig, take_batch: int,
                 max_deliveries: int, max_unacked: int) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.take_batch = max(take_batch, 1)
        self.max_unacked = max(max_unacked, self.take_batch)
        self.keys = JobKeys(config.key_prefix, safe_name(str(crawler.settings["RUN_JOB"])))
        self.link = RedisLink.from_config(config)
        self.calls = RedisCalls()
        self.worker = worker_id()
        self.frontier = Frontier(self.link, self.keys, self.worker, config.lease_seconds,
                                 max_deliveries)
        self.run_id = ""
        self.phase = Phase.OPEN
        self._local: deque[Request] = deque()  # taken (leased), not yet handed to the engine
        self._pushes: list[tuple[str, bytes, bool]] = []
        self.pages = PageBook()  # leased, done, waiting for the index, to acknowledge
        # One call of each kind in flight at a time.
        self._take = SingleFlight(self.calls)
        self._ack = SingleFlight(self.calls)
        self._upkeep = SingleFlight(self.calls)
        self._check = SingleFlight(self.calls)  # "is the job done?"
        self._job_done = False  # the last check found the job done
        self.idle_report = IdleReport()
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._ticker: LoopingCall | None = None
        self.lookups = Lookups(self.link, self.keys, self.worker)
        self.book = LookupBook()  # arXiv lookups this worker keeps in Redis
        self.outbox = Outbox(self.link, self.keys, self.worker, max_deliveries)
        self.tracker = PageTracker.of(crawler)
        self.tracker.on_done = self._page_done
        self.tracker.on_item = self.book.page_item
        self.tracker.on_scraped = self.pages.scraped
        crawler.signals.connect(self._idle, signal=signals.spider_idle)
        crawler.signals.connect(self._on_delivered, signal=index_delivered)
        crawler.signals.connect(self._on_enriched, signal=work_enriched)
        self._answered: list[str] = []  # answers whose index ticket is asked for next turn
        self._ticketing = CallLaterOnce(self._ticket_answers)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        settings = crawler.settings
        if not settings.get("RUN_JOB"):
            raise ValueError("the distributed crawl needs a job name: -a job=NAME or "
                             "-s RUN_JOB=NAME (the crawl command sets it)")
        return cls(crawler, RedisConfig.from_settings(settings),
                   settings.getint("REDIS_TAKE_BATCH"), settings.getint("REDIS_MAX_DELIVERIES"),
                   settings.getint("REDIS_MAX_UNACKED"))

    # --- Scrapy's scheduler interface ---------------------------------------------------

    def open(self, spider: Spider) -> Deferred[None]:
        return deferred_from_coro(self._open(spider))

    async def _open(self, spider: Spider) -> None:
        definition = definition_digest(getattr(spider, "start_urls", []) or [],
                                       bool(getattr(spider, "follow", False)))
        joined = await self._call(join, self.link, self.keys, definition,
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
                    stat_keys.FRONTIER_RECLAIMED, stat_keys.FRONTIER_HANDED_OFF,
                    stat_keys.FRONTIER_ADOPTED):
            self.stats.set_value(key, 0)
        await self._call(self._beat)
        interval = max(min(self.config.lease_seconds / 3, 10.0), 0.2)
        self._ticker = LoopingCall(self._tick)
        self._ticker.start(interval, now=False).addErrback(
            lambda f: logger.error("frontier upkeep failed: %s", f.getTraceback()))
        logger.info("worker %s %s job %s (run %s) on Redis at %s", self.worker, {
            "started": "started", "joined": "joined",
            "finished": "found finished (nothing left to do)"}[joined.outcome],
            self.keys.job, self.run_id, self.config.safe_url)

    def close(self, reason: str) -> Deferred[None]:
        return deferred_from_coro(self._close(reason))

    async def _close(self, reason: str) -> None:
        if self.phase is Phase.OPEN:
            self.phase = Phase.CLOSING
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        if self.phase is Phase.UNAVAILABLE:
            self.link.abort()
            await maybe_deferred_to_future(self.calls.stop())
            self.link.close()
            return
        if reason != "finished":  # a drain or a failure: do not wait long for Redis
            hurry(self.link.url, _STOP_WAIT)
        if self._take.call is not None:  # its requests are this worker's to hand back
            await maybe_deferred_to_future(self._take.call)
        # The pipelines have closed: every page waiting is delivered or dead-lettered.
        acks, unfinished = self.pages.closed()
        pushes, self._pushes = self._pushes, []
        try:
            released, finished = await self._call(self._leave, pushes, acks, unfinished)
        except RedisUnavailable as exc:
            logger.error("%s; the leases of this worker expire by themselves", exc)
            return
        finally:
            await maybe_deferred_to_future(self.calls.stop())
            self.link.close()
        self.stats.inc_value(stat_keys.FRONTIER_ACKED, len(acks))
        self.stats.inc_value(stat_keys.FRONTIER_RELEASED, released)
        self.stats.set_value(stat_keys.FRONTIER_ROUND_TRIPS, self.link.round_trips)
        logger.info("worker %s leaves job %s (%s): %d lease(s) handed back%s", self.worker,
                    self.keys.job, reason, released,
                    "; the job is done" if finished else "")

    def _leave(self, pushes: list[tuple[str, bytes, bool]], acks: list[str],
               unfinished: list[str]) -> tuple[int, bool]:
        """On the Redis thread: the last pushes and acks, hand back the rest, leave."""
        self.frontier.push(pushes)
        self.frontier.ack(acks)
        released = self.frontier.release(unfinished)
        finished = finish(self.link, self.keys, self.run_id)
        # The pipelines have delivered every answer (or "pending" with its reason), and
        # every item handed to them.
        self.lookups.clear()
        self.outbox.clear()
        leave(self.link, self.keys, self.worker)
        return released, finished

    def has_pending_requests(self) -> bool:
        # Not a take in flight: the engine asks again at each heartbeat, each time starting
        # one, and would never find the spider idle. What a take brings wakes the engine.
        return bool(self._local or self._pushes)

    def enqueue_request(self, request: Request) -> bool:
        fp = request.meta.get(FP_META)
        if fp is not None:
            if fp in self.pages.held:  # a retry or redirect of a page this worker leased
                self._local.append(request)
                return True
            request.meta.pop(FP_META)  # a lease that is no longer ours: queue it afresh
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request).hex()
        assert self.crawler.spider is not None
        self._pushes.append((fingerprint, serialize(request, self.crawler.spider),
                             request.dont_filter))
        self.stats.inc_value(stat_keys.FRONTIER_PUSHED)
        if len(self._pushes) >= _PUSH_BATCH:
            self._send_pushes()
        return True

    def next_request(self) -> Request | None:
        request = self._local.popleft() if self._local else None
        if request is not None:
            self.idle_report.handed()
        if len(self._local) < self.take_batch:
            self._take_more()
        return request

    # --- the Redis thread ---------------------------------------------------------------

    def _call(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on the Redis thread, awaitable."""
        return maybe_deferred_to_future(self.calls.run(fn, *args))

    def _failed(self, failure: Failure, what: str) -> None:
        if failure.check(RedisUnavailable):
            self._give_up(failure.value)
        else:
            logger.error("frontier %s failed: %s", what, failure.getTraceback())

    def _give_up(self, exc: BaseException) -> None:
        """Redis stayed away past REDIS_RETRY_SECONDS: close (exit 3); leases expire."""
        if self.phase is Phase.UNAVAILABLE:
            return
        self.phase = Phase.UNAVAILABLE
        self.link.abort()  # the calls waiting in line fail at once
        logger.error("%s; closing this worker (its leases expire and go back to the queue)",
                     exc)
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=REDIS_UNAVAILABLE))

    # --- seeding (crawler.distributed.seeding) --------------------------------------------

    def is_seeded(self) -> Deferred[bool]:
        return self.calls.run(self.frontier.seeded)

    def seeded(self) -> Deferred[None]:
        pushes, self._pushes = self._pushes, []

        def mark() -> None:
            self.frontier.push(pushes)
            self.frontier.mark_seeded()
        d = self.calls.run(mark)
        d.addCallback(lambda _: logger.info("job %s: URL list queued", self.keys.job))
        return d

    # --- taking, acknowledging ------------------------------------------------------------

    def _take_more(self) -> None:
        """Take a batch from Redis, in the background, if there is room for it."""
        if self.phase is not Phase.OPEN or self._take.busy or self._job_done:
            return  # (a job found done stays done: no take in flight keeps it open)
        room = self.max_unacked - len(self.pages.held)
        if room < self.take_batch:
            self._send_acks()
            self._ask_for_a_flush()
            if room <= 0:
                return  # taken again when acknowledgements make room
        pushes, self._pushes = self._pushes, []
        n = min(self.take_batch, room)
        d = self._take.run(self._push_and_take, pushes, n)
        d.addCallback(self._taken)
        d.addErrback(self._failed, "take")

    def _push_and_take(self, pushes: list[tuple[str, bytes, bool]], n: int) -> Taken:
        """On the Redis thread: links found so far become takeable (by anyone), then take."""
        self.frontier.push(pushes)
        return self.frontier.take(n)

    def _taken(self, taken: Taken) -> None:
        spider = self.crawler.spider
        self.stats.inc_value(stat_keys.FRONTIER_TAKEN, len(taken.requests))
        if taken.reclaimed:
            self.stats.inc_value(stat_keys.FRONTIER_RECLAIMED, taken.reclaimed)
            logger.info("job %s: %d expired lease(s) back in the queue", self.keys.job,
                        taken.reclaimed)
        for fp, payload in taken.requests:
            self.pages.leased(fp)  # handed back at close if it never runs
            if self.phase is not Phase.OPEN or spider is None:
                continue
            request = deserialize(payload, spider)
            request.meta[FP_META] = fp
            self.crawler.engine.crawl(request)  # back in enqueue_request, and wakes the engine

    def _page_done(self, fp: str, items: int) -> None:
        if fp not in self.pages.held:
            self.pages.dropped(fp)
            self.book.page_dropped(fp)
            return
        hold = self.book.page_done(fp)
        ticket = self._index_ticket() if items else 0
        if self.pages.done(fp, ticket, hold, time.monotonic()) is Done.HAND_OFF:
            # Acknowledged now, its items kept in Redis until the index has them: a kill
            # from here on costs this page no fetch.
            self._send_acks()  # at once: one call in flight, the others wait for it together
            if len(self.pages.waiting) >= self.max_unacked // 2:
                self._ask_for_a_flush()
        else:
            self._hold_lookups(hold)
            if len(self.pages.acks) >= self.take_batch:
                self._send_acks()

    def _hold_lookups(self, hold: dict[str, dict[str, Any]]) -> None:
        """Write the evidence of delivered works to this worker's lookups in Redis, before
        their pages' acknowledgement (the calls run in order). Not before the delivery: a
        worker killed with its works' listings still buffered leaves their pages to be
        done again, and the lookups with them; held, they were adopted, and the answers
        for works not in the index were dead-lettered (``missing_document``)."""
        if hold and self.phase is not Phase.UNAVAILABLE:
            self.calls.run(self.lookups.hold, hold).addErrback(self._failed, "hold lookups")

    def _index_ticket(self) -> int:
        """The index flush that carries the items buffered so far (``index_ticket``); 0,
        nothing to wait for, when no index pipeline answers (indexing off)."""
        answers = self.crawler.signals.send_catch_log(index_ticket)
        return max((n for _, n in answers if isinstance(n, int)), default=0)

    def _ask_for_a_flush(self) -> None:
        if self.pages.flush_wanted():
            self.crawler.signals.send_catch_log(index_flush_soon)

    def _on_enriched(self, work_id: str, **kwargs: Any) -> None:
        """A work's arXiv answer went to the index: dropped from Redis once delivered.

        Its ticket is asked for once this signal's dispatch has ended (the next reactor
        turn), when every handler has run, the index stage's buffering of the answer
        among them, in whatever order they were connected."""
        if not self.book.answered(work_id):
            return
        self._answered.append(work_id)
        self._ticketing.schedule()

    def _ticket_answers(self) -> None:
        answered, self._answered = self._answered, []
        ticket = self._index_ticket()
        if ticket > self.pages.last_delivered:
            for work_id in answered:
                self.book.wait(work_id, ticket)
        else:
            self._drop_lookups(self.book.drop(answered))

    def _drop_lookups(self, work_ids: list[str]) -> None:
        if work_ids and self.phase is not Phase.UNAVAILABLE:
            self.calls.run(self.lookups.drop, work_ids).addErrback(self._failed, "drop lookups")

    def _on_delivered(self, number: int) -> None:
        delivery = self.pages.delivered(number)
        # Before the drops of answers this flush delivered; not the works already let go.
        self._hold_lookups(self.book.still_held(delivery.hold))
        self._drop_lookups(self.book.delivered(number))
        if delivery.acked:  # delivered before their hand-off went out
            self._send_acks()
        # After the hand-offs already sent (the calls run in order).
        if delivery.handed and self.phase is not Phase.UNAVAILABLE:
            self.calls.run(self.outbox.delivered, delivery.handed) \
                .addErrback(self._failed, "outbox delivered")

    def _send_acks(self) -> None:
        """Acknowledge what is done and delivered or handed off (one call in flight at a
        time)."""
        if self._ack.busy or not self.pages.unsent or self.phase is Phase.UNAVAILABLE:
            return
        acks, handoffs = self.pages.to_send()

        def send() -> None:
            self.frontier.hand_off(handoffs)
            self.frontier.ack(acks)

        def acked(_: Any) -> None:
            self.pages.sent(acks, handoffs)
            self.stats.inc_value(stat_keys.FRONTIER_ACKED, len(acks) + len(handoffs))
            self.stats.inc_value(stat_keys.FRONTIER_HANDED_OFF, len(handoffs))
            if self.pages.unsent:
                self._send_acks()
            if not self._local:
                self._take_more()  # room made
        self._ack.run(send).addCallback(acked).addErrback(self._failed, "acknowledge")

    def _send_pushes(self) -> None:
        if self._pushes:
            pushes, self._pushes = self._pushes, []
            self.calls.run(self.frontier.push, pushes).addErrback(self._failed, "push")

    # --- upkeep -------------------------------------------------------------------------

    def _beat(self) -> None:
        info = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": self._started_at}
        heartbeat(self.link, self.keys, self.worker, self.config.lease_seconds, info)

    def _renew(self, held: list[str], parsed: list[str]) -> None:
        """On the Redis thread: renew this worker's leases (also telling Redis a worker is
        about, ``frontier``'s silence rule) and name the pages parsed since the last
        renewal (their take is not counted against ``REDIS_MAX_DELIVERIES``), then the
        heartbeat."""
        self.frontier.renew(held, parsed)
        self._beat()

    def _tick(self) -> None:
        if self.phase is Phase.UNAVAILABLE:
            return
        if not self.crawler.crawling and self.phase is Phase.OPEN:
            hurry(self.link.url, _STOP_WAIT)  # told to stop (SIGTERM): do not wait on Redis
        self._say_what_it_waits_for()
        self._send_pushes()
        self._send_acks()
        if self._upkeep.busy:  # the last one is still waiting for Redis
            return
        held, parsed = self.pages.renewal()
        self._upkeep.run(self._renew, held, parsed).addErrback(self._failed, "lease renewal")

    def _say_what_it_waits_for(self) -> None:
        """Once a minute while the engine got nothing from here: what keeps this worker."""
        now = time.monotonic()
        if not self.idle_report.due(now):
            return
        reasons = self.idle_report.reasons(now, self.pages, self.calls.queued,
                                           self.calls.answered_at)
        logger.info("job %s: worker %s has had nothing to fetch for %.0f s; waiting for: %s",
                    self.keys.job, self.worker, now - self.idle_report.handed_at,
                    "; ".join(reasons) or "nothing known")

    def _idle(self, spider: Spider) -> None:
        """Kept open until a check in the background found the job done; then the engine
        closes the spider at its next idle round, unless another part keeps it open (the
        arXiv stage with lookups pending)."""
        if self.phase is Phase.UNAVAILABLE:
            return
        if self._job_done and self.pages.idle and not self._local and not self._take.busy:
            return
        if not self._check.busy and self.phase is Phase.OPEN:
            self._send_acks()
            pushes, self._pushes = self._pushes, []
            limit = adoption_limit((w.ticket for w in self.pages.waiting),
                                   self.pages.last_delivered)

            def check() -> tuple[FrontierState, int, list[dict[str, Any]], dict[str, bytes]]:
                self.frontier.push(pushes)
                state = self.frontier.state()
                if not state.idle:
                    return state, 0, [], {}
                # The outboxes and arXiv lookups of workers that died (heartbeat lapsed)
                # become ours.
                holding, entries = self.outbox.adopt(limit)
                alive, adopted = self.lookups.adopt()
                return state, alive + holding, adopted, entries
            self._check.run(check).addCallback(self._checked).addErrback(self._failed, "state")
        raise DontCloseSpider

    def _checked(self, checked: tuple[FrontierState, int, list[dict[str, Any]],
                                      dict[str, bytes]]) -> None:
        state, others_looking_up, adopted, entries = checked
        self.idle_report.checked(state, others_looking_up)
        # The outboxes' items first: the answers to their lookups must follow them.
        adopted = adopted + self._adopt_outbox(entries)
        if adopted:  # looked up here now; answers dropped from Redis as this worker's own
            self.book.adopted(adopted)
            self.crawler.signals.send_catch_log(lookups_adopted, evidence=adopted)
        # Done when the job is (seeded, nothing queued, nothing leased by anyone) and this
        # worker holds nothing either; else pages of this worker are still on their way to
        # the index, requests are queued, or leased by a worker that may yet die.
        # A job found idle stays so: only a leased page can push new requests.
        # Nor while a worker alive holds arXiv lookups (it may yet die: they would be
        # adopted here) or this check just adopted some.
        self._job_done = (state.idle and self.pages.idle and not self._local
                          and not self._take.busy and not others_looking_up
                          and not adopted and not entries)

    def _adopt_outbox(self, entries: dict[str, bytes]) -> list[dict[str, Any]]:
        """A dead worker's handed-off pages, now in this worker's outbox: their items go
        to the index pipeline and are waited for as this worker's own pages (their works'
        lookups held in Redis once delivered); returns the evidence of the works they
        queued for arXiv, for the arXiv stage to look up."""
        if not entries:
            return []
        adopted = {fp: items_of(payload) for fp, payload in entries.items()}
        self.crawler.signals.send_catch_log(
            items_adopted, items=[item for items in adopted.values() for item in items])
        self.stats.inc_value(stat_keys.FRONTIER_ADOPTED, len(adopted))
        ticket = self._index_ticket()
        now = time.monotonic()
        evidence: dict[str, dict[str, Any]] = {}
        for fp, items in adopted.items():
            page: dict[str, dict[str, Any]] = {}
            for value in (v for item in items for v in queued_works(item)):
                merge_into(page, value)
                merge_into(evidence, value)
            self.pages.adopted(fp, ticket, page, now)
        logger.info("job %s: %d page(s) a dead worker had parsed and not delivered adopted: "
                    "indexed from its outbox, not fetched again", self.keys.job, len(adopted))
        if ticket <= self.pages.last_delivered:  # nothing to index after all
            self._on_delivered(self.pages.last_delivered)
        else:
            self._ask_for_a_flush()  # now, not at the timer: the job waits for these
        return list(evidence.values())
