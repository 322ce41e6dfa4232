"""``BulkWriter``: merge changes into documents and write them, losing nothing.

For a batch of changes the writer groups them by document, reads the current
documents (``mget``, realtime, with ``_seq_no``/``_primary_term``), merges on the
client with the pure functions of ``scholarindex.indexing.documents``, and writes them in bulk
requests it builds itself (``scholarindex.indexing.bulkbody``): ``create`` for new documents,
``index`` with ``if_seq_no``/``if_primary_term`` for existing ones. Then, per document:

- written: delivered;
- 409 (another writer got there first): re-read and re-merge at once, for up to
  ``CONFLICT_ROUNDS`` rounds besides the attempts (a conflict is no failure);
- 429, 5xx, connection errors: re-read, re-merge and re-send after an exponential
  backoff with jitter (``scholarindex.core.retry``), or after the ``Retry-After`` the cluster
  sent with a refused request, when longer (capped at ``INDEX_RETRY_AFTER_MAX``);
- refused (mapping error): dead-lettered with the reason, the others carry on;
- still failing when the attempts run out: dead-lettered with the last reason, or,
  when the caller asks to ``hold`` them (the crawl pauses through an outage), handed
  back undelivered in ``WriteReport.held`` for the caller to send again later.

Removed works: a researcher change from a complete page is first compared with
the stored profile (``work_ids``); for every work the page no longer lists, an
``unlist`` change takes the profile's listing out of that work, and the document
is deleted (``delete`` with ``if_seq_no``) when no listing remains. Unlists are
delivered before the batch itself, so a crash in between leaves the stored
profile naming the dropped works and the next crawl unlists them again.

Tombstones: every unlist also records when the profile was seen without the work,
in the work's tombstone (``scholarindex.indexing.tombstones``, a small index of its own). For the
works a listing or an unlist touches, the writer reads the tombstones right after
the works, and writes a changed tombstone before the work (a round writes the work
only once its tombstone is in): a writer that read the work before the delete
conflicts on it and reads again, and one that read it after also reads the
tombstone. A listing older than its profile's unlist is then left out: counted
(``index/listings_ignored``), neither written nor dead-lettered.

One paper under two titles (two ``work_id``s verified as one arXiv paper or DOI):
after delivering a batch, the writer hands the work documents that carry a verified
match to ``scholarindex.indexing.identity.WorkJoiner``, which merges the documents of one paper
into the one with the smallest ``work_id`` and leaves redirects for the others. A
change for a ``work_id`` the index no longer holds follows its redirect to that
document (``_follow_redirects``), so re-crawls, unlists and replays still find it.

A listing's arXiv enrichment travels in its change (``Change.enriched``) and is
applied in the listing's merge; ``enrichments_delivered`` counts those answers with
the ones that came alone, ``delivered`` counts changes.

Re-sending is always safe: merges are idempotent, so a request that reached the
cluster before its response was lost only causes a conflict and an identical
merge (or no write at all, when the merged document equals the stored one).
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from scholarindex.core import stat_keys
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulkbody import BulkAction, requests
from scholarindex.indexing.changes import (
    Change,
    MissingDocument,
    fold_change,
    split_enrichment,
    unlist_changes,
    wants_unlisting,
)
from scholarindex.indexing.client import (
    ItemResult,
    classify_item,
    mget_hits,
    translate_errors,
)
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.deadletter import (
    CONFLICT,
    INVALID,
    MISSING,
    REJECTED,
    UNAVAILABLE,
    DeadLetter,
    DeadLetterFile,
    dead_letter,
)
from scholarindex.indexing.errors import IndexUnavailable, InvalidItem
from scholarindex.indexing.identity import MAX_HOPS, WorkJoiner, identity_keys
from scholarindex.indexing.indices import TOMBSTONES_INDEX, alias_name, ensure_plain_index
from scholarindex.indexing.shapes import (
    TombstoneDoc,
    WorkDoc,
    researcher_of,
    tombstone_of,
    work_of,
)
from scholarindex.indexing.tombstones import TOMBSTONE_KINDS, fold_with_tombstone, lists
from scholarindex.indexing.unresolved import HIDDEN, REFRESH_AFTER, Neighbours, hiders

logger = logging.getLogger(__name__)

# Within one document, listings and profiles first, then enrichment (a patch needs the
# work to exist, and the work may arrive in the same batch), unlists last: an unlist
# removes the listings older than itself, whichever came first.
_KIND_ORDER = {"work": 0, "researcher": 0, "enrichment": 1, "unlist": 2}

# Rounds a batch may spend on conflicts alone (409: another write of the document landed
# between this writer's read and its write), beyond the policy's attempts, which count
# the rounds with a transient failure. A conflict is the other writer's progress, not a
# failure of the cluster: the next round merges into what it wrote. The workers of one
# job write the same co-authored works at once, and on a loaded machine a round's read
# and write were far apart (5,212 writes of the shard between them in the soak): a
# listing's attempts ran out, the last on a conflict, and it was dead-lettered
# (``conflict``), lost to the index until replayed.
CONFLICT_ROUNDS = 40
CONFLICT_WAIT_MAX = 2.0  # seconds: the most a wait between two conflict rounds grows to


@dataclass(frozen=True)
class RequestLimits:
    """How big one request of the writer gets (an mget, or a bulk request)."""

    max_docs: int = 1000
    max_bytes: int = 10 * 1024 * 1024


@dataclass
class WriteReport:
    """What one ``write`` did; ``stats()`` names it for Scrapy's stats collector."""

    docs_written: int = 0  # writes: a document written by two ``write`` calls counts twice
    docs_created: int = 0
    docs_unchanged: int = 0
    listings_delivered: int = 0
    researchers_delivered: int = 0
    enrichments_delivered: int = 0  # arXiv answers: changes of their own and carried ones
    enrichments_carried: int = 0  # of those, carried in their listing's change
    unlists_delivered: int = 0
    unlisted: int = 0  # listings taken out of works their profile no longer lists
    docs_deleted: int = 0  # works deleted with their last listing
    works_joined: int = 0  # work documents merged into another of the same paper
    listings_ignored: int = 0  # listings older than their profile's unlist (tombstones)
    merged: int = 0
    conflicts: int = 0
    retries: int = 0
    bulk_requests: int = 0
    dead_lettered: int = 0
    dead_letter_codes: Counter[str] = field(default_factory=Counter)
    fatal: str | None = None  # the cluster refused in a way no retry fixes (auth, no index)
    # Changes not delivered because the cluster stayed unavailable (``write(hold=True)``):
    # neither delivered nor dead-lettered; ``held_reason`` is the last error.
    held: list[Change] = field(default_factory=list)
    held_reason: str = ""
    # (index, id) of the documents written (not deleted): one batch's worth, so the caller
    # can count distinct documents over many writes.
    written: set[tuple[str, str]] = field(default_factory=set)

    @property
    def delivered(self) -> int:
        """Changes that reached the index (a listing with the enrichment it carries: one)."""
        return (self.listings_delivered + self.researchers_delivered
                + self.enrichments_delivered - self.enrichments_carried + self.unlists_delivered)

    def stats(self) -> dict[str, int]:
        """Counters to add to the crawl's stats (``index/...``).

        Not ``index/docs``: distinct documents do not add up over writes (``written`` does).
        """
        values = {
            stat_keys.INDEX_DOC_WRITES: self.docs_written,
            stat_keys.INDEX_DOCS_CREATED: self.docs_created,
            stat_keys.INDEX_DOCS_UNCHANGED: self.docs_unchanged,
            stat_keys.INDEX_LISTINGS_DELIVERED: self.listings_delivered,
            stat_keys.INDEX_RESEARCHERS_DELIVERED: self.researchers_delivered,
            stat_keys.INDEX_ENRICHMENTS_DELIVERED: self.enrichments_delivered,
            stat_keys.INDEX_UNLISTED: self.unlisted,
            stat_keys.INDEX_DOCS_DELETED: self.docs_deleted,
            stat_keys.INDEX_WORKS_JOINED: self.works_joined,
            stat_keys.INDEX_LISTINGS_IGNORED: self.listings_ignored,
            stat_keys.INDEX_MERGED: self.merged,
            stat_keys.INDEX_CONFLICTS: self.conflicts,
            stat_keys.INDEX_RETRIES: self.retries,
            stat_keys.INDEX_BULK_REQUESTS: self.bulk_requests,
            stat_keys.INDEX_DEAD_LETTERED: self.dead_lettered,
        }
        for code, count in self.dead_letter_codes.items():
            values[f"{stat_keys.INDEX_DEAD_LETTERED_BY_CODE}{code}"] = count
        return values

    def add(self, other: WriteReport) -> None:
        """Accumulate another report into this one."""
        for name in ("docs_written", "docs_created", "docs_unchanged", "listings_delivered",
                     "researchers_delivered", "enrichments_delivered", "enrichments_carried",
                     "unlists_delivered",
                     "unlisted", "docs_deleted", "works_joined", "listings_ignored", "merged",
                     "conflicts", "retries", "bulk_requests", "dead_lettered"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.dead_letter_codes.update(other.dead_letter_codes)
        self.written |= other.written
        self.fatal = self.fatal or other.fatal
        self.held += other.held
        self.held_reason = other.held_reason or self.held_reason


@dataclass
class _Doc:
    """One document of the batch and the changes still to deliver into it."""

    index: str
    doc_id: str
    changes: list[Change]
    transient: bool = False  # the last failure was worth a backoff
    last_error: str = ""
    retry_after: float | None = None  # seconds the cluster asked to wait this round
    base: Mapping[str, Any] | None = None  # as read from the index; None: not indexed yet
    seq: tuple[int | None, int | None] = (None, None)  # _seq_no, _primary_term of base
    # The concrete index base was read from: sequence numbers are per index, so a
    # conditional write must go where the read came from, even if the alias moved since.
    source_index: str | None = None
    merged: Mapping[str, Any] | None = None  # None with a base: delete the document
    unlisted: int = 0  # listings the last merge took out
    ignored: int = 0  # listings the last merge left out (older than their tombstone)
    carried: int = 0  # enrichments carried by listings that the last merge applied
    # The work's tombstone (works only, when a listing or unlist is pending), as read
    # and as merged; the read's _seq_no/_primary_term for a conditional write.
    tombstone: TombstoneDoc | None = None
    tombstone_merged: TombstoneDoc | None = None
    tombstone_seq: tuple[int | None, int | None] = (None, None)

    @property
    def needs_tombstone(self) -> bool:
        return self.index == "works" and any(c.kind in TOMBSTONE_KINDS for c in self.changes)


class _Unfinished(Exception):
    """Some documents need another round."""

    def __init__(self, docs: Iterable[_Doc]):
        super().__init__("documents left to write")
        docs = list(docs)
        self.transient_docs = sum(doc.transient for doc in docs)
        self.transient = self.transient_docs > 0
        # Read by the policy's wait (scholarindex.core.retry): the longest Retry-After of the round.
        self.retry_after = max((doc.retry_after for doc in docs if doc.retry_after is not None),
                               default=None)


class BulkWriter:
    """Merges changes into the index; what it cannot deliver goes to the dead letter.

    Not thread-safe: use one writer per thread (the pipeline flushes one batch at
    a time). ``sleep`` is injectable so tests can observe or shorten the backoff.
    """

    def __init__(self, client: OpenSearch, prefix: str, dead_letters: DeadLetterFile,
                 policy: RetryPolicy,
                 sleep: Callable[[float], None] = time.sleep,
                 limits: RequestLimits | None = None,
                 layout: IndexLayout = DEFAULT_LAYOUT, hide_unresolved: bool = True):
        self.client = client
        self.hide_unresolved = hide_unresolved  # new works judged another's: written hidden
        self._neighbours = Neighbours()  # what the judgment of new works has read
        self._created_at = -REFRESH_AFTER  # time.monotonic() of this writer's last new work
        self.prefix = prefix
        self.layout = layout
        self.dead_letters = dead_letters
        self.policy = policy  # rounds per batch, and the backoff after a transient error
        self.limits = limits or RequestLimits()
        self._sleep = sleep
        self._backoff = self.policy.wait()
        self._tombstones: str | None = None  # the tombstones index, once known to exist
        self.joiner = WorkJoiner(client, prefix, policy, sleep, layout)
        # Work documents delivered by this ``write`` that carry a verified match: to join.
        self._joinable: dict[str, WorkDoc] = {}

    def write(self, changes: Iterable[Change], *, hold: bool = False) -> WriteReport:
        """Deliver every change or dead-letter it; never raises for a failed request.

        ``hold``: changes the cluster stayed unavailable for (retries ran out on a
        connection error, 429 or 5xx) go back in ``report.held`` instead of the
        dead-letter file.
        """
        report = WriteReport()
        batch = list(changes)
        self._joinable = {}
        try:
            unlists, batch = self._unlists(batch, report, hold)
        except IndexUnavailable as exc:  # not retryable: auth, TLS, missing index
            self._fatal(report, exc, batch)
            return report
        if unlists:
            self._deliver(unlists, report, hold)
        if report.fatal:
            self._dead(report, batch, UNAVAILABLE, report.fatal)
        elif report.held:
            # The unlists must land first (see the module doc): the batch waits, and the
            # next write works them out again from the stored profiles, still unchanged.
            report.held = batch
        else:
            self._deliver(batch, report, hold)
        if not report.fatal:
            self._join(report)
        return report

    def _join(self, report: WriteReport) -> None:
        """Merge the delivered works that are one paper (``scholarindex.indexing.identity``).

        Nothing is lost when it fails: every listing is still in a document, and the
        next write of any document of the paper joins them.
        """
        joinable, self._joinable = self._joinable, {}
        if not joinable:
            return
        try:
            joined = self.joiner.join(joinable)
        except IndexUnavailable as exc:
            logger.warning("could not join the works of one paper yet (the next write of "
                           "one of them will): %s", exc)
            return
        report.works_joined += joined.works_joined
        report.docs_written += joined.docs_written
        report.conflicts += joined.conflicts
        report.bulk_requests += joined.bulk_requests
        report.written |= {("works", wid) for wid in joined.written}

    def _deliver(self, changes: Iterable[Change], report: WriteReport, hold: bool) -> None:
        pending = _group(changes)
        rounds = 0
        try:
            for attempt in self._retrying(report):
                with attempt:
                    rounds += 1
                    self._round(pending, report)
                    if pending:
                        raise _Unfinished(pending.values())
        except _Unfinished:
            attempts = rounds
            held = [doc for doc in pending.values() if hold and doc.transient]
            if held:
                self._hold(report, held)
            lost = [doc for doc in pending.values() if not (hold and doc.transient)]
            for doc in lost:
                code = UNAVAILABLE if doc.transient else CONFLICT
                self._dead(report, doc.changes, code,
                           f"gave up after {attempts} attempts: {doc.last_error}")
            if lost:
                logger.error("gave up on %d document(s) after %d attempts; dead-lettered to %s",
                             len(lost), attempts, self.dead_letters.path)
        except IndexUnavailable as exc:  # not retryable: auth, TLS, missing index
            self._fatal(report, exc, [c for doc in pending.values() for c in doc.changes])

    @staticmethod
    def _hold(report: WriteReport, docs: list[_Doc]) -> None:
        report.held += [change for doc in docs for change in doc.changes]
        report.held_reason = docs[-1].last_error
        logger.warning("OpenSearch stayed unavailable for %d document(s); holding them: %s",
                       len(docs), report.held_reason)

    def _fatal(self, report: WriteReport, exc: IndexUnavailable, changes: list[Change]) -> None:
        report.fatal = str(exc)
        self._dead(report, changes, UNAVAILABLE, str(exc))
        logger.error("OpenSearch refused the batch: %s; %d change(s) dead-lettered to %s",
                     exc, len(changes), self.dead_letters.path)

    def _retrying(self, report: WriteReport) -> Retrying:
        def count_retries(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Unfinished):
                report.retries += exc.transient_docs

        transient: set[int] = set()  # the rounds that failed for the cluster, by number

        def stop(state: RetryCallState) -> bool:
            """After the policy's attempts of transient failures, or ``CONFLICT_ROUNDS``
            more rounds in all (conflicts only: another writer got there first)."""
            exc = state.outcome.exception() if state.outcome else None
            if not isinstance(exc, _Unfinished) or exc.transient:
                transient.add(state.attempt_number)
            return (len(transient) >= self.policy.attempts
                    or state.attempt_number >= self.policy.attempts + CONFLICT_ROUNDS)

        return Retrying(stop=stop,
                        wait=self._wait, retry=retry_if_exception_type(_Unfinished),
                        before_sleep=count_retries, sleep=self._sleep, reraise=True)

    # --- removed works -----------------------------------------------------------------

    def _unlists(self, batch: list[Change], report: WriteReport, hold: bool = False
                 ) -> tuple[list[Change], list[Change]]:
        """(unlist changes the batch's complete pages imply, the batch to write after them).

        Compared with the stored profiles as read now; a profile that cannot be read
        is dead-lettered rather than written, since writing it would forget the works
        it used to list (the replay compares again).
        """
        wanting = [c for c in batch if wants_unlisting(c)]
        if not wanting:
            return [], batch
        profiles = {("researchers", c.doc_id): _Doc("researchers", c.doc_id, [])
                    for c in wanting}
        try:
            for attempt in self._retrying(report):
                with attempt:
                    if not self._read(profiles):
                        raise _Unfinished(profiles.values())
        except _Unfinished:
            reason = next(iter(profiles.values())).last_error
            if hold:  # the cluster is down: the whole batch waits for it (``write``)
                report.held, report.held_reason = list(batch), reason
                logger.warning("OpenSearch stayed unavailable; holding %d change(s): %s",
                               len(batch), reason)
                return [], batch
            self._dead(report, wanting, UNAVAILABLE,
                       f"could not read the stored profile to find removed works: {reason}")
            unread = {id(c) for c in wanting}
            return [], [c for c in batch if id(c) not in unread]
        # A work the batch lists for this profile stays, whatever the page item says.
        listed: dict[str, set[str]] = {}
        for change in batch:
            if change.kind == "work":
                listed.setdefault(str(change.data.get("researcher_id")), set()).add(change.doc_id)
        unlists: dict[tuple[str, str], Change] = {}
        for change in wanting:
            stored = researcher_of(profiles[("researchers", change.doc_id)].base)
            for unlist in unlist_changes(stored, change, listed.get(change.doc_id, set())):
                key = (unlist.doc_id, change.doc_id)
                if key not in unlists or unlist.seen_at > unlists[key].seen_at:
                    unlists[key] = unlist
        return list(unlists.values()), batch

    # --- one round: read, merge, write -------------------------------------------------

    def _round(self, pending: dict[tuple[str, str], _Doc], report: WriteReport) -> None:
        if not self._read(pending):
            return
        for _ in range(MAX_HOPS):
            try:
                if not self._follow_redirects(pending):
                    break
            except IndexUnavailable as exc:
                if not exc.retryable:
                    raise
                self._unavailable(list(pending.values()), exc)
                return
            if not self._read(pending):
                return
        ready: list[_Doc] = []
        for key, doc in list(pending.items()):
            self._merge(doc, report)
            if not doc.changes:
                del pending[key]
            else:
                ready.append(doc)
        try:
            self._hide_unresolved(ready)
        except IndexUnavailable as exc:  # retryable (``hiders``): this round again, later
            self._unavailable(list(pending.values()), exc)
            return
        buried = [doc for doc in ready if doc.tombstone_merged != doc.tombstone]
        if buried:  # tombstones first: whoever reads the work after this round sees them
            self._send([self._tombstone_action(doc) for doc in buried], pending, report,
                       self._settle_tombstone)
        actions: list[tuple[_Doc, BulkAction]] = []
        for doc in ready:
            if (doc.index, doc.doc_id) not in pending or doc.tombstone_merged != doc.tombstone:
                continue  # its tombstone is not written yet: the next round
            if _unchanged(doc.base, doc.merged):  # in the index as it would be written
                self._delivered(doc, report, written=False)
                del pending[(doc.index, doc.doc_id)]
            else:
                actions.append(self._action(doc))
        if actions:
            self._send(actions, pending, report)

    def _hide_unresolved(self, ready: list[_Doc]) -> None:
        """New works resolution would join to another are written hidden
        (``scholarindex.indexing.unresolved``): a search never shows a paper twice."""
        if not self.hide_unresolved:
            return
        new = {doc.doc_id: doc for doc in ready if doc.index == "works" and doc.base is None
               and isinstance(doc.merged, dict) and not doc.merged.get(HIDDEN)}
        fresh = time.monotonic() - self._created_at > REFRESH_AFTER
        found = hiders(self.client, alias_name(self.prefix, "works"),
                       {doc_id: work_of(doc.merged) for doc_id, doc in new.items()
                        if doc.merged is not None}, fresh=fresh,
                       neighbours=self._neighbours)
        for doc_id, hider in found.items():
            new[doc_id].merged = {**new[doc_id].merged, HIDDEN: hider}  # type: ignore[dict-item]

    def _read(self, pending: dict[tuple[str, str], _Doc]) -> bool:
        """Load the current version of every pending document; False if the cluster failed."""
        docs = list(pending.values())
        for doc in docs:
            doc.retry_after = None  # a new round: only this round's answers count
        try:
            for doc, hit in self._mget(docs, self._alias, "mget"):
                doc.base = hit.get("_source") if hit.get("found") else None
                doc.seq = (hit.get("_seq_no"), hit.get("_primary_term"))
                doc.source_index = hit.get("_index") if hit.get("found") else None
            self._read_tombstones([doc for doc in docs if doc.needs_tombstone])
        except IndexUnavailable as exc:
            if not exc.retryable:
                raise
            self._unavailable(docs, exc)
            return False
        return True

    @staticmethod
    def _unavailable(docs: list[_Doc], exc: IndexUnavailable) -> None:
        for doc in docs:
            doc.transient, doc.last_error, doc.retry_after = True, str(exc), exc.retry_after
        logger.warning("OpenSearch read failed, will retry: %s", exc)

    def _follow_redirects(self, pending: dict[tuple[str, str], _Doc]) -> bool:
        """Send the changes of works the index does not hold to the documents their ids
        were merged into; True when some moved (the round reads again).

        Changes moved earlier to a document that is gone since go back to their own id
        first, then follow again: a change is never folded into a document that does
        not hold its ``work_id``.
        """
        missing = [doc for key, doc in pending.items()
                   if key[0] == "works" and doc.base is None]
        if not missing:
            return False
        moved = False
        for doc in missing:
            strays = [c for c in doc.changes if c.doc_id != doc.doc_id]
            if strays:
                doc.changes = [c for c in doc.changes if c.doc_id == doc.doc_id]
                for change in strays:
                    _add(pending, "works", change.doc_id, change)
                moved = True
        ids = sorted({c.doc_id for key, doc in pending.items()
                      if key[0] == "works" and doc.base is None for c in doc.changes})
        targets = self.joiner.redirects(ids) if ids else {}
        for work_id, target in targets.items():
            source = pending.get(("works", work_id))
            if source is None:
                continue
            going = [c for c in source.changes if c.doc_id == work_id]
            source.changes = [c for c in source.changes if c.doc_id != work_id]
            for change in going:
                _add(pending, "works", target, change)
            moved = True
        for key in [k for k, doc in pending.items() if not doc.changes]:
            del pending[key]
        return moved

    def _read_tombstones(self, docs: list[_Doc]) -> None:
        """Load the tombstones of works read just before (after them: see the docstring)."""
        if not docs:
            return
        if self._tombstones is None:
            self._tombstones = ensure_plain_index(self.client, self.prefix, TOMBSTONES_INDEX,
                                                  self.layout)
        index = self._tombstones
        for doc, hit in self._mget(docs, lambda _doc: index, "mget tombstones"):
            doc.tombstone = tombstone_of(hit.get("_source") if hit.get("found") else None)
            doc.tombstone_seq = (hit.get("_seq_no"), hit.get("_primary_term"))

    def _mget(self, docs: list[_Doc], index_of: Callable[[_Doc], str], what: str
              ) -> Iterator[tuple[_Doc, dict[str, Any]]]:
        """Each document with its hit in ``index_of(doc)``, read in requests of ``max_docs``."""
        wanted = [(index_of(doc), doc.doc_id) for doc in docs]
        hits = mget_hits(self.client, wanted, self.limits.max_docs, what)
        yield from zip(docs, hits, strict=True)

    def _merge(self, doc: _Doc, report: WriteReport) -> None:
        """Fold the document's changes into its current version; drop invalid changes.

        A listing and the enrichment it carries that cannot be folded as one (the
        listing is invalid, or left out with no document to enrich) are split into the
        two changes they stand for (``split_enrichment``), each folded, delivered or
        dead-lettered on its own.
        """
        merged, tombstone = doc.base, doc.tombstone
        doc.unlisted = doc.ignored = doc.carried = 0
        position = 0
        while position < len(doc.changes):
            change = doc.changes[position]
            try:
                before = merged
                if doc.index == "works":
                    folded = fold_with_tombstone(work_of(merged), tombstone, change)
                    if folded.unapplied is not None:
                        split_enrichment(doc.changes, position)
                    merged, tombstone = folded.doc, folded.tombstone
                    doc.ignored += folded.ignored
                else:
                    merged = fold_change(merged, change)
                if change.kind == "unlist":
                    researcher = change.data["researcher_id"]
                    doc.unlisted += lists(before, researcher) and not lists(merged, researcher)
                doc.carried += doc.changes[position].enriched
                position += 1
            except InvalidItem as exc:
                if change.enriched:  # the listing or its enrichment: fold them apart
                    split_enrichment(doc.changes, position)
                    continue
                del doc.changes[position]
                code = MISSING if isinstance(exc, MissingDocument) else INVALID
                self._dead(report, [change], code, str(exc))
        if merged is None and doc.base is not None and tombstone is not None:
            # The work is gone: its tombstone keeps its keys for the next resolution pass,
            # which looks again at the works it was compared with (``resolve_pending``).
            tombstone = {**tombstone, "resolve_pending": sorted(
                {*(tombstone.get("resolve_pending") or ()),
                 *(doc.base.get("resolve_pending") or ()),
                 *(doc.base.get("blocking_keys") or ())})}
        doc.merged, doc.tombstone_merged = merged, tombstone

    def _tombstone_action(self, doc: _Doc) -> tuple[_Doc, BulkAction]:
        assert self._tombstones is not None  # read in this round (``_read_tombstones``)
        if doc.tombstone is None:
            return doc, BulkAction("create", self._tombstones, doc.doc_id, doc.tombstone_merged)
        return doc, BulkAction("index", self._tombstones, doc.doc_id, doc.tombstone_merged,
                               doc.tombstone_seq)

    def _action(self, doc: _Doc) -> tuple[_Doc, BulkAction]:
        if doc.merged is None:  # its last listing was unlisted: delete what we read, only
            return doc, BulkAction("delete", doc.source_index or self._alias(doc), doc.doc_id,
                                   seq=doc.seq)
        if doc.base is None:
            return doc, BulkAction("create", self._alias(doc), doc.doc_id, doc.merged)
        return doc, BulkAction("index", doc.source_index or self._alias(doc), doc.doc_id,
                               doc.merged, doc.seq)

    def _send(self, actions: list[tuple[_Doc, BulkAction]],
              pending: dict[tuple[str, str], _Doc], report: WriteReport,
              settle: Callable[..., None] | None = None) -> None:
        """The round's writes, in bulk requests cut to the limits (``indexing.bulkbody``).

        A request that fails on the way leaves its documents and the rest of the round
        for the next round, after the backoff. ``settle`` acts on each result
        (default: ``_settle``, for the documents themselves).
        """
        settle = settle or self._settle
        answered = 0
        try:
            with translate_errors("bulk"):
                for docs, body in requests(actions, self.limits.max_docs, self.limits.max_bytes):
                    report.bulk_requests += 1
                    items = self.client.bulk(body=body)["items"]
                    # An answer short of items (a broken proxy) leaves the documents it
                    # does not name pending: the next round reads and merges them again.
                    for doc, item in zip(docs, items, strict=False):
                        settle(doc, next(iter(item.values())), pending, report)
                        answered += 1
        except IndexUnavailable as exc:
            if not exc.retryable:
                raise
            logger.warning("bulk request failed, will retry: %s", exc)
            for doc, _ in actions[answered:]:
                doc.transient, doc.last_error, doc.retry_after = True, str(exc), exc.retry_after

    def _settle(self, doc: _Doc, info: Mapping[str, Any], pending: dict[tuple[str, str], _Doc],
                report: WriteReport) -> None:
        """Act on one document's bulk result."""
        result = classify_item(info)
        key = (doc.index, doc.doc_id)
        if result.outcome == "ok":
            self._delivered(doc, report, written=True)
            del pending[key]
        elif not _try_again(doc, result, report):
            self._dead(report, doc.changes, REJECTED, result.reason, doc.merged)
            logger.error("OpenSearch rejected %s %s: %s", doc.index, doc.doc_id, result.reason)
            del pending[key]

    def _settle_tombstone(self, doc: _Doc, info: Mapping[str, Any],
                          pending: dict[tuple[str, str], _Doc], report: WriteReport) -> None:
        """Act on one tombstone's bulk result: written, the work may follow this round."""
        result = classify_item(info)
        if result.outcome == "ok":
            doc.tombstone = doc.tombstone_merged
            doc.tombstone_seq = (info.get("_seq_no"), info.get("_primary_term"))
        elif not _try_again(doc, result, report):
            self._dead(report, doc.changes, REJECTED, result.reason, doc.tombstone_merged)
            logger.error("OpenSearch rejected the tombstone of %s: %s", doc.doc_id, result.reason)
            del pending[(doc.index, doc.doc_id)]

    # --- bookkeeping -------------------------------------------------------------------

    def _delivered(self, doc: _Doc, report: WriteReport, *, written: bool) -> None:
        kinds = Counter(change.kind for change in doc.changes)
        kinds["work"] -= doc.ignored
        report.listings_ignored += doc.ignored
        report.listings_delivered += kinds["work"]
        report.researchers_delivered += kinds["researcher"]
        report.enrichments_delivered += kinds["enrichment"] + doc.carried
        report.enrichments_carried += doc.carried
        report.unlists_delivered += kinds["unlist"]
        created = written and doc.base is None
        if created and doc.index == "works":
            self._created_at = time.monotonic()
        # Listings that joined a document already holding a listing.
        report.merged += max(0, kinds["work"] - (1 if created and doc.index == "works" else 0))
        if written:
            report.unlisted += doc.unlisted
        if doc.index == "works" and doc.merged is not None and identity_keys(doc.merged):
            self._joinable[doc.doc_id] = work_of(doc.merged)
        if written and doc.merged is None:
            report.docs_deleted += 1
        elif written:
            report.docs_written += 1
            report.docs_created += created
            report.written.add((doc.index, doc.doc_id))
        else:
            report.docs_unchanged += 1

    def _dead(self, report: WriteReport, changes: list[Change], code: str, reason: str,
              document: Mapping[str, Any] | None = None) -> None:
        if not changes:
            return
        letters: list[DeadLetter] = [dead_letter(c, code, reason, document) for c in changes]
        self.dead_letters.write(letters)
        report.dead_lettered += len(letters)
        report.dead_letter_codes[code] += len(letters)

    def _alias(self, doc: _Doc) -> str:
        return alias_name(self.prefix, doc.index)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Unfinished) and not exc.transient:
            # Only conflicts: re-read at once, with jitter that grows with the rounds so
            # that rivals writing the same documents fall out of lockstep.
            return random.uniform(0, min(CONFLICT_WAIT_MAX,
                                         0.05 * 2 ** min(state.attempt_number - 1, 10)))
        return float(self._backoff(state))


def _unchanged(base: Mapping[str, Any] | None, merged: Mapping[str, Any] | None) -> bool:
    """``merged == base``. A re-crawl moves ``last_seen``, which tells the two apart
    at once; comparing whole documents first walked every listing of each."""
    if base is None or merged is None:
        return merged is base
    return base.get("last_seen") == merged.get("last_seen") and merged == base


def _group(changes: Iterable[Change]) -> dict[tuple[str, str], _Doc]:
    docs: dict[tuple[str, str], _Doc] = {}
    for change in changes:
        _add(docs, change.index, change.doc_id, change)
    return docs


def _add(docs: dict[tuple[str, str], _Doc], index: str, doc_id: str, change: Change) -> None:
    """``change`` into document ``doc_id``'s changes, kept in ``_KIND_ORDER`` (stable)."""
    doc = docs.setdefault((index, doc_id), _Doc(index, doc_id, []))
    doc.changes.append(change)
    doc.changes.sort(key=lambda c: _KIND_ORDER[c.kind])


def _try_again(doc: _Doc, result: ItemResult, report: WriteReport) -> bool:
    """Mark ``doc`` for the next round after a conflict (re-read, re-merge) or a
    transient failure (back off); False for a refusal, which is final."""
    if result.outcome == "conflict":
        report.conflicts += 1
        doc.transient, doc.last_error = False, result.reason
        return True
    if result.outcome == "retry":
        doc.transient, doc.last_error = True, result.reason
        return True
    return False
