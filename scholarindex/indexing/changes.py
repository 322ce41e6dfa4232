"""``Change``: one item to merge into one document.

The pipeline turns each scraped item (or enrichment result) into a Change; the
writer groups Changes by document and folds them in with ``fold_change``; the
dead-letter file stores them as they were, so a replay re-merges the original
items against whatever the index holds then.

A work listing the arXiv pipeline enriched is one Change (``changes_from_records``):
it is marked ``enriched`` and carries the enrichment in its item's own ``arxiv`` and
``enrichment`` fields, and folding it merges the listing and applies the enrichment
in one derivation of the document. The same enrichment alone is a separate
"enrichment" Change (``enrichment_change``: an answer that came later, through the
``work_enriched`` signal or ``scholarindex enrich``; and the dead letters of older
versions, which sent every listing's enrichment that way); folding the two gives
the same document in either order as folding the carrying Change.

An ``unlist`` Change is made by the writer, not from an item: a complete profile
page that no longer lists a work takes that profile's listing out of the work
(``unlist_changes``), and the document goes with its last listing.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from itemadapter import ItemAdapter, is_item

from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.documents import (
    apply_enrichment,
    check_enrichment,
    merge_listing,
    merge_researcher,
    removed_work_ids,
    timestamp,
    unlist_listing,
)
from scholarindex.indexing.errors import InvalidItem
from scholarindex.indexing.shapes import ResearcherDoc, WorkDoc, researcher_of, work_of

Kind = Literal["work", "researcher", "enrichment", "unlist"]
# The alias (without prefix) each kind of change writes to.
INDEX_OF: dict[str, str] = {"work": "works", "researcher": "researchers", "enrichment": "works",
                            "unlist": "works"}


@dataclass(frozen=True)
class Change:
    """One item for one document: a listing, a researcher profile or an enrichment patch."""

    kind: Kind
    doc_id: str
    data: Mapping[str, Any]
    seen_at: str
    # A work change whose item's ``arxiv``/``enrichment`` fields are applied with it
    # (``carried_enrichment``); otherwise the fold reads only the listing's fields.
    enriched: bool = False

    @property
    def index(self) -> str:
        """The alias name without prefix: ``works`` or ``researchers``."""
        return INDEX_OF[self.kind]

    def __reduce__(self) -> tuple[type[Change], tuple[Any, ...]]:
        # Every change is pickled to the writer's process (scholarindex.indexing.process), and back
        # when held: rebuilt from its fields, cheaper than the default way.
        return (Change, (self.kind, self.doc_id, self.data, self.seen_at, self.enriched))


    def to_json(self) -> dict[str, Any]:
        """The form stored in the dead-letter file."""
        stored: dict[str, Any] = {"kind": self.kind, "id": self.doc_id, "seen_at": self.seen_at,
                  "item": dict(self.data)}
        if self.enriched:  # absent otherwise: the lines older versions wrote and read
            stored["enriched"] = True
        return stored

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        """Inverse of ``to_json``."""
        kind = data.get("kind")
        if kind not in INDEX_OF:
            raise InvalidItem(f"unknown change kind {kind!r}")
        change = cls(kind, str(data["id"]), dict(data["item"]), timestamp(data["seen_at"]),
                     data.get("enriched") is True)
        carried_enrichment(change)  # a bad answer time fails here, as a bad seen_at does
        return change


def pack_changes(changes: list[Change]) -> bytes:
    """Changes as one compact message to the writer's process (``unpack_changes``).

    The index pipeline packs a page's changes as it buffers them: pickling them costs
    less than ``repr`` did to estimate their size, the message's length is that
    estimate (about the JSON's), and the batch then crosses to the child as a few
    bytes objects instead of hundreds of objects pickled in the crawl's feeder thread.
    """
    return pickle.dumps(changes, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_changes(packed: Iterable[bytes]) -> list[Change]:
    """The changes of the messages ``pack_changes`` made, in order."""
    changes: list[Change] = []
    for message in packed:
        changes += pickle.loads(message)
    return changes


def change_from_item(item: Any, seen_at: str | datetime | None = None) -> Change:
    """A Change for a ResearcherItem or WorkItem (dataclass, scrapy Item or dict).

    Raises ``InvalidItem`` for anything else or an item without its id.
    """
    return _change(item, timestamp(seen_at))


def _change(item: Any, seen: str, carry: bool = False) -> Change:
    """``change_from_item`` seen at ``seen``, a canonical timestamp already.

    ``carry``: a work item's own valid enrichment travels in its change (``enriched``).
    """
    if isinstance(item, ResearcherItem | WorkItem):
        data = dict(vars(item))  # the item classes' fields are their attributes
    elif dataclasses.is_dataclass(item) and not isinstance(item, type):
        # Shallow: the documents module copies what it keeps (asdict's deep copy cost more
        # than the merge itself).
        data = {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
    elif is_item(item):
        data = ItemAdapter(item).asdict()
    else:
        raise InvalidItem(f"not an item: {type(item).__name__}")
    kind = data.get("kind")
    if kind == "work":
        key: Literal["work_id", "id"] = "work_id"
    elif kind == "researcher":
        key = "id"
    else:
        raise InvalidItem(f"item kind {kind!r} is neither 'work' nor 'researcher'")
    doc_id = data.get(key)
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InvalidItem(f"{kind} item has no {key}")
    return Change(kind, doc_id, data, seen, carry and kind == "work" and _carries(data))


def _carries(data: Mapping[str, Any]) -> bool:
    """True when a work item's own fields hold an enrichment the fold can apply.

    Anything else (no status, an invalid patch, a bad time) keeps the separate
    enrichment change, which fails on its own as it always did, not the listing.
    """
    enrichment = data.get("enrichment")
    if not isinstance(enrichment, Mapping) or not enrichment.get("status"):
        return False
    try:
        if enrichment.get("updated_at"):
            timestamp(enrichment["updated_at"])
        check_enrichment({"status": str(enrichment["status"]), "arxiv": data.get("arxiv")})
    except (InvalidItem, TypeError, ValueError):
        return False
    return True


def changes_from_item(item: Any, seen_at: str | datetime | None = None) -> list[Change]:
    """The Change of an item, plus the enrichment the arXiv pipeline attached to it, if any,
    as a separate change (the form ``changes_from_records`` folds into one)."""
    return _changes(item, timestamp(seen_at))


def _changes(item: Any, seen: str, carry: bool = False) -> list[Change]:
    change = _change(item, seen, carry)
    if change.kind != "work" or change.enriched:
        return [change]
    attached = enrichment_from_item(item, seen)
    return [change] if attached is None else [change, attached]


def changes_from_records(items: Iterable[Any], seen_at: str | datetime | None = None
                         ) -> tuple[list[Change], list[tuple[Any, InvalidItem]]]:
    """The changes of a batch of items (a page's researcher and listings), seen at one
    time: (the changes, the items refused with why).

    One change per item: a listing's enrichment travels in its change (``enriched``),
    unless the item holds it only as attributes or it cannot be applied (then it is a
    separate change, as ``changes_from_item`` makes).
    """
    seen = timestamp(seen_at)
    changes: list[Change] = []
    refused: list[tuple[Any, InvalidItem]] = []
    for item in items:
        try:
            changes += _changes(item, seen, carry=True)
        except InvalidItem as exc:
            refused.append((item, exc))
    return changes, refused


def enrichment_from_item(item: Any, seen_at: str | datetime | None = None) -> Change | None:
    """An enrichment Change from a work item's ``enrichment``/``arxiv`` (fields or attributes).

    ``ArxivEnrichPipeline`` sets them on the item when the arXiv cache already knew
    the work (or marks it "pending" while the lookup runs in the background).
    """
    enrichment = _attached(item, "enrichment")
    if not isinstance(enrichment, Mapping) or not enrichment.get("status"):
        return None
    work_id = _attached(item, "work_id")
    if not isinstance(work_id, str) or not work_id:
        raise InvalidItem("work item has no work_id")
    return enrichment_change(work_id, status=str(enrichment["status"]),
                             arxiv=_attached(item, "arxiv"), reason=enrichment.get("reason"),
                             at=enrichment.get("updated_at") or seen_at)


def carried_enrichment(change: Change) -> Change | None:
    """The enrichment change an ``enriched`` work change carries; None for any other.

    The same change ``changes_from_item`` makes of the item apart from its listing.
    """
    if change.kind != "work" or not change.enriched:
        return None
    enrichment = change.data.get("enrichment")
    if not isinstance(enrichment, Mapping):
        enrichment = {}  # a line edited by hand: an invalid patch, refused on its own
    return enrichment_change(change.doc_id, status=str(enrichment.get("status")),
                             arxiv=change.data.get("arxiv"), reason=enrichment.get("reason"),
                             at=enrichment.get("updated_at") or change.seen_at)


def split_enrichment(changes: list[Change], position: int) -> None:
    """Make the enriched work change at ``position`` the two changes it stands for, in place.

    Its enrichment goes after the listings, before the unlists (the writer's order of
    a document's changes), as listings sent it before they carried it: where a
    listing and its enrichment cannot be folded as one (an invalid listing, or one
    left out with no document to enrich), the two give what they always gave.
    """
    change = changes[position]
    carried = carried_enrichment(change)
    if carried is None:
        return
    changes[position] = dataclasses.replace(change, enriched=False)
    after = next((i for i, c in enumerate(changes) if c.kind == "unlist"), len(changes))
    changes.insert(max(after, position + 1), carried)


def _attached(item: Any, name: str) -> Any:
    """A declared field's value, or an attribute set on an item class that lacks the field."""
    if isinstance(item, Mapping):  # dicts and scrapy Items
        return item.get(name)
    return getattr(item, name, None)  # dataclass and attrs fields are attributes


def enrichment_change(work_id: str, *, status: str, arxiv: Mapping[str, Any] | None = None,
                      reason: str | None = None,
                      at: str | datetime | None = None) -> Change:
    """A Change carrying an arXiv enrichment result for one work."""
    patch = {"work_id": work_id, "status": status,
             "arxiv": dict(arxiv) if arxiv is not None else None, "reason": reason}
    return Change("enrichment", work_id, patch, timestamp(at))


def unlist_change(work_id: str, researcher_id: str, seen_at: str | datetime) -> Change:
    """A Change taking ``researcher_id``'s listing out of work ``work_id``.

    ``seen_at`` is when the profile was seen without the work: only listings older
    than that are removed (see ``documents.unlist_listing``).
    """
    return Change("unlist", work_id, {"work_id": work_id, "researcher_id": researcher_id},
                  timestamp(seen_at))


def wants_unlisting(change: Change) -> bool:
    """True for a researcher change whose page gave its whole list of works."""
    return (change.kind == "researcher" and change.data.get("complete") is True
            and isinstance(change.data.get("work_ids"), list))


def unlist_changes(stored: ResearcherDoc | None, change: Change,
                   still_listed: Collection[str] = ()) -> list[Change]:
    """The unlist Changes a researcher change implies against its ``stored`` document.

    One per work the stored document knows listed and the page no longer lists,
    except the works in ``still_listed`` (listings of this profile in the same
    batch: whatever the researcher item says, a work the batch (re)lists stays).
    """
    if not wants_unlisting(change):
        return []
    return [unlist_change(work_id, change.doc_id, change.seen_at)
            for work_id in removed_work_ids(stored, change.data, change.seen_at)
            if work_id not in still_listed]


def fold_change(doc: Mapping[str, Any] | None, change: Change) -> Mapping[str, Any] | None:
    """Fold one change into a document (None: not indexed). Pure.

    None as the result: the change leaves no document (it unlisted the last
    profile of a work), so the document is to be deleted.
    """
    if change.kind == "researcher":
        return merge_researcher(researcher_of(doc), change.data, change.seen_at)
    return fold_work(work_of(doc), change)


def fold_work(doc: WorkDoc | None, change: Change) -> WorkDoc | None:
    """``fold_change`` of any change but a profile's: a listing, an unlist or an
    enrichment, into a work document."""
    if change.kind == "researcher":
        raise InvalidItem(f"profile {change.doc_id!r} folded into a work document")
    if change.kind == "unlist":
        researcher_id = change.data.get("researcher_id")
        if not isinstance(researcher_id, str) or not researcher_id:
            raise InvalidItem(f"unlist of work {change.doc_id!r} names no researcher")
        return unlist_listing(doc, researcher_id, change.seen_at,
                              str(change.data.get("work_id") or change.doc_id))
    if change.kind == "work":
        return merge_work(doc, change)
    if doc is None:
        raise MissingDocument(f"enrichment for work {change.doc_id!r} that is not indexed")
    return apply_enrichment(doc, change.data, change.seen_at)


def apply_change(doc: Mapping[str, Any] | None, change: Change) -> Mapping[str, Any]:
    """Fold one listing, profile or enrichment into a document (None: not indexed yet). Pure.

    Unlists may delete a document: fold them with ``fold_change``.
    """
    if change.kind == "unlist":
        raise InvalidItem("an unlist may delete its document: fold it with fold_change")
    if change.kind == "work":
        return merge_work(work_of(doc), change)
    if change.kind == "researcher":
        return merge_researcher(researcher_of(doc), change.data, change.seen_at)
    if doc is None:
        raise MissingDocument(f"enrichment for work {change.doc_id!r} that is not indexed")
    return apply_enrichment(work_of(doc), change.data, change.seen_at)


def merge_work(doc: WorkDoc | None, change: Change,
               first_seen: str | None = None) -> WorkDoc:
    """Fold a work change: its listing, and the enrichment it carries, in one pass. Pure.

    ``first_seen`` as for ``documents.merge_listing``.
    """
    carried = carried_enrichment(change)
    if carried is None:
        return merge_listing(doc, change.data, change.seen_at, first_seen)
    return merge_listing(doc, change.data, change.seen_at, first_seen,
                         enrichment=carried.data, enriched_at=carried.seen_at)


class MissingDocument(InvalidItem):
    """An enrichment patch for a work the index does not hold (yet)."""
