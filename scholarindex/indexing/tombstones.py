"""Tombstones: what an unlist leaves, so that an older listing cannot bring a work back.

An unlist (a complete profile page without the work) records, per (work, profile),
the latest time the profile was seen without the work (``unlisted_at``) and the
earliest time it was seen listing it (``first_seen``). ``fold_with_tombstone`` folds a
work's changes with its tombstone (pure, like ``scholarindex.indexing.documents``):

- a listing seen before ``unlisted_at`` (a replayed dead letter, a late write from an
  older crawl) is *ignored* when the document does not hold that profile's listing:
  it neither restores the listing nor brings a deleted work back. Ignoring is not an
  error: the writer counts it (``index/listings_ignored``) and dead-letters nothing;
- a listing seen at or after ``unlisted_at`` restores it (a tie goes to the listing,
  as in ``documents.unlist_listing``), and the restored listing keeps the first time
  the profile was ever seen listing the work;
- the enrichment a listing carries (``Change.enriched``) applies either way, as it
  would have as a change of its own: an ignored listing still enriches the document
  other profiles keep; with no document, it is handed back (``Folded.unapplied``)
  for the caller to fold as a change of its own (``changes.split_enrichment``);
- the tombstone keeps the earliest listing time of its profile for that, so the
  folds are idempotent and order-independent for the document and the tombstone.

Why a separate index (``index_mappings/tombstones.json``: one document per work, plain,
never reindexed) rather than a work document kept with no listings and a ``removed``
marker: a removed work is then simply not in ``works``, so every search, facet,
count, status check and reindex verification stays exact with no filter each reader
would have to remember, and the works mapping does not change. The price is one more
read per work a listing or unlist touches, and one more write after an unlist: the
writer reads the tombstone after the work and writes it before the work
(``scholarindex.indexing.bulk``), so a concurrent writer that missed the tombstone conflicts on
the work and reads again.

Retention (``TOMBSTONE_RETENTION_DAYS``): a record only matters against a listing seen
before its ``unlisted_at``. ``scholarindex tombstones prune`` drops records whose
``unlisted_at`` is before ``retention_cutoff``, and ``scholarindex replay`` sets aside,
unreplayed, every dead-lettered listing seen before the same cutoff
(``expired_listing``). A listing a pruned record would have stopped was seen before
that record's ``unlisted_at``, so before the cutoff, so replay never delivers it: a
pruned tombstone is never needed. (A crawl writes listings seen during the crawl, far
newer than any cutoff.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scholarindex.indexing.changes import Change, carried_enrichment, fold_work, merge_work
from scholarindex.indexing.documents import timestamp
from scholarindex.indexing.shapes import TombstoneDoc, UnlistRecord, WorkDoc

# The change kinds a tombstone takes part in: a listing is checked, an unlist recorded.
TOMBSTONE_KINDS = frozenset({"work", "unlist"})


@dataclass(frozen=True)
class Folded:
    """A work document and its tombstone after one change (None: no document / none)."""

    doc: WorkDoc | None
    tombstone: TombstoneDoc | None
    ignored: bool = False  # a listing older than its profile's unlist: left out
    # The enrichment an ignored listing carried, when there was no document to enrich.
    unapplied: Change | None = None


def fold_with_tombstone(doc: WorkDoc | None, tombstone: TombstoneDoc | None,
                        change: Change) -> Folded:
    """Fold one change into a work document and its tombstone. Pure.

    Changes other than listings and unlists (enrichment) go to ``fold_work`` as they are.
    """
    if change.kind == "unlist":
        folded = fold_work(doc, change)  # checks the change names a researcher
        unlisting = str(change.data["researcher_id"])
        return Folded(folded, _record(tombstone, change.doc_id, unlisting,
                                      unlisted_at=change.seen_at,
                                      first_seen=_first_seen(doc, unlisting)))
    researcher_id = change.data.get("researcher_id") if change.kind == "work" else None
    if not isinstance(researcher_id, str):  # not a listing, or an invalid one
        return Folded(fold_work(doc, change), tombstone)
    entry = unlisted_entry(tombstone, researcher_id)
    if entry is None:
        return Folded(fold_work(doc, change), tombstone)
    tomb = _record(tombstone, change.doc_id, researcher_id, first_seen=change.seen_at)
    # A record ``_record`` wrote has its time; one without (edited by hand) fails here.
    if change.seen_at < entry["unlisted_at"] and not lists(doc, researcher_id):  # type: ignore[operator]
        carried = carried_enrichment(change)
        if carried is not None and doc is None:
            return Folded(doc, tomb, ignored=True, unapplied=carried)
        return Folded(doc if carried is None else fold_work(doc, carried), tomb, ignored=True)
    return Folded(merge_work(doc, change, entry.get("first_seen")), tomb)


def merge_tombstones(work_id: str, tombstones: Iterable[TombstoneDoc | None]
                     ) -> TombstoneDoc | None:
    """One tombstone for work ``work_id`` holding every record of ``tombstones`` (the
    tombstones of documents merged into it, ``scholarindex.indexing.identity``). Pure, idempotent,
    order-independent; None when none has a record."""
    merged: TombstoneDoc | None = None
    for tombstone in tombstones:
        for entry in records(tombstone):
            merged = _record(merged, work_id, entry["researcher_id"],
                             unlisted_at=entry.get("unlisted_at"),
                             first_seen=entry.get("first_seen"))
    return merged


def retention_cutoff(days: float, now: str | None = None) -> str:
    """``now`` (default: the current time) minus ``days``: tombstone records unlisted
    before it may be pruned, and dead-lettered listings seen before it are not replayed."""
    moment = datetime.fromisoformat(timestamp(now))
    return timestamp(moment - timedelta(days=days))


def prune_tombstone(tombstone: TombstoneDoc | None, cutoff: str) -> TombstoneDoc | None:
    """``tombstone`` without the records whose ``unlisted_at`` is before ``cutoff``
    (a record unlisted exactly at the cutoff stays); None when no record is left. Pure,
    idempotent. A record with no ``unlisted_at`` (never written by ``_record``) stays:
    its age is unknown."""
    if tombstone is None:
        return None
    kept = [e.copy() for e in tombstone.get("unlisted") or ()
            if e.get("unlisted_at") is None or timestamp(e["unlisted_at"]) >= cutoff]
    if not kept:
        return None
    return {**tombstone, "unlisted": kept}


def pruned_records(tombstone: TombstoneDoc | None, cutoff: str) -> int:
    """How many of ``tombstone``'s records ``prune_tombstone`` drops."""
    before = len(records(tombstone))
    after = len(records(prune_tombstone(tombstone, cutoff)))
    return before - after


def expired_listing(change: Change, cutoff: str) -> bool:
    """True for a listing seen before ``cutoff``: a tombstone that could stop it may
    have been pruned, so it must not be replayed (see the module docstring)."""
    return (change.kind == "work" and isinstance(change.data.get("researcher_id"), str)
            and timestamp(change.seen_at) < cutoff)


def unlisted_entry(tombstone: TombstoneDoc | None, researcher_id: str) -> UnlistRecord | None:
    """The tombstone's record for one profile, or None when it never unlisted the work."""
    for entry in records(tombstone):
        if entry.get("researcher_id") == researcher_id:
            return entry
    return None


def records(tombstone: TombstoneDoc | None) -> list[UnlistRecord]:
    """A tombstone's records; none for no tombstone."""
    return (tombstone.get("unlisted") if tombstone else None) or []


def lists(doc: Mapping[str, Any] | None, researcher_id: str) -> bool:
    """True if work document ``doc`` holds a listing by ``researcher_id``."""
    return doc is not None and any(e.get("researcher_id") == researcher_id
                                   for e in doc.get("listings") or ())


def _first_seen(doc: WorkDoc | None, researcher_id: str) -> str | None:
    for entry in (doc.get("listings") if doc else None) or ():
        if entry.get("researcher_id") == researcher_id:
            return str(entry["first_seen"])
    return None


def _record(tombstone: TombstoneDoc | None, work_id: str, researcher_id: str, *,
            unlisted_at: str | None = None, first_seen: str | None = None
            ) -> TombstoneDoc | None:
    """``tombstone`` with one profile's times widened, as a new tombstone.

    Without ``unlisted_at`` only an existing record changes: a listing alone never
    makes a tombstone.
    """
    entries = {e["researcher_id"]: e.copy() for e in records(tombstone)}
    old = entries.get(researcher_id)
    if old is None and unlisted_at is None:
        return tombstone
    old = old or {"researcher_id": researcher_id, "unlisted_at": None, "first_seen": None}
    record: UnlistRecord = {
        "researcher_id": researcher_id,
        "unlisted_at": _latest(old["unlisted_at"], unlisted_at),
        "first_seen": _earliest(old["first_seen"], first_seen),
    }
    entries[researcher_id] = record
    merged: TombstoneDoc = {"work_id": work_id, "unlisted": [entries[k] for k in sorted(entries)]}
    return merged


def _latest(a: str | None, b: str | None) -> str | None:
    times = [timestamp(t) for t in (a, b) if t is not None]
    return max(times) if times else None


def _earliest(a: str | None, b: str | None) -> str | None:
    times = [timestamp(t) for t in (a, b) if t is not None]
    return min(times) if times else None
