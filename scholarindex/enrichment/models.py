"""What goes into enrichment (a listing) and what comes out (an outcome)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scholarindex.core.enrichment_status import Status


@dataclass(frozen=True)
class Listing:
    """What the profiles say about one work: the evidence to verify against.

    One work listed on several profiles is one Listing with every title
    spelling, year and known person (profile owners and printed authors).
    """

    work_id: str
    titles: tuple[str, ...]
    years: tuple[int, ...] = ()
    people: tuple[str, ...] = ()

    @classmethod
    def of(cls, work_id: str, title: str, year: int | None = None,
           people: list[str] | tuple[str, ...] = ()) -> Listing:
        """One profile's listing."""
        return cls(work_id, (title,), (year,) if year else (), tuple(p for p in people if p))

    def merged(self, other: Listing) -> Listing:
        """This listing with another profile's evidence for the same work added."""
        def union(a: tuple, b: tuple) -> tuple:
            return tuple(dict.fromkeys(a + b))
        return Listing(self.work_id, union(self.titles, other.titles),
                       union(self.years, other.years), union(self.people, other.people))


def listing_from_item(item: Mapping[str, Any]) -> Listing:
    """The evidence one listing of a work carries: title, year, profile owner and printed authors.

    ``item`` has a work item's fields (``work_id``, ``title``, ``year``,
    ``researcher_name``, ``authors``): the crawl passes its work items, the ops CLI
    a stored work's listings, so both ask arXiv with the same evidence.
    """
    people = [item.get("researcher_name") or "", *(item.get("authors") or [])]
    return Listing.of(item["work_id"], item.get("title") or "", item.get("year"), people)


@dataclass(frozen=True)
class Outcome:
    """The enrichment of one work.

    status: "done" (a verified arXiv entry, in ``arxiv``), "none" (verified that
    arXiv has no such entry, or none that passes the checks) or "pending"
    (arXiv could not be asked; ``reason`` says why, a later run completes it).
    checked_at: when arXiv gave the answer used (ISO 8601, UTC), the same on every
    later crawl served from the cache, so re-indexing it changes nothing; None
    when arXiv gave no answer.
    """

    work_id: str
    arxiv: dict | None
    status: Status
    reason: str
    checked_at: str | None = None
