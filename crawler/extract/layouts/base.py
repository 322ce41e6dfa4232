"""What a page layout is, and what its parser gives back.

A layout is one site family's way of printing a profile. It says whether a page's
text is in it (``recognise``) and reads that text into typed fields (``parse``):
the researcher, the listings in page order, and what was odd. What every layout
shares is done once, in ``crawler.extract.page``: the name from the page's
structured data, ids and work ids, the items, a page cut short, completeness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from crawler.extract.lines import PageText
from crawler.extract.problems import PageProblem
from crawler.extract.structured import StructuredArticle


@dataclass(frozen=True, slots=True)
class ParseContext:
    """What a layout may need besides the page's text."""

    # The crawl's date: a date printed without a year is the latest such day not after it.
    today: date
    # The page's structured data (JSON-LD, ``citation_*`` tags): articles by ``title_key``,
    # and the person's ``name`` and ``affiliation`` (empty when the page has none). It may
    # fill what the text leaves open, in fields the layout has (``structured.py``).
    articles: Mapping[str, StructuredArticle]
    person: Mapping[str, str | None]


@dataclass(slots=True)
class ResearcherFields:
    """The researcher as the page prints it: the ``ResearcherItem`` fields a page gives.

    A field the layout does not print stays None, so every layout exports the same
    columns.
    """

    name: str  # "" when the text gives none (the page then has no researcher)
    bio: str | None = None
    role: str | None = None
    affiliation: str | None = None
    trust_score: int | None = None
    trust_label: str | None = None
    verification_level: str | None = None
    claimed: bool | None = None
    open_to_collaborate: bool | None = None
    works_count: int | None = None
    followers: int | None = None
    topics_count: int | None = None
    collaborators_count: int | None = None
    field: str | None = None
    h_index: int | None = None
    papers_count: int | None = None
    citations: int | None = None
    novelty_pct: int | float | None = None
    ai_score: int | float | None = None
    # The count the page announces ("5 published item(s)", "3 Papers"); None if it gives
    # none. It decides whether the page is whole (``page.truncated``, ``complete``).
    listed_count: int | None = None


@dataclass(slots=True)
class Listing:
    """One listing as the page prints it: the ``WorkItem`` fields a page gives.

    None where the layout has no such field; an empty ``authors`` list where it has
    one and the listing printed none. The shipped layouts pass the fields in this
    order (a listing is built once a listing read): keep it, or change them too.
    """

    title: str
    abstract: str | None = None
    type: str | None = None
    year: int | None = None
    date: str | None = None  # ISO YYYY-MM-DD
    venue: str | None = None
    category: str | None = None
    score: float | None = None
    authors: list[str] | None = None
    authors_truncated: bool | None = None
    code: bool | None = None


@dataclass(slots=True)
class ParsedPage:
    researcher: ResearcherFields
    listings: list[Listing] = field(default_factory=list)
    problems: list[PageProblem] = field(default_factory=list)  # in the order found


class Layout(Protocol):
    """One page layout; registered in ``crawler.extract.layouts.LAYOUTS``."""

    # The layout's name: the items' ``source``, ``ProfilePage.layout`` and the stat
    # ``profiles/layout/<source>``. Unique among the registered layouts.
    source: str

    def recognise(self, text: PageText) -> bool:
        """Is the page in this layout? Runs on every page until a layout says yes, so
        it is cheap, and strict enough not to take another layout's page."""
        ...

    def parse(self, text: PageText, context: ParseContext) -> ParsedPage:
        """The page read as this layout; never raises (a problem says what was wrong)."""
        ...
