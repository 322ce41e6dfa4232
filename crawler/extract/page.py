"""A profile page (URL plus body) to items, without Scrapy.

    page = parse_profile(url, body, content_type="text/html", today=date(2026, 11, 22))
    page.layout      # "bzpeer", "papercards" or None for a page in neither layout
    page.researcher  # ResearcherItem or None
    page.works       # one WorkItem per listing, in page order
    page.problems    # what was odd, in the order found: PageProblem(kind, message), the
                     # message as logs show it (truncated list, listing without title,
                     # bad encoding, a guessed card split, ...)
    page.of_kind(ProblemKind.UNTITLED)  # the problems of one kind
    page.ambiguous   # the listings could be split more than one way (see papercards.py)
    page.truncated   # fewer listings read than the page announces (``unread`` of them)
    page.untitled    # the problems of listings left out for want of a title of their own
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from urllib.parse import urldefrag, urljoin

from crawler.extract import bzpeer, papercards, structured
from crawler.extract.lines import PageText, page_text
from crawler.extract.problems import PageProblem, ProblemKind
from scholarindex.core.identity import researcher_id, title_key
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
    articles = structured.articles(text)
    if bzpeer.matches(text.lines):
        layout, parsed = bzpeer.SOURCE, bzpeer.parse(text.lines, text.headings)
    elif papercards.matches(text.lines):
        layout, parsed = papercards.SOURCE, papercards.parse(text.lines, text.headings, today,
                                                             articles.keys())
    else:
        return ProfilePage(url, None, links=links, problems=_encoding(text))
    page = ProfilePage(url, layout, links=links, problems=_encoding(text) + parsed.problems)
    fields = parsed.researcher
    person = structured.person(text)
    fields["name"] = person.get("name") or fields["name"]
    if layout == bzpeer.SOURCE and fields.get("affiliation") is None and person.get("affiliation"):
        fields["affiliation"] = person["affiliation"]
    if not fields["name"]:
        page.problems.append(PageProblem(ProblemKind.NO_NAME, "no researcher name"))
        return page
    rid = researcher_id(url)
    page.researcher = ResearcherItem(id=rid, url=url, source=layout, **fields)
    if articles:
        for listing in parsed.works:
            _fill_from_structured(listing, articles.get(title_key(listing["title"])))
    # One page is one profile's list: a title it lists twice (other year or venue) is two works.
    work_ids = listing_work_ids(parsed.works, rid)
    for position, (listing, wid) in enumerate(zip(parsed.works, work_ids, strict=True), start=1):
        page.works.append(WorkItem(
            work_id=wid,
            researcher_id=rid,
            researcher_name=page.researcher.name,
            researcher_url=url,
            source=layout,
            position=position,
            **listing,
        ))
    if page.truncated:
        # Listings left out for want of a title explain a shortfall: the page is whole.
        if page.unread > len(page.untitled):
            _drop_cut_listing(page)
        page.problems.append(PageProblem(ProblemKind.TRUNCATED, (
            f"truncated: {page.researcher.listed_count} listings announced, "
            f"{len(page.works)} read")))
    page.researcher = replace(page.researcher,
                              work_ids=list(dict.fromkeys(w.work_id for w in page.works)),
                              complete=_complete(page))
    return page


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


def _fill_from_structured(listing: dict, article: structured.StructuredArticle | None) -> None:
    """Fill gaps the text left, for fields this layout has (present as keys)."""
    if article is None:
        return
    if "authors" in listing and not listing["authors"] and article.authors:
        listing["authors"] = list(article.authors)
    if "date" in listing and listing["date"] is None and article.date and len(article.date) >= 10:
        listing["date"] = article.date[:10]
    if listing.get("year") is None and article.date and article.date[:4].isdigit():
        listing["year"] = int(article.date[:4])


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
