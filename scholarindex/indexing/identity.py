"""One work per paper beyond the title: documents under several ``work_id``s joined.

``scholarindex.core.identity.work_id`` makes listings with the same folded title one work. A paper
listed under its preprint title on one profile and its later title on another gets
two ``work_id``s; once both documents carry the same verified arXiv paper (or the
same DOI), they are one work. ``WorkJoiner`` joins them after the writer delivered
them; ``redirects`` sends later changes of a joined id to the document holding it.

Identity keys: ``arxiv:<id>`` and ``doi:<doi>`` of a verified match (``identity_keys``), one
``doi:`` key per DOI when the field holds several (``scholarindex.core.identity.split_dois``).
Index ``{prefix}work-identities`` (plain, never reindexed) holds two kinds of document:

- a *key* (``_id`` the key): the ``work_ids`` whose documents carried it. It is the
  rendezvous of concurrent writers: each writes its document first, then adds its id
  to the key (``create``, or ``index`` with ``if_seq_no``: a 409 re-reads), then reads
  the key's documents. Of two writers bringing the two titles at once, the one that
  adds its id second sees the other's id, and that document already holds what the
  other wrote, so at least one of them merges everything;
- a *redirect* (``_id`` ``redirect:<work_id>``): that id was merged into
  ``merged_into``.

Joining a group (``_join_group``), with the documents read (``_seq_no``) as of now:

1. the canonical document is the smallest ``work_id`` among the live documents, so
   two writers agree (``documents.merge_works`` folds them: listings keep the id
   they came under, ``work_ids`` lists every id);
2. the redirects of the others are written, and the canonical document and its
   tombstone (the group's tombstones merged) with ``if_seq_no`` (one bulk request);
   only when all landed
3. the others are deleted with ``if_seq_no`` (a second request).

A 409 anywhere re-reads the group and merges again (merges are idempotent). The
search never misses the paper: the canonical document holds everything before the
others go, so for an instant (one bulk request, or until a conflict's re-merge) both
may be visible, never neither. A redirect lives outside ``works``, so searches,
facets, counts, status, reindex and verification see only live documents, as with
tombstones.

Later changes (``redirects``): a change for a ``work_id`` the works index does not
hold follows its redirect (chains too) to a document that lists the id in
``work_ids``; the redirect is written before the document is deleted, so a writer
that reads the document after the delete finds the redirect. A redirect to a
document that no longer holds the id (deleted when its last profile unlisted it) is
not followed: the change makes a document of its own, as for a new work.

The tombstones of the absorbed documents (``scholarindex.indexing.tombstones``) join the canonical
document's in the first request, so a listing older than an unlist made before the
join, replayed after it, still stays out.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.atoms import atoms_of, doc_keys, identity_keys
from scholarindex.indexing.client import classify_item, mget_hits, translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.documents import (
    doc_work_ids,
    merge_works,
    regroup_works,
    resolution_link,
    timestamp,
    unlist_listing,
)
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import (
    IDENTITIES_INDEX,
    TOMBSTONES_INDEX,
    alias_name,
    ensure_plain_index,
)
from scholarindex.indexing.neighbourhood import PENDING as RESOLVE_PENDING
from scholarindex.indexing.shapes import (
    ResolutionLink,
    TombstoneDoc,
    WorkDoc,
    tombstone_of,
    work_of,
)
from scholarindex.indexing.tombstones import merge_tombstones, records
from scholarindex.indexing.unresolved import HIDDEN

logger = logging.getLogger(__name__)

REDIRECT_PREFIX = "redirect:"
MAX_HOPS = 8  # redirect chains (a merged work merged again) and closure rounds
# Documents one mget asks for at most (the writer's ``RequestLimits.max_docs``): the
# resolution pass after the 4 x 2,000 soak read its 28,765 changed works in one request,
# which timed out (30 s) on the loaded cluster.
READ_PART = 1000


def redirect_doc(work_id: str, merged_into: str, at: str | None = None) -> dict[str, Any]:
    """The record that ``work_id`` now lives in document ``merged_into``."""
    return {"work_id": work_id, "merged_into": merged_into, "merged_at": timestamp(at)}


@dataclass
class JoinReport:
    """What one ``WorkJoiner.join`` did."""

    works_joined: int = 0  # documents merged into another (now redirects)
    docs_written: int = 0  # canonical documents written
    conflicts: int = 0
    bulk_requests: int = 0
    written: set[str] = field(default_factory=set)  # canonical work_ids written


@dataclass
class RegroupReport:
    """What one ``WorkJoiner.regroup`` did."""

    conflict: bool = False  # a document changed since the caller read it: nothing done
    written: set[str] = field(default_factory=set)  # documents written (new or changed)
    deleted: set[str] = field(default_factory=set)  # documents no group keeps


@dataclass
class _Read:
    doc: Mapping[str, Any] | None
    seq: tuple[int | None, int | None]
    index: str | None

    @property
    def work(self) -> WorkDoc | None:
        return work_of(self.doc)

    @property
    def tombstone(self) -> TombstoneDoc | None:
        return tombstone_of(self.doc)


class _Conflict(Exception):
    """Another writer changed what this join read: read again."""


class WorkJoiner:
    """Joins the documents of one paper (see the module doc) and follows redirects."""

    def __init__(self, client: OpenSearch, prefix: str, policy: RetryPolicy,
                 sleep: Callable[[float], None] = time.sleep,
                 layout: IndexLayout = DEFAULT_LAYOUT):
        self.client = client
        self.prefix = prefix
        self.layout = layout
        self.policy = policy
        self._sleep = sleep
        self._index: str | None = None
        self._tombstone_index: str | None = None

    @property
    def index(self) -> str:
        """The identities index, created on first use."""
        if self._index is None:
            self._index = ensure_plain_index(self.client, self.prefix, IDENTITIES_INDEX,
                                             self.layout)
        return self._index

    def _tombstones(self) -> str:
        if self._tombstone_index is None:
            self._tombstone_index = ensure_plain_index(
                self.client, self.prefix, TOMBSTONES_INDEX, self.layout)
        return self._tombstone_index

    # --- later changes: follow redirects ------------------------------------------------

    def redirects(self, work_ids: Iterable[str]) -> dict[str, str]:
        """For ids the works index does not hold: the live document holding each, if any.

        Follows chains (an id merged into one that was merged again); the target must
        list the id in its ``work_ids``. Raises ``IndexUnavailable``.
        """
        found: dict[str, str] = {}
        current = {wid: wid for wid in dict.fromkeys(work_ids)}  # original -> id to look up
        for _ in range(MAX_HOPS):
            if not current:
                break
            hops = self._mget(self.index, [REDIRECT_PREFIX + v for v in set(current.values())])
            targets = {key.removeprefix(REDIRECT_PREFIX): read.doc["merged_into"]
                       for key, read in hops.items() if read.doc}
            current = {wid: targets[via] for wid, via in current.items() if via in targets}
            if not current:
                break
            docs = self._mget(alias_name(self.prefix, "works"), set(current.values()))
            for wid, target in list(current.items()):
                doc = docs[target].work
                if doc is not None:
                    del current[wid]
                    if wid in doc_work_ids(doc):
                        found[wid] = target
        return found

    # --- joining ------------------------------------------------------------------------

    def join(self, docs: Mapping[str, WorkDoc]) -> JoinReport:
        """Register each delivered work document under its keys, and join each group of
        live documents sharing a key into one. ``docs``: work_id -> document as written.

        Raises ``IndexUnavailable`` when the cluster fails past the retries; what was
        not joined then is joined by the next write of any document of the group.
        """
        report = JoinReport()
        keys_of = {wid: identity_keys(doc) for wid, doc in docs.items()}
        keys_of = {wid: keys for wid, keys in keys_of.items() if keys}
        if not keys_of:
            return report
        members = self._retry(report, lambda: self._register(keys_of, report))
        done: set[str] = set()
        for wid in sorted(keys_of):
            group = {m for key in keys_of[wid] for m in members.get(key, ())}
            if wid in done or len(group) < 2:
                continue
            joined = self._retry(report, partial(self._join_group, wid, keys_of[wid], group,
                                                 report))
            done |= joined
        return report

    def _retry(self, report: JoinReport, step: Callable[[], Any]) -> Any:
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return step()
            except _Conflict:
                report.conflicts += 1
                self._sleep(random.uniform(0, 0.05))
            except IndexUnavailable as exc:
                if not exc.retryable or attempt == self.policy.attempts:
                    raise
                self._sleep(self.policy.delay_after(attempt, exc.retry_after))
        raise IndexUnavailable(f"joining works: still conflicting after "
                               f"{self.policy.attempts} attempts", retryable=True)

    def _register(self, keys_of: Mapping[str, list[str]],
                  report: JoinReport) -> dict[str, list[str]]:
        """Every key's ids once ours are added (written with OCC); key -> work_ids."""
        wanted: dict[str, set[str]] = {}
        for wid, keys in keys_of.items():
            for key in keys:
                wanted.setdefault(key, set()).add(wid)
        stored = self._mget(self.index, wanted)
        members: dict[str, list[str]] = {}
        actions = []
        for key, ids in wanted.items():
            read = stored[key]
            have = set((read.doc or {}).get("work_ids") or ())
            members[key] = sorted(have | ids)
            if ids <= have:
                continue
            action: dict[str, Any] = {"_index": self.index, "_id": key,
                                      "_source": {"key": key, "work_ids": members[key]}}
            actions.append(_conditional(action, read))
        if actions and not self._bulk(actions, report):
            raise _Conflict()
        return members

    def _join_group(self, seed: str, seed_keys: list[str], group: set[str],
                    report: JoinReport) -> set[str]:
        """Join the live documents of ``seed``'s group; returns the ids looked at."""
        works = alias_name(self.prefix, "works")
        ids = set(group) | {seed}
        keys = set(seed_keys)
        live: dict[str, _Read] = {}
        for _ in range(MAX_HOPS):  # the closure: live documents sharing a key of the group
            ids |= {m for r in self._mget(self.index, keys).values()
                    for m in (r.doc or {}).get("work_ids") or ()}
            live = {wid: r for wid, r in self._mget(works, ids).items()
                    if r.work is not None and set(identity_keys(r.work)) & keys}
            grown = keys | {k for r in live.values() for k in identity_keys(r.work)}
            if grown == keys:
                break
            keys = grown
        if len(live) < 2:
            return ids
        canonical = min(live)
        tombstones = self._mget(self._tombstones(), live)  # after the works, as the writer
        tombstone = merge_tombstones(canonical, (t.tombstone for t in tombstones.values()))
        why = [resolution_link(wid, canonical, "identity", evidence=[f"same {key}" for key in
                                                                      sorted(keys)])
               for wid in live if wid != canonical]
        merged: WorkDoc | None = merge_works(
            (w for r in live.values() if (w := r.work) is not None), why)
        for entry in records(tombstone):
            # A listing a stale copy still held after its profile unlisted it stays out
            # (``merge_tombstones`` keeps the time of every record an unlist wrote).
            merged = unlist_listing(merged, entry["researcher_id"],
                                    entry["unlisted_at"])  # type: ignore[arg-type]
        if merged is None:  # every listing unlisted meanwhile: the unlists delete them
            return ids
        absorbed = sorted(wid for wid in live if wid != canonical)
        if self._hide(absorbed, live, dict.fromkeys(absorbed, canonical), works):
            raise _Conflict()
        first: list[dict[str, Any]] = [
            {"_op_type": "index", "_index": self.index, "_id": REDIRECT_PREFIX + wid,
             "_source": redirect_doc(wid, canonical)} for wid in absorbed]
        target = live[canonical]
        if tombstone is not None and tombstone != tombstones[canonical].doc:
            first.append(_conditional({"_index": self._tombstones(), "_id": canonical,
                                       "_source": tombstone}, tombstones[canonical]))
        if merged != target.doc:
            first.append(_conditional({"_index": target.index or works, "_id": canonical,
                                       "_source": merged}, target))
        if not self._bulk(first, report):
            raise _Conflict()
        if merged != target.doc:
            report.docs_written += 1
            report.written.add(canonical)
        deletes = [{"_op_type": "delete", "_index": live[wid].index or works, "_id": wid,
                    "if_seq_no": live[wid].seq[0], "if_primary_term": live[wid].seq[1]}
                   for wid in absorbed]
        if not self._bulk(deletes, report):
            raise _Conflict()
        report.works_joined += len(absorbed)
        logger.info("joined work(s) %s into %s (keys %s)", ", ".join(absorbed), canonical,
                    ", ".join(sorted(keys)))
        return ids

    # --- regrouping: the resolution pass's joins and splits -----------------------------

    def regroup(self, held: Mapping[str, Iterable[str]], groups: Iterable[Iterable[str]],
                links: Iterable[ResolutionLink] = ()) -> RegroupReport:
        """Make each of ``groups`` (sets of work_ids) one document.

        ``held``: the documents involved as the caller read them (doc id -> the work_ids
        it held); they are read again, and if one changed (a crawl wrote it meanwhile)
        nothing is written and ``RegroupReport.conflict`` is set: the caller plans again
        from a fresh read. The new documents and their redirects and tombstones go first,
        with ``if_seq_no``, the documents no group keeps are deleted after (a second
        request, conditional too), so a search sees the paper throughout, as in a join.
        Raises ``IndexUnavailable``.
        """
        return self.regroup_many([(held, groups, links)])[0]

    def regroup_many(self, regroups: Sequence[tuple[Mapping[str, Iterable[str]],
                                                    Iterable[Iterable[str]],
                                                    Iterable[ResolutionLink]]]
                     ) -> list[RegroupReport]:
        """``regroup`` each of ``regroups`` (held, groups, links; no document in two),
        each step of all of them in one request: the hiding's forced refresh, most of a
        regroup's time, is made once for all. A conflict stops its own regroup only."""
        works = alias_name(self.prefix, "works")
        reports = [RegroupReport() for _ in regroups]
        expected = [{doc_id: set(ids) for doc_id, ids in held.items()}
                    for held, _, _ in regroups]
        reads = self._mget(works, {d for docs in expected for d in docs})
        steps = []  # (report, live documents, new documents, documents gone)
        for report, wanted, (_, groups, links) in zip(reports, expected, regroups, strict=True):
            mine = {doc_id: reads[doc_id] for doc_id in wanted}
            if any(read.work is None or set(doc_work_ids(read.work)) != wanted[doc_id]
                   for doc_id, read in mine.items()):
                report.conflict = True
                continue
            live = {doc_id: w for doc_id, read in mine.items() if (w := read.work) is not None}
            new_docs = {d["work_id"]: d for d in regroup_works(live.values(), groups, links)}
            if set(new_docs) == set(live) and all(new_docs[i] == live[i] for i in live):
                continue
            steps.append((report, live, new_docs, sorted(set(live) - set(new_docs))))
        holder: dict[str, str] = {}  # each document gone -> the one that takes its listings
        for _, _, new_docs, gone in steps:
            takes = {wid: doc_id for doc_id, doc in new_docs.items() for wid in doc_work_ids(doc)}
            holder.update((wid, takes.get(wid, min(new_docs, default=wid))) for wid in gone)
        missed = self._hide(sorted(holder), reads, holder, works)
        for report, _, _, gone in steps:
            report.conflict = not missed.isdisjoint(gone)
        steps = [step for step in steps if not step[0].conflict]
        tombstones = self._mget(self._tombstones(),
                                {d for _, live, new_docs, _ in steps for d in (*live, *new_docs)})
        first: list[tuple[RegroupReport, dict[str, Any]]] = []
        for report, live, new_docs, _ in steps:
            old_tombstone = merge_tombstones(
                "", (tombstones[d].tombstone for d in (*live, *new_docs)))
            for doc_id, doc in sorted(new_docs.items()):
                for wid in doc_work_ids(doc):
                    if wid != doc_id:
                        first.append((report, {"_op_type": "index", "_index": self.index,
                                               "_id": REDIRECT_PREFIX + wid,
                                               "_source": redirect_doc(wid, doc_id)}))
                if old_tombstone is not None:  # each part keeps every unlist, as a join does
                    tombstone = {**old_tombstone, "work_id": doc_id}
                    if tombstone != tombstones[doc_id].doc:
                        first.append((report, _conditional(
                            {"_index": self._tombstones(), "_id": doc_id, "_source": tombstone},
                            tombstones[doc_id])))
                read = reads.get(doc_id) or _Read(None, (None, None), None)
                if doc != read.doc:
                    first.append((report, _conditional(
                        {"_index": read.index or works, "_id": doc_id, "_source": doc}, read)))
                    report.written.add(doc_id)
        conflicted = self._bulk_each([action for _, action in first])
        for (report, _), bad in zip(first, conflicted, strict=True):
            if bad:
                report.conflict, report.written = True, set()
        deletes = [(report, wid) for report, _, _, gone in steps for wid in gone
                   if not report.conflict]
        conflicted = self._bulk_each([
            {"_op_type": "delete", "_index": reads[wid].index or works, "_id": wid,
             "if_seq_no": reads[wid].seq[0], "if_primary_term": reads[wid].seq[1]}
            for _, wid in deletes])
        for (report, wid), bad in zip(deletes, conflicted, strict=True):
            report.deleted.add(wid)
            report.conflict |= bad  # a crawl wrote one meanwhile: the next pass sees it
        return reports

    def _hide(self, gone: list[str], reads: dict[str, _Read], holder: Mapping[str, str],
              works: str) -> set[str]:
        """Hide the documents a regroup or a join will delete before it writes the
        documents that take their listings, and make the hiding searchable first (a
        forced refresh of the shards written): a search never sees a paper in both. The
        order of two writes is no promise to a refresh: within one bulk request, or on
        two shards, which refresh each on their own. Marked too, for the next pass, in
        case a crawl's write makes the delete fail. Updates ``reads`` with the hidden
        versions; returns those a crawl changed meanwhile (not hidden)."""
        lines: list[Any] = []
        hidden: dict[str, WorkDoc] = {}
        for wid in gone:
            read = reads[wid]
            doc = read.work
            assert doc is not None
            lines.append({"index": {"_index": read.index or works, "_id": wid,
                                    "if_seq_no": read.seq[0], "if_primary_term": read.seq[1]}})
            # Marked too: a crawl that writes into it before the delete makes the delete
            # fail, and the mark (kept by every merge) brings the next pass back to it.
            marks = {*(doc.get(RESOLVE_PENDING) or ()),
                     *(doc.get("blocking_keys") or doc_keys(atoms_of([doc])))}
            hidden[wid] = {**doc, HIDDEN: holder.get(wid, min(holder.values(), default=wid)),
                           RESOLVE_PENDING: sorted(marks)}
            lines.append(hidden[wid])
        if not lines:
            return set()
        with translate_errors("bulk hide regrouped works"):
            answer = self.client.bulk(body=lines, refresh="true")
        changed = set()
        for wid, item in zip(gone, answer["items"], strict=True):
            info = item["index"]
            result = classify_item(info)
            if result.outcome == "conflict":
                changed.add(wid)
            elif result.outcome == "retry":
                raise IndexUnavailable(f"hiding regrouped works: {result.reason}",
                                       retryable=True)
            elif result.outcome != "ok":
                raise IndexUnavailable(f"hiding regrouped works: {result.reason}",
                                       retryable=False)
            else:
                reads[wid] = _Read(hidden[wid], (info["_seq_no"], info["_primary_term"]),
                                   reads[wid].index)
        return changed

    # --- requests -----------------------------------------------------------------------

    def _mget(self, index: str, ids: Iterable[str]) -> dict[str, _Read]:
        ids = sorted(set(ids))
        hits = mget_hits(self.client, [(index, i) for i in ids], READ_PART, "mget")
        reads = {}
        for wid, hit in zip(ids, hits, strict=True):
            found = bool(hit.get("found"))
            reads[wid] = _Read(hit.get("_source") if found else None,
                               (hit.get("_seq_no"), hit.get("_primary_term")),
                               hit.get("_index") if found else None)
        return reads

    def _bulk(self, actions: list[dict[str, Any]], report: JoinReport) -> bool:
        """Send ``actions`` in one request; False when one of them conflicted."""
        if actions:
            report.bulk_requests += 1
        return not any(self._bulk_each(actions))

    def _bulk_each(self, actions: list[dict[str, Any]]) -> list[bool]:
        """Send ``actions`` in one request: whether each conflicted."""
        if not actions:
            return []
        lines: list[Any] = []
        for action in actions:
            meta = {k: v for k, v in action.items() if k not in ("_op_type", "_source")}
            lines.append({action["_op_type"]: meta})
            if action["_op_type"] != "delete":
                lines.append(action["_source"])
        with translate_errors("bulk work-identities"):
            answer = self.client.bulk(body=lines)
        conflicted = []
        for item in answer["items"]:
            result = classify_item(next(iter(item.values())))
            if result.outcome == "retry":
                raise IndexUnavailable(f"joining works: {result.reason}", retryable=True)
            if result.outcome not in ("ok", "conflict") and not _already_gone(item):
                raise IndexUnavailable(f"joining works: {result.reason}", retryable=False)
            conflicted.append(result.outcome == "conflict")
        return conflicted


def _conditional(action: dict[str, Any], read: _Read) -> dict[str, Any]:
    """``create`` when ``read`` found nothing, else ``index`` only over what was read."""
    if read.doc is None:
        return {**action, "_op_type": "create"}
    return {**action, "_op_type": "index", "if_seq_no": read.seq[0],
            "if_primary_term": read.seq[1]}


def _already_gone(item: Mapping[str, Any]) -> bool:
    """A delete of a document another writer deleted first: the same end."""
    info = item.get("delete") or {}
    return info.get("status") == 404

