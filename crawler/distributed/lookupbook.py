"""Which arXiv lookups this worker must keep in Redis, and when each may go
(``scholarindex.distributed.lookups`` says why): pure bookkeeping, the scheduler makes the calls.

- ``page_item``: a work item of a leased page left the pipelines ``pending`` with the
  reason ``queued`` (the arXiv stage looks it up in the background): its evidence is
  noted for the page;
- ``page_done``: the page is done; the evidence to hold in Redis before its
  acknowledgement (merged with what this worker holds for the same work);
- ``answered``: the arXiv stage sent the work's answer to the index; True when it is
  held, and the caller then waits for the index flush that carries the answer
  (``wait``) before it drops the work (``delivered``). An answer that comes before
  its page's item is through the pipelines is remembered a while (the last
  ``_RECENT`` answers), so that item's work is not held for an answer that never
  comes again;
- ``adopted``: a dead worker's lookups, now this worker's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from scholarindex.core.enrichment_status import PENDING, QUEUED

_RECENT = 10_000


# The fields of a work item the arXiv stage takes its evidence from
# (``scholarindex.enrichment.models.listing_from_item``, which the arXiv stage applies on adoption).
EVIDENCE_FIELDS = ("work_id", "title", "year", "researcher_name", "authors")


def queued_works(item: Any) -> list[dict[str, Any]]:
    """The works of a page item (or one work item) that the arXiv stage queued, each as
    ``{"work_id", "listings": [its evidence fields]}``."""
    works = getattr(item, "works", None)
    queued = []
    for work in works if works is not None else [item]:
        fields = work if isinstance(work, Mapping) else vars(work)
        enrichment = fields.get("enrichment") or {}
        if enrichment.get("status") != PENDING or enrichment.get("reason") != QUEUED:
            continue
        if fields.get("work_id"):
            queued.append({"work_id": fields["work_id"],
                           "listings": [{k: fields.get(k) for k in EVIDENCE_FIELDS}]})
    return queued


def merged(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two records of the same work's listings as one (no listing twice)."""
    listings = list(a["listings"])
    listings += [listing for listing in b["listings"] if listing not in listings]
    return {"work_id": a["work_id"], "listings": listings}


def merge_into(works: dict[str, dict[str, Any]], evidence: dict[str, Any]) -> None:
    """Add one work's evidence to ``works`` (work id -> evidence), merged with what is there."""
    work_id = evidence["work_id"]
    works[work_id] = merged(works[work_id], evidence) if work_id in works else evidence


class LookupBook:
    def __init__(self) -> None:
        self._pages: dict[str, dict[str, dict[str, Any]]] = {}  # page -> work -> evidence
        self.held: dict[str, dict[str, Any]] = {}  # in Redis (or on its way), unanswered
        self._waiting: list[tuple[str, int]] = []  # (work, index flush carrying its answer)
        self._recent: OrderedDict[str, None] = OrderedDict()  # answered lately

    def page_item(self, fp: str, item: Any) -> None:
        for evidence in queued_works(item):
            if evidence["work_id"] in self._recent:
                continue
            merge_into(self._pages.setdefault(fp, {}), evidence)

    def page_done(self, fp: str) -> dict[str, dict[str, Any]]:
        changed = {}
        for work_id, evidence in self._pages.pop(fp, {}).items():
            before = self.held.get(work_id)
            now = merged(before, evidence) if before is not None else evidence
            if now != before:
                self.held[work_id] = changed[work_id] = now
        return changed

    def page_dropped(self, fp: str) -> None:
        self._pages.pop(fp, None)

    def answered(self, work_id: str) -> bool:
        self._recent[work_id] = None
        self._recent.move_to_end(work_id)
        if len(self._recent) > _RECENT:
            self._recent.popitem(last=False)
        for page in self._pages.values():
            page.pop(work_id, None)
        return work_id in self.held

    def wait(self, work_id: str, ticket: int) -> None:
        self._waiting.append((work_id, ticket))

    def delivered(self, number: int) -> list[str]:
        """The works whose answer's flush (``number`` or an earlier one) is delivered,
        and no later answer of theirs still waits for its flush."""
        ready = [w for w, ticket in self._waiting if ticket <= number]
        if ready:
            self._waiting = [(w, t) for w, t in self._waiting if t > number]
        return self.drop(ready)

    def drop(self, work_ids: Iterable[str]) -> list[str]:
        """Let go of works answered; not of one whose later answer still waits for its
        flush (a dead worker's page adopted since brought its work's evidence again, and
        that page's hold is written when it is delivered: dropped now, the hold would
        come after the drop and stay in Redis for ever, keeping the job open)."""
        still = {w for w, _ in self._waiting}
        return [w for w in dict.fromkeys(work_ids)
                if w not in still and self.held.pop(w, None) is not None]

    def still_held(self, hold: Mapping[str, Any]) -> dict[str, Any]:
        """The part of ``hold`` (evidence to write to Redis) whose works are still held:
        a work whose answer is delivered and let go is not written again."""
        return {w: value for w, value in hold.items() if w in self.held}

    def adopted(self, evidence: Iterable[Mapping[str, Any]]) -> None:
        for value in evidence:
            work_id = value["work_id"]
            before = self.held.get(work_id)
            self.held[work_id] = merged(before, value) if before is not None else dict(value)
