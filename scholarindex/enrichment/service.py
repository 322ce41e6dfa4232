"""The background enricher: listings in, outcomes out, the caller never waits.

``submit`` answers at once when the cache knows the work (a SQLite read, no
network) and otherwise queues its titles. One worker thread drains the queue:
it sends a batch when ``batch_size`` titles wait, when ``flush`` is called
(the crawl went idle) or when the oldest title has waited ``batch_linger``
seconds, so a cold cache costs one request per ``batch_size`` distinct titles.
Results come back through ``on_result`` on the worker thread.

One work listed on several profiles is verified against the evidence of all
its listings seen so far, and a work once matched in this run is never
reported unmatched afterwards. The works answered so far (merged evidence and
latest outcome) are kept in a private temporary SQLite database, not in
memory: at ~2 KB a work (titles, names, arXiv metadata with its abstract) a
crawl of 150,000 works would otherwise hold 300 MB. So both hold for every
work of a run, however large, at a few microseconds a listing. ``counts``
gives the distinct works by their latest status.

With a local mirror (``scholarindex.enrichment.mirror``), the worker looks every queued
title up there first, as soon as it is queued, and only the titles the mirror
cannot answer wait for a batch to the query API: so a batch holds
``batch_size`` titles the API must be asked about, and a work the mirror answers
costs no request.

After an outage (``ArxivUnavailable``) the worker answers "pending" without
asking arXiv for ``outage_cooldown`` seconds (the mirror still answers), so a
dead API costs one round of retries, not one per batch.
"""

from __future__ import annotations

import logging
import pickle
import sqlite3
import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Collection
from dataclasses import replace

import orjson

from scholarindex.core.enrichment_status import DONE, PENDING
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import Cancelled
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.query import batches
from scholarindex.enrichment.resolver import EventSink, Resolver, build_resolver

logger = logging.getLogger(__name__)

OnResult = Callable[[Outcome], None]
Answer = tuple[Listing, Outcome]  # a work's merged evidence and its latest outcome


def _dump(work: Listing, outcome: Outcome) -> bytes:
    """A row of ``AnsweredWorks``: its plain values (the arXiv metadata is decoded JSON
    itself) as JSON, which orjson writes and reads faster than pickle; the file is this
    process's own scratch, read by nobody else. Text JSON cannot hold (a lone surrogate
    from a page's broken JSON-LD) is pickled instead: ``_answer`` tells them apart."""
    values = (work.titles, work.years, work.people, outcome.status, outcome.reason,
              outcome.checked_at, outcome.arxiv)
    try:
        return orjson.dumps(values)
    except orjson.JSONEncodeError:
        return pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)


def _answer(work_id: str, row: bytes) -> Answer:
    """A stored row of ``AnsweredWorks`` as (evidence, outcome); JSON has no tuples, so
    the evidence's are made again (a Listing compares equal only with tuples)."""
    # JSON starts with "[", a pickle with its protocol byte (0x80).
    values = orjson.loads(row) if row[:1] == b"[" else pickle.loads(row)
    titles, years, people, status, reason, checked_at, arxiv = values
    return (Listing(work_id, tuple(titles), tuple(years), tuple(people)),
            Outcome(work_id, arxiv, status, reason, checked_at))


class _CacheView:
    """The cache rows of a batch's title keys, read at once; other keys read when asked."""

    def __init__(self, read: Callable[[list[str]], dict], rows: dict, asked: list[str]) -> None:
        self._read, self._rows, self._asked = read, dict(rows), set(asked)

    def get(self, keys: list[str]) -> dict:
        unasked = [key for key in keys if key not in self._asked]
        if unasked:
            self._rows.update(self._read(unasked))
            self._asked.update(unasked)
        return {key: self._rows[key] for key in keys if key in self._rows}


class AnsweredWorks:
    """Evidence and latest outcome per work answered in this run, on disk.

    A private temporary SQLite database (``sqlite3.connect("")``): a file SQLite
    deletes when the connection closes, with a page cache of a few MB, so memory
    stays flat however many works a crawl lists. The file (in SQLITE_TMPDIR or
    TMPDIR, else /var/tmp) takes about 1.3 KB a work: ~190 MB for 150,000 works.
    Not thread-safe: the Enricher uses it under its lock. After ``close`` it knows
    nothing and stores nothing. The last few answers stored wait in memory and go to
    the database together (one ``executemany`` per ``WRITE_BATCH``).
    """

    WRITE_BATCH = 256

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = sqlite3.connect(
            "", check_same_thread=False, isolation_level=None)
        # Scratch data of this process: no journal, no fsync.
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        # A rowid table: rows of ~2 KB (metadata with abstract) would waste most of a
        # WITHOUT ROWID table's pages.
        self._db.execute("CREATE TABLE answered (work_id TEXT PRIMARY KEY, answer BLOB NOT NULL)")
        self._unwritten: dict[str, Answer] = {}

    def get(self, work_id: str) -> Answer | None:
        if self._db is None:
            return None
        if work_id in self._unwritten:
            return self._unwritten[work_id]
        row = self._db.execute("SELECT answer FROM answered WHERE work_id = ?",
                               (work_id,)).fetchone()
        return None if row is None else _answer(work_id, row[0])

    def get_many(self, work_ids: Collection[str]) -> dict[str, Answer]:
        """``get`` for several works in one query; the works not stored are left out."""
        if self._db is None or not work_ids:
            return {}
        found = {w: self._unwritten[w] for w in work_ids if w in self._unwritten}
        ids = [w for w in work_ids if w not in found]
        for start in range(0, len(ids), 500):  # below SQLite's limit on bound parameters
            part = ids[start:start + 500]
            rows = self._db.execute(
                "SELECT work_id, answer FROM answered WHERE work_id IN "
                f"({','.join('?' * len(part))})", part).fetchall()
            for work_id, answer in rows:
                found[work_id] = _answer(work_id, answer)
        return found

    def put(self, work: Listing, outcome: Outcome) -> None:
        if self._db is None:
            return
        self._unwritten[work.work_id] = (work, outcome)
        if len(self._unwritten) >= self.WRITE_BATCH:
            self._write()

    def _write(self) -> None:
        assert self._db is not None
        rows = [(work_id, _dump(work, outcome))
                for work_id, (work, outcome) in self._unwritten.items()]
        self._db.execute("BEGIN")  # one transaction, not one per row (autocommit)
        try:
            self._db.executemany("INSERT OR REPLACE INTO answered VALUES (?, ?)", rows)
        finally:
            self._db.execute("COMMIT")
        self._unwritten.clear()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            self._unwritten.clear()


class Enricher:
    """Queues listings and resolves them in batches on one worker thread."""

    def __init__(self, resolver: Resolver, config: EnrichmentConfig, on_result: OnResult,
                 stop: threading.Event | None = None,
                 cleanup: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        # ``stop`` must be the event the resolver's client waits on, so that
        # closing cuts its rate-limit waits and retry pauses short.
        self._resolver = resolver
        self._cleanup = cleanup
        self._config = config
        self._on_result = on_result
        self._clock = clock
        self._stop = stop or threading.Event()
        self._cond = threading.Condition()
        self._queue: OrderedDict[str, float] = OrderedDict()  # title key -> when queued
        self._in_flight: set[str] = set()
        self._mirror_checked: set[str] = set()  # queued keys the mirror could not answer
        self._by_key: dict[str, set[str]] = defaultdict(set)  # title key -> waiting work ids
        self._waiting: dict[str, tuple[Listing, set[str]]] = {}  # work id -> evidence, keys
        # Works taken off ``_waiting`` (answered, or left pending) that the worker is still
        # deciding or reporting: still outstanding (the crawl must not close on them).
        self._reporting = 0
        self._answered = AnsweredWorks()
        self._counts: Counter[str] = Counter()  # status -> works whose latest answer it is
        self._flush = False
        self._down_until = 0.0
        self._down_reason = ""
        self._thread = threading.Thread(target=self._run, name="arxiv-enricher", daemon=True)

    def start(self) -> None:
        """Start the worker thread."""
        self._thread.start()

    # --- caller side (the reactor thread) ------------------------------------------

    def submit(self, listing: Listing) -> Outcome | None:
        """The outcome now if the cache has it; else None, and it comes via ``on_result``."""
        return self.submit_many([listing])[0]

    def submit_many(self, listings: list[Listing]) -> list[Outcome | None]:
        """``submit`` for each listing in turn (a page's), under one lock, reading the
        stored answers and the cache in one query each rather than one per listing."""
        with self._cond:
            answered = self._answered.get_many({listing.work_id for listing in listings})
            own_keys = [self._resolver.keys(listing) for listing in listings]
            keys = list(dict.fromkeys(key for keys in own_keys for key in keys))
            cache = _CacheView(self._resolver.cached, self._resolver.cached(keys), keys)
            outcomes = []
            seen: set[str] = set()
            for listing, keys in zip(listings, own_keys, strict=True):
                previous = self._previous(listing.work_id, answered, seen)
                outcomes.append(self._submit(listing, previous, cache, keys))
            return outcomes

    def _previous(self, work_id: str, answered: dict[str, Answer], seen: set[str]) -> Answer | None:
        """The stored answer for a work of the batch, ``answered`` being what was stored
        before it (read under the same lock, so only the batch itself has stored since)."""
        if work_id in seen:  # listed twice in the batch: what its first listing stored
            return self._answered.get(work_id)
        seen.add(work_id)
        return answered.get(work_id)

    def _submit(self, listing: Listing, previous: Answer | None, cache: _CacheView,
                own_keys: list[str]) -> Outcome | None:
        """One listing, its title keys ``own_keys`` worked out by the caller."""
        work = self._evidence(listing, previous)
        if (previous and previous[1].status != PENDING and work == previous[0]
                and listing.work_id not in self._waiting):
            return previous[1]  # nothing new to verify against, nothing to store
        keys = own_keys if work is listing else self._resolver.keys(work)
        if not keys:
            return self._settle(work, self._resolver.unsearchable(work), previous)
        if work.work_id not in self._waiting and previous and previous[1].status == DONE:
            # Already matched: nothing to ask. A spelling of its title never searched is
            # cached with the match, so a later run that meets it first asks nothing either.
            unsearched = [key for key in own_keys if key not in cache.get(own_keys)]
            if unsearched:
                self._resolver.remember_match(unsearched, previous[1].arxiv)
            return self._settle(work, previous[1], previous)
        cached = cache.get(keys)
        if work.work_id not in self._waiting and len(cached) == len(keys):
            return self._settle(work, self._resolver.decide(work, cached, keys), previous)
        _, outstanding = self._waiting.get(work.work_id, (work, set()))
        now = self._clock()
        for key in keys:
            if key in cached:
                continue
            outstanding.add(key)
            self._by_key[key].add(work.work_id)
            if key not in self._in_flight and key not in self._queue:
                self._queue[key] = now
        self._waiting[work.work_id] = (work, outstanding)
        self._cond.notify_all()
        return None

    def flush(self) -> None:
        """Send the partial batch now instead of waiting for it to fill."""
        with self._cond:
            self._flush = True
            self._cond.notify_all()

    def outstanding(self) -> int:
        """How many works still wait for an answer or for it to reach ``on_result``.

        Zero means every answer so far has been handed to ``on_result``: a burst of
        answers (a mirror answers thousands at once) still being decided counts.
        """
        with self._cond:
            return len(self._waiting) + self._reporting

    def counts(self) -> dict[str, int]:
        """Distinct works of this run by the status of their latest outcome."""
        with self._cond:
            return dict(self._counts)

    def close(self, reason: str, timeout: float = 0.0) -> list[Outcome]:
        """Stop the worker; every work still waiting comes back "pending" with ``reason``.

        Waits up to ``timeout`` for the worker (0: not at all, as on the reactor).
        A request already in flight still ends in the cache; its works are
        reported here, not again.
        """
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
            left = [Outcome(work_id, None, PENDING, reason) for work_id in self._waiting]
            for outcome in left:
                answered = self._answered.get(outcome.work_id)
                self._count(answered[1] if answered else None, outcome)
            self._waiting.clear()
            self._queue.clear()
            self._mirror_checked.clear()
            self._by_key.clear()
        if timeout and self._thread.is_alive():
            self._thread.join(timeout)
        if not self._thread.is_alive():
            self._release()
        return left

    def _release(self) -> None:
        """Run ``cleanup`` (close the HTTP session) once, from whichever side ends last."""
        with self._cond:
            cleanup, self._cleanup = self._cleanup, None
            self._answered.close()
        if cleanup is not None:
            cleanup()

    # --- bookkeeping (under the lock) ------------------------------------------------

    def _evidence(self, listing: Listing, previous: Answer | None) -> Listing:
        """The listing merged with what earlier listings of the same work said."""
        if listing.work_id in self._waiting:
            return self._waiting[listing.work_id][0].merged(listing)
        if previous is not None:
            return previous[0].merged(listing)
        return listing

    def _settle(self, work: Listing, outcome: Outcome, previous: Answer | None) -> Outcome:
        """Remember the answer (``previous``: the stored one); a matched work stays matched."""
        before = previous[1] if previous else None
        if before and before.status == DONE and outcome.status != DONE:
            outcome = before
        elif before and before.checked_at and (outcome.checked_at or "") < before.checked_at:
            # The index keeps the newest answer, so a later decision must not look older
            # than the one it replaces: "none" decided on a row fetched later, then
            # "done" on an earlier one, would leave the work unmatched. (At equal times
            # the index's tie-break on content prefers the match.)
            outcome = replace(outcome, checked_at=before.checked_at)
        if previous != (work, outcome):
            self._answered.put(work, outcome)
        self._count(before, outcome)
        return outcome

    def _count(self, before: Outcome | None, outcome: Outcome) -> None:
        """Move the work from the count of its previous status to its new one."""
        if before is not None:
            self._counts[before.status] -= 1
        self._counts[outcome.status] += 1

    def _next_batch(self) -> tuple[bool, list[str]] | None:
        """Wait until work is due and take it: ``(True, keys)`` for the mirror (every
        queued key it has not seen, at once), ``(False, batch)`` for the query API once
        a batch is due; None when stopping."""
        while not self._stop.is_set():
            if not self._queue:
                self._flush = False
                self._cond.wait()
                continue
            if self._resolver.has_mirror:
                unchecked = [key for key in self._queue if key not in self._mirror_checked]
                if unchecked:
                    for key in unchecked:
                        del self._queue[key]
                        self._in_flight.add(key)
                    return True, unchecked
            age = self._clock() - next(iter(self._queue.values()))
            due = (self._flush or len(self._queue) >= self._config.batch_size
                   or age >= self._config.batch_linger_seconds)
            if not due:
                self._cond.wait(self._config.batch_linger_seconds - age)
                continue
            batch = next(batches(self._queue, self._config.batch_size,
                                 self._config.max_query_chars))
            for key in batch:
                del self._queue[key]
                self._in_flight.add(key)
            return False, batch
        return None

    def _complete(self, batch: list[str], stored: set[str],
                  reason: str) -> tuple[list[Listing], list[Outcome]]:
        """Drop the batch from the books: works now answerable, and works left pending."""
        ready: list[Listing] = []
        pending: list[Outcome] = []
        for key in batch:
            self._in_flight.discard(key)
            self._mirror_checked.discard(key)
            for work_id in self._by_key.pop(key, ()):
                if work_id not in self._waiting:
                    continue
                work, outstanding = self._waiting[work_id]
                if key not in stored:
                    del self._waiting[work_id]
                    pending.append(self._settle(work, Outcome(work_id, None, PENDING, reason),
                                                self._answered.get(work_id)))
                    continue
                outstanding.discard(key)
                if not outstanding:
                    del self._waiting[work_id]
                    ready.append(work)
        self._reporting += len(ready) + len(pending)  # until _deliver has reported each
        return ready, pending

    # --- worker thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._drain()
        finally:
            self._release()

    def _drain(self) -> None:
        while True:
            with self._cond:
                work = self._next_batch()
                if work is None:
                    return
                from_mirror, batch = work
                waiting = {key: [self._waiting[w][0] for w in self._by_key[key]
                                 if w in self._waiting] for key in batch}
            if from_mirror:
                try:
                    self._from_mirror(batch, waiting)
                except Cancelled:
                    return
                continue
            try:
                reason = self._lookup(batch, waiting)
            except Cancelled:
                return
            except Exception:  # a bug must not kill the worker silently: log, keep pending
                logger.exception("arXiv enrichment failed for a batch of %d titles", len(batch))
                reason = "enrichment error (see the crawl log)"
            stored = set(self._resolver.cached(batch))
            with self._cond:
                ready, pending = self._complete(batch, stored, reason)
            self._deliver(ready, pending)

    def _from_mirror(self, keys: list[str], waiting: dict[str, list[Listing]]) -> None:
        """Answer what the mirror can; queue the rest again, for the query API."""
        try:
            left = set(self._resolver.answer_from_mirror(keys, waiting))
        except Cancelled:
            raise
        except Exception:  # a broken mirror must not stop enrichment: the API answers
            logger.exception("arXiv mirror lookup failed for %d titles", len(keys))
            left = set(keys)
        now = self._clock()
        with self._cond:
            for key in keys:
                if key in left:
                    self._in_flight.discard(key)
                    self._mirror_checked.add(key)
                    self._queue[key] = now
            answered = [key for key in keys if key not in left]
            ready, pending = self._complete(answered, set(answered), "")
            self._cond.notify_all()
        self._deliver(ready, pending)

    def _deliver(self, ready: list[Listing], pending: list[Outcome]) -> None:
        """Report the works left pending, and decide and report the works now answerable."""
        for outcome in pending:
            try:
                self._on_result(outcome)
            finally:
                self._reported()
        for work in ready:
            try:
                cached = self._resolver.cached(self._resolver.keys(work))
                outcome = self._resolver.decide(work, cached)
                with self._cond:
                    outcome = self._settle(work, outcome, self._answered.get(work.work_id))
                self._on_result(outcome)  # reported before it stops counting as outstanding
            finally:
                self._reported()

    def _reported(self) -> None:
        with self._cond:
            self._reporting -= 1

    def _lookup(self, batch: list[str], waiting: dict[str, list[Listing]]) -> str:
        """Search arXiv for a batch, unless it is down; the reason if it is."""
        now = self._clock()
        if now < self._down_until:
            return f"{self._down_reason} (not asked again for {self._down_until - now:.0f} s)"
        reason = self._resolver.search_api(batch, waiting)
        if reason:
            self._down_until = self._clock() + self._config.outage_cooldown_seconds
            self._down_reason = reason
            return reason
        return "arXiv lookup did not finish"


def start_enricher(config: EnrichmentConfig, on_result: OnResult,
                   on_event: EventSink | None = None) -> Enricher:
    """An Enricher on the real client and cache, its worker started."""
    stop = threading.Event()
    resolver, fetcher = build_resolver(config, stop=stop, on_event=on_event)
    enricher = Enricher(resolver, config, on_result, stop=stop, cleanup=fetcher.close)
    enricher.start()
    return enricher
