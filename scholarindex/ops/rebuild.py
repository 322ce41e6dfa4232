"""A stored document as the changes that made it, and the document re-derived from them.

A work document is derived from its ``listings`` plus its enrichment state
(scholarindex/indexing/documents.py), so it can be taken apart into ``Change``s -- one per
listing, one for the enrichment -- and folded back together with
``scholarindex.indexing.changes.apply_change``, the very function the crawl's writer uses.
``rebuild`` does that for ``reindex --rebuild``: every document re-derived by the
code as it is now, so a fixed or extended transform reaches documents written by
older code. With unchanged code the result equals the stored document.

A work merged from several ``work_id``s (``scholarindex.indexing.identity``) keeps them: each
listing is replayed under the id it came under, into a document that holds them all.

Each listing and each researcher profile is replayed twice, at its ``first_seen``
and at its ``last_seen``: a merge keeps the earliest first-seen and the latest
last-seen, so both times survive the round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scholarindex.indexing.changes import Change, apply_change, enrichment_change
from scholarindex.indexing.documents import LISTING_FIELDS, doc_work_ids
from scholarindex.indexing.errors import InvalidItem
from scholarindex.indexing.shapes import ResearcherDoc, WorkDoc, researcher_of, work_of


def document_changes(name: str, doc_id: str, doc: Mapping[str, Any]) -> list[Change]:
    """The changes whose merge gives ``doc`` (a ``works`` or ``researchers`` document)."""
    if name == "works":
        return _work_changes(doc_id, work_of(doc))
    if name == "researchers":
        return _researcher_changes(doc_id, researcher_of(doc))
    raise ValueError(f"unknown index {name!r}")


def rebuild(name: str, doc_id: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` re-derived from its inputs by the current transform (a new dict)."""
    rebuilt: Mapping[str, Any] | None = None
    changes = document_changes(name, doc_id, doc)
    if name == "works" and changes and len(doc_work_ids(doc)) > 1:
        # Listings of every id it holds may come in any order: start from its ids.
        rebuilt = {"work_id": doc_id, "work_ids": doc_work_ids(doc), "listings": [],
                   "resolution": doc.get("resolution") or []}  # why the ids joined
    for change in changes:
        rebuilt = apply_change(rebuilt, change)
    if rebuilt is None:
        raise InvalidItem(f"{name} document {doc_id!r} has nothing to rebuild it from")
    return dict(rebuilt)


def _work_changes(work_id: str, doc: WorkDoc) -> list[Change]:
    changes: list[Change] = []
    for entry in doc.get("listings") or ():
        listing = {name: entry.get(name) for name in LISTING_FIELDS}
        listing.update(kind="work", work_id=entry.get("work_id") or work_id)
        changes.extend(Change("work", work_id, listing, seen)
                       for seen in _seen_times(entry))
    enrichment = doc.get("enrichment")
    if isinstance(enrichment, Mapping) and enrichment.get("status"):
        changes.append(enrichment_change(
            work_id, status=str(enrichment["status"]), arxiv=doc.get("arxiv"),
            reason=enrichment.get("reason"), at=enrichment.get("updated_at")))
    return changes


def _researcher_changes(researcher_id: str, doc: ResearcherDoc) -> list[Change]:
    item = dict(doc)
    item.update(kind="researcher", id=researcher_id)
    return [Change("researcher", researcher_id, item, seen) for seen in _seen_times(doc)]


def _seen_times(record: Mapping[str, Any]) -> Iterable[str]:
    first, last = record.get("first_seen"), record.get("last_seen")
    if not isinstance(last, str) or not last:
        raise InvalidItem(f"record without last_seen: {sorted(record)[:8]}")
    # Change.seen_at is already canonical in stored documents; dedupe when equal.
    return dict.fromkeys(t for t in (first, last) if isinstance(t, str) and t)
