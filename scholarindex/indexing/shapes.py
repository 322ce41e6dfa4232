"""The shapes of the documents the index stores: works, researchers, tombstones.

Each is the ``_source`` of one index (``index_mappings/*.json``; a test holds the two
together). The builders in ``documents`` and ``tombstones`` return these; JSON read
from the index becomes one through ``work_of``, ``researcher_of`` or ``tombstone_of``
(unchecked: the cluster may hold documents an older version wrote, so readers ``.get``
what such a document may lack).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast, overload


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
    # When arXiv answered. A document's state always has it (the writer stamps what it
    # stores); the state the arXiv stage attaches to an item lacks it until arXiv answers.
    updated_at: NotRequired[str]


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


# JSON read from the index (a hit's ``_source``) taken as the document it holds: the one
# place where a stored document becomes its shape. None stays None (not found).

@overload
def work_of(source: None) -> None: ...
@overload
def work_of(source: Mapping[str, Any]) -> WorkDoc: ...
def work_of(source: Mapping[str, Any] | None) -> WorkDoc | None:
    return cast("WorkDoc | None", source)


@overload
def researcher_of(source: None) -> None: ...
@overload
def researcher_of(source: Mapping[str, Any]) -> ResearcherDoc: ...
def researcher_of(source: Mapping[str, Any] | None) -> ResearcherDoc | None:
    return cast("ResearcherDoc | None", source)


@overload
def tombstone_of(source: None) -> None: ...
@overload
def tombstone_of(source: Mapping[str, Any]) -> TombstoneDoc: ...
def tombstone_of(source: Mapping[str, Any] | None) -> TombstoneDoc | None:
    return cast("TombstoneDoc | None", source)
