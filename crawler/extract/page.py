"""A profile page (URL plus body) to items, without Scrapy.

    page = parse_profile(url, body, content_type="text/html", today=date(2026, 11, 22))
    page.layout      # the source of the layout that read it ("bzpeer", "papercards"),
                     # or None for a page no layout recognises
    page.researcher  # ResearcherItem or None
    page.works       # one WorkItem per listing, in page order
    page.problems    # what was odd, in the order found: PageProblem(kind, message), the
                     # message as logs show it (truncated list, listing without title,
                     # bad encoding, a guessed card split, ...)
    page.of_kind(ProblemKind.UNTITLED)  # the problems of one kind
    page.ambiguous   # the listings could be split more than one way (layouts/papercards.py)
    page.truncated   # fewer listings read than the page announces (``unread`` of them)
    page.untitled    # the problems of listings left out for want of a title of their own

The layouts (``crawler.extract.layouts``) read a page's text into typed fields;
what follows is the same for every layout: the name from structured data, ids,
work ids and positions, a page cut short, completeness.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date
from typing import Any
from urllib.parse import urldefrag, urljoin

from crawler.extract import layouts, structured
from crawler.extract.layouts.base import ParseContext, ResearcherFields
from crawler.extract.lines import PageText, page_text
from crawler.extract.problems import PageProblem, ProblemKind
from scholarindex.core.identity import researcher_id
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.core.resolution.listing import listing_work_ids


@dataclass
class ProfilePage:
    url: str
    layout: str | None
    researcher: ResearcherItem | None = None
    works: list[WorkItem] = field(default_factory=list)
    problems: list[PageProblem] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def of_kind(self, kind: ProblemKind) -> list[PageProblem]:
        """The page's problems of one kind, in the order found."""
        return [problem for problem in self.problems if problem.kind is kind]

    @property
    def ambiguities(self) -> list[PageProblem]:
        """The problems that say the listings were split by a guess."""
        return self.of_kind(ProblemKind.AMBIGUOUS)

    @property
    def ambiguous(self) -> bool:
        return bool(self.ambiguities)

    @property
    def untitled(self) -> list[PageProblem]:
        """The problems that say a listing had no title of its own and was left out."""
        return self.of_kind(ProblemKind.UNTITLED)

    @property
    def truncated(self) -> bool:
        return self.unread > 0

    @property
    def unread(self) -> int:
        """How many listings the page announces (its own count) that were not read."""
        listed = self.researcher.listed_count if self.researcher else None
        return max(0, listed - len(self.works)) if listed is not None else 0


def parse_profile(
    url: str, body: bytes | str, content_type: str | None = None, today: date | None = None
) -> ProfilePage:
    """Parse one page; never raises on bad input (the problems say what was wrong)."""
    text = page_text(body, content_type)
    return parse_text(url, text, today or date.today())


def parse_text(url: str, text: PageText, today: date) -> ProfilePage:
    links = _links(url, text)
    layout = layouts.recognise(text)
    if layout is None:
        return ProfilePage(url, None, links=links, problems=_encoding(text))
    context = ParseContext(today, structured.articles(text), structured.person(text))
    parsed = layout.parse(text, context)
    page = ProfilePage(url, layout.source, links=links,
                       problems=_encoding(text) + parsed.problems)
    researcher = parsed.researcher
    # The markup states the name without page chrome around it (structured.py).
    researcher.name = context.person.get("name") or researcher.name
    if not researcher.name:
        page.problems.append(PageProblem(ProblemKind.NO_NAME, "no researcher name"))
        return page
    rid = researcher_id(url)
    page.researcher = ResearcherItem(id=rid, url=url, source=layout.source,
                                     **_researcher_fields(researcher))
    listings = parsed.listings
    # One page is one profile's list: a title it lists twice (other year or venue) is two works.
    work_ids = listing_work_ids(
        [{"title": li.title, "year": li.year, "venue": li.venue} for li in listings], rid)
    name, source = researcher.name, layout.source
    for position, (li, wid) in enumerate(zip(listings, work_ids, strict=True), start=1):
        # WorkItem's fields in their order: this runs once a listing, and keyword arguments
        # to a class cost a dict each call. A test checks every field lands.
        page.works.append(WorkItem(
            wid, li.title, rid, name, "work", li.abstract, li.type, li.year, li.date, li.venue,
            li.category, li.score, li.authors, li.authors_truncated, li.code, url, source,
            position))
    if page.truncated:
        # Listings left out for want of a title explain a shortfall: the page is whole.
        if page.unread > len(page.untitled):
            _drop_cut_listing(page)
        page.problems.append(PageProblem(ProblemKind.TRUNCATED, (
            f"truncated: {page.researcher.listed_count} listings announced, "
            f"{len(page.works)} read")))
    # The item was made above and is this page's alone: set its last fields in place
    # (``dataclasses.replace`` would copy all of them).
    page.researcher.work_ids = list(dict.fromkeys(w.work_id for w in page.works))
    page.researcher.complete = _complete(page)
    return page


_RESEARCHER_FIELDS = tuple(f.name for f in fields(ResearcherFields))


def _researcher_fields(researcher: ResearcherFields) -> dict[str, Any]:
    """Every field a layout read, by name: a field added to ResearcherFields reaches the item."""
    return {name: getattr(researcher, name) for name in _RESEARCHER_FIELDS}


def _complete(page: ProfilePage) -> bool:
    """True when the listings read are the page's whole list, as far as the page can tell.

    The index removes this profile from every work the list lacks, so "complete"
    needs the page's own count: a cut page, or one that gave no count (zero
    listings read from a page that does not say it has none looks like a parse
    failure, not a profile that dropped every work), is never complete.
    """
    listed = page.researcher.listed_count if page.researcher else None
    return listed is not None and len(page.works) >= listed


def _drop_cut_listing(page: ProfilePage) -> None:
    """On a page that stops early, the last listing may stop mid-sentence or mid-title.

    A cut title would index a work that does not exist, so a last listing that does
    not end as text ends is dropped and reported; the next crawl reads it whole.
    """
    last = page.works[-1] if page.works else None
    if last is None:
        return
    tail = (last.abstract or last.title).rstrip()
    if not tail.endswith((".", "!", "?", ")", "]", '"', "”", "'")):
        page.works.pop()
        page.problems.append(PageProblem(ProblemKind.CUT_LISTING,
                                         f"last listing cut short: {last.title[:60]!r}"))


def _encoding(text: PageText) -> list[PageProblem]:
    if not text.encoding_problem:
        return []
    return [PageProblem(ProblemKind.ENCODING, f"encoding: {text.encoding_problem}")]


def _links(base: str, text: PageText) -> list[str]:
    seen: dict[str, None] = {}
    for href, _ in text.links:
        if href.startswith(("mailto:", "javascript:", "tel:", "#")):
            continue
        seen.setdefault(urldefrag(urljoin(base, href))[0], None)
    return list(seen)
