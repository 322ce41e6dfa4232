"""A labelled data set as the profile sites a crawl would meet, through bench.generate's renderer.

    sites = build_sites(load("dblp-acm"))      # [Site "DBLP" (layout A), Site "ACM" (layout B)]
    body = sites[0].render(sites[0].pages[0])  # the page's HTML
    write_sites(sites, root)                   # root/<site>/... pages + root/listings.json

How records become pages:

- one profile per first author (the author field's first name, exactly as printed);
  a record with no author goes on a profile named after its source ("ACM");
  profiles in the order their first record comes in the file, listings in file order;
- DBLP records: layout A (BZPEER researcher profiles), a listing's meta line is
  ``paper<year><venue>`` (the data has no publication type, so every listing is a
  "paper"; the venue verbatim), then the title; no abstract, and no author list
  (layout A prints none);
- ACM, Scholar and Cora records: layout B (paper cards). The meta line is the date
  ``Jan 1, <year>``: the card prints a day, the data gives a year only, so the day
  is a placeholder the parser reads back as that year. A record without a year
  gets an empty meta line (what such a site prints); today's card parser cannot
  tell such a card from the previous listing, and those listings are lost (the
  evaluator counts them). Then the title and the author line verbatim; no abstract,
  no venue (the card layout has no place for one);
- every text as the data has it: entities (``Lud&#228;scher``) are escaped, so the
  page shows them as the data spells them, as does mojibake.

Each page's records, in page order, are its *listing map*: ``Page.records`` here,
``listings.json`` on disk (``{site: {path: [record key, ...]}}``), so what the
crawl reads back can be scored per record (``bench.er.listings``).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.er.data import DataSet, Record
from bench.generate import LAYOUT_A, LAYOUT_B, Listing, Profile, Work, render, write_url_list

# The layout each source's records are shown in.
LAYOUTS = {"DBLP": LAYOUT_A, "ACM": LAYOUT_B, "Scholar": LAYOUT_B, "Cora": LAYOUT_B}
WORK_TYPE = "paper"  # layout A's type word: the data sets give none
PLACEHOLDER_MONTH_DAY = (1, 1)  # layout B prints a day; the data gives a year


@dataclass
class Page:
    path: str
    owner: str
    records: list[Record] = field(default_factory=list)


@dataclass
class Site:
    """The profile site of one source (one table)."""

    name: str  # the source: "DBLP", "ACM", ...
    layout: str
    pages: list[Page]

    @property
    def folder(self) -> str:
        return self.name.lower()

    def render(self, page: Page) -> str:
        person, works = _profile(self.layout, page)
        return render(person, works)


def build_sites(data: DataSet) -> list[Site]:
    """One site per table of ``data`` (see the module doc for the rules)."""
    return [build_site(source, records) for source, records in data.tables.items()]


def build_site(source: str, records: Sequence[Record]) -> Site:
    layout = LAYOUTS[source]
    by_owner: dict[str, Page] = {}
    folder = "bzpeer/researchers" if layout == LAYOUT_A else "papercards/authors"
    for record in records:
        owner = record.authors[0] if record.authors else source
        page = by_owner.get(owner)
        if page is None:
            page = by_owner[owner] = Page(f"/{folder}/{_slug(owner)}-{len(by_owner):05d}.html",
                                          owner)
        page.records.append(record)
    return Site(source, layout, list(by_owner.values()))


def _slug(name: str) -> str:
    plain = unicodedata.normalize("NFKD", name.lower()).encode("ascii", "ignore").decode()
    return "".join(ch if ch.isalnum() else "-" for ch in plain).strip("-")[:60] or "profile"


def _profile(layout: str, page: Page) -> tuple[Profile, list[Work]]:
    works = [_work(i, record) for i, record in enumerate(page.records)]
    listings = [Listing(i, record.title, authors=list(record.authors),
                        authors_line=record.authors_text if layout == LAYOUT_B else None)
                for i, record in enumerate(page.records)]
    person = Profile(0, layout, page.owner, page.path, listings, _header(layout, len(listings)))
    return person, works


def _work(index: int, record: Record) -> Work:
    month, day = PLACEHOLDER_MONTH_DAY
    return Work(index=index, title=record.title, abstract=None, authors=list(record.authors),
                year=record.year, month=month, day=day, type=WORK_TYPE, venue=record.venue,
                category="", score=None, code=False)


def _header(layout: str, count: int) -> dict:
    """The profile's header: fixed values (nothing here is measured)."""
    if layout == LAYOUT_A:
        return {"bio": "Publications as listed by the bibliography.", "role": "Researcher",
                "affiliation": None, "open": False, "trust": 50, "trust_label": "Unverified",
                "level": 1, "claimed": False, "works": count, "followers": 0, "topics": 1,
                "collaborators": 0}
    return {"field": "CS", "h_index": 1, "papers": count, "citations": 0, "novelty": 50,
            "ai_score": 50.0}


def write_sites(sites: Sequence[Site], root: Path) -> dict[str, Path]:
    """Write each site under ``root/<site>/`` (pages, robots.txt, paths.txt) and the
    listing map ``root/listings.json``; returns each site's folder."""
    folders: dict[str, Path] = {}
    listing_map: dict[str, dict[str, list[str]]] = {}
    for site in sites:
        folder = folders[site.name] = root / site.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "robots.txt").write_text("User-agent: *\nAllow: /\n", "utf-8")
        for page in site.pages:
            path = folder / page.path.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(site.render(page), "utf-8")
        listing_map[site.name] = {p.path: [r.key for r in p.records] for p in site.pages}
    (root / "listings.json").write_text(json.dumps(listing_map), "utf-8")
    return folders


def write_urls(site: Site, path: Path, base: str, limit: int | None = None) -> Path:
    """The site's profile URLs under ``base``, one a line (the crawl's url_file)."""
    return write_url_list(path, base, [p.path for p in site.pages[:limit]])
