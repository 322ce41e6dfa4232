"""The two items a profile page yields, and the page that carries them.

Field names are a public contract (docs/interfaces.md): exports, the index and
outside checks read them. A field is ``None`` where the page's layout has no
such field, so both layouts export the same columns.

The spider hands Scrapy one ``PageItem`` per page (the researcher with its
listings), so the item machinery, the pipelines and the signals run once a page
rather than once a listing; ``records`` unpacks it wherever one record a line is
wanted (the feed exports, the item counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class ResearcherItem:
    """One researcher profile page."""

    id: str
    url: str
    name: str
    kind: Literal["researcher"] = "researcher"
    source: str | None = None  # which site family rendered the page: "bzpeer" or "papercards"
    bio: str | None = None
    role: str | None = None
    affiliation: str | None = None  # None when the page says it is not imported
    # Layout A (BZPEER): trust snapshot and counts.
    trust_score: int | None = None
    trust_label: str | None = None
    verification_level: str | None = None  # as printed, e.g. "L1"
    claimed: bool | None = None
    open_to_collaborate: bool | None = None
    works_count: int | None = None
    followers: int | None = None
    topics_count: int | None = None
    collaborators_count: int | None = None
    # Layout B (paper cards): metrics header.
    field: str | None = None
    h_index: int | None = None
    papers_count: int | None = None
    citations: int | None = None
    novelty_pct: int | float | None = None  # the number shown: 40 for "Novelty40%"
    ai_score: int | float | None = None
    # How many listings the page announced ("5 published item(s)", "3 Papers").
    listed_count: int | None = None
    # The work_id of every listing read from the page, in page order, and whether that
    # is the page's whole list. Only a complete list lets the index drop this profile
    # from works it no longer lists; a page cut short (or one whose count is unknown)
    # proves nothing about the works it does not show.
    work_ids: list[str] | None = None
    complete: bool | None = None


@dataclass
class WorkItem:
    """One listing of a work on one profile page.

    A paper on several profiles yields several WorkItems with the same
    ``work_id``; the index merges them into one document.
    """

    work_id: str
    title: str
    researcher_id: str
    researcher_name: str
    kind: Literal["work"] = "work"
    abstract: str | None = None
    type: str | None = None  # layout A: "preprint", "article", ...
    year: int | None = None
    date: str | None = None  # ISO YYYY-MM-DD where the page gives a day
    venue: str | None = None
    category: str | None = None  # layout B tag as printed: "DC"
    score: float | None = None
    authors: list[str] | None = None  # as printed, without a trailing "et al."
    authors_truncated: bool | None = None
    code: bool | None = None
    researcher_url: str | None = None
    source: str | None = None
    position: int | None = None  # 1-based order of the listing on its page
    # Set by the arXiv enrichment pipeline: verified metadata (keys of the "arxiv" object in
    # index_mappings/works.json) and the lookup state {"status", "reason", "updated_at"}.
    arxiv: dict | None = None
    enrichment: dict | None = None


@dataclass
class PageItem:
    """One profile page: its researcher and its listings, in page order."""

    researcher: ResearcherItem
    works: list[WorkItem] = field(default_factory=list)
    kind: Literal["page"] = "page"


def records(item: Any) -> list[Any]:
    """The records an item stands for: a page's researcher then its listings; else the item."""
    if isinstance(item, PageItem):
        return [item.researcher, *item.works]
    return [item]


RESEARCHER_FIELDS = tuple(ResearcherItem.__dataclass_fields__)
WORK_FIELDS = tuple(WorkItem.__dataclass_fields__)
