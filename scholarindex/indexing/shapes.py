"""The shapes of the documents the index stores: works, researchers, tombstones.

Each is the ``_source`` of one index (``index_mappings/*.json``; a test holds the two
together). The builders in ``documents`` and ``tombstones`` return these; code that
reads a stored document gets a plain mapping (the cluster may hold documents an older
version wrote) and reads it by these names.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ListingEntry(TypedDict):
    """One profile's listing of a work, as that profile printed it (provenance)."""

    work_id: str
    researcher_id: str
    researcher_name: str | None
    researcher_url: str | None
    source: str | None
    position: int | None
    title: str
    abstract: str | None
    has_abstract: bool
    type: str | None
    venue: str | None
    year: int | None
    date: str | None
    category: str | None
    score: float | None
    code: bool | None
    authors: list[str] | None
    authors_truncated: bool | None
    first_seen: str
    last_seen: str


class ProfileRef(TypedDict):
    id: str
    name: str | None
    url: str | None
    source: str | None


class Enrichment(TypedDict):
    """Where the arXiv lookup stands: ``pending``, ``done``, ``none`` or ``error``."""

    status: str
    reason: str | None
    updated_at: str | None


class ResolutionLink(TypedDict):
    """Why ``work_id`` is one work with ``joined_to``: ``by`` ``match``, ``manual`` or
    ``identity``, with the score and evidence of a match."""

    work_id: str
    joined_to: str
    by: str
    score: float | None
    evidence: list[str]


class WorkDoc(TypedDict):
    """One paper: derived from its ``listings`` plus the arXiv entry it verified as."""

    work_id: str
    work_ids: list[str]
    title: str
    abstract: str | None
    year: int | None
    date: str | None
    venues: list[str]
    types: list[str]
    categories: list[str]
    sources: list[str]
    score: float | None
    has_code: bool
    authors: list[str]
    profile_count: int
    profiles: list[ProfileRef]
    listings: list[ListingEntry]
    first_seen: str
    last_seen: str
    arxiv_id: str | None
    arxiv: dict[str, Any] | None
    enrichment: Enrichment | None
    resolution: NotRequired[list[ResolutionLink]]
    # Resolution's blocking keys (``indexing.atoms``), and those of what changed since
    # the last pass (absent when nothing did): how an incremental pass finds its work.
    blocking_keys: NotRequired[list[str]]
    resolve_pending: NotRequired[list[str]]
    # A new work the writer judged another's (``indexing.unresolved``): left out of
    # searches until the resolution pass joins it or clears this.
    hidden_by: NotRequired[str]


class ResearcherDoc(TypedDict):
    """One profile page's researcher (the researcher item's fields) and what it lists."""

    kind: str
    id: str
    url: str | None
    name: str | None
    source: str | None
    bio: str | None
    role: str | None
    affiliation: str | None
    trust_score: float | None
    trust_label: str | None
    verification_level: str | None
    claimed: bool | None
    open_to_collaborate: bool | None
    works_count: int | None
    followers: int | None
    topics_count: int | None
    collaborators_count: int | None
    field: str | None
    h_index: int | None
    papers_count: int | None
    citations: int | None
    novelty_pct: float | None
    ai_score: float | None
    listed_count: int | None
    work_ids: list[str] | None
    complete: bool | None
    first_seen: str
    last_seen: str


class UnlistRecord(TypedDict):
    researcher_id: str
    unlisted_at: str | None
    first_seen: str | None


class TombstoneDoc(TypedDict):
    """The profiles that stopped listing a work, and when (so a late replay stays out)."""

    work_id: str
    # The blocking keys of the work it unlisted, for the next incremental pass to read
    # its old neighbours by.
    resolve_pending: NotRequired[list[str]]
    unlisted: list[UnlistRecord]


def fields_of(shape: type) -> tuple[str, ...]:
    """A shape's field names, in declaration order."""
    return tuple(shape.__annotations__)
