"""A labelled data set as the profile sites a crawl would meet, through bench.generate's renderer.

    sites = build_sites(load("dblp-acm"))      # [Site "DBLP" (layout A), Site "ACM" (layout B)]
    body = sites[0].render(sites[0].pages[0])  # the page's HTML
    write_sites(sites, root)                   # root/<site>/... pages + root/listings.json

How records become pages:

- two tables (DBLP-ACM, DBLP-Scholar): each table is one site, one profile per
  first author (the author field's first name, exactly as printed); Cora's one
  table likewise;
- a single-table export (bib-dedupe's sets, ``EITHER``): each record goes on one
  of its authors' profiles on one of two sites, layout A or layout B, both drawn
  from the record's key (seeded, so every run places it alike; about half on each
  layout), as co-authors' profiles list one paper on real sites. The profile shows
  the name given name first ("Zuna, R E" -> "R E Zuna"), as a profile page heads it;
- a record with no author goes on a profile named after its source ("ACM");
  profiles in the order their first record comes in the file, listings in file order;
- a record with no title is not placed: a profile prints no listing without one, and
  the parser could not tell it from the listing around it. It still counts among
  the records and in the gold, so its pairs are missed (the scoreboard shows it as
  records not placed);
- DBLP records, and a single-table record drawn for layout A: layout A (BZPEER
  researcher profiles), a listing's meta line is ``<type><year><venue>`` (the
  export's entry type, "paper" where the data has none; the venue verbatim, however
  long; an empty year or venue prints nothing, ``article2010``), then the title; no
  abstract, and no author list (layout A prints none). Without a year the line
  (``paper<venue>``) is no meta line: layout A has no place for a listing without
  one, so it is lost, and counted;
- ACM, Scholar and Cora records, and a single-table record drawn for layout B:
  layout B (paper cards). The meta line is the date
  ``Jan 1, <year>``: the card prints a day, the data gives a year only, so the day
  is a placeholder the parser reads back as that year. A record without a year
  gets an empty meta line (what such a site prints); today's card parser cannot
  tell such a card from the previous listing, and those listings are lost (the
  evaluator counts them). Then the title and the author line verbatim; no abstract,
  no venue (the card layout has no place for one);
- every text as the data has it: entities (``Lud&#228;scher``) are escaped, so the
  page shows them as the data spells them, as does mojibake;
- ``layout`` (``build_sites(data, LAYOUT_A)``, ``evaluate --layout A``) shows every
  table in one layout instead, one site a table: Cora in layout A prints its venues
  as meta lines (131 empty, 17 longer than 119 characters, 12 starting with a digit).

Each page's records, in page order, are its *listing map*: ``Page.records`` here,
``listings.json`` on disk (``{site: {path: [record key, ...]}}``), so what the
crawl reads back can be scored per record (``bench.er.listings``).
"""

from __future__ import annotations

import json
import random
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.er.data import DataSet, Record
from bench.generate import LAYOUT_A, LAYOUT_B, Listing, Profile, Work, render, write_url_list

EITHER = "either"  # a single-table export: each record on layout A or B, drawn by its key
# The layout each source's records are shown in.
LAYOUTS = {"DBLP": LAYOUT_A, "ACM": LAYOUT_B, "Scholar": LAYOUT_B, "Cora": LAYOUT_B,
           "Respiratory": EITHER, "Cytology": EITHER}
SHARE_LAYOUT_A = 0.5  # of an EITHER table's records: both parsers get as much to read
PLACEMENT_SEED = "bench.er.site"  # changing it moves every EITHER record
WORK_TYPE = "paper"  # layout A's type word where the data gives none
PLACEHOLDER_MONTH_DAY = (1, 1)  # layout B prints a day; the data gives a year


@dataclass
class Page:
    path: str
    owner: str
    records: list[Record] = field(default_factory=list)


@dataclass
class Site:
    """The profile site of one source (one table)."""

    name: str  # the source ("DBLP", "ACM", ...), or "<source>-<layout>" for an EITHER table
    layout: str
    pages: list[Page]

    @property
    def folder(self) -> str:
        return self.name.lower()

    def render(self, page: Page) -> str:
        person, works = _profile(self.layout, page)
        return render(person, works)


def build_sites(data: DataSet, layout: str | None = None) -> list[Site]:
    """The sites of ``data``'s tables: one per table, two for an ``EITHER`` table (see the
    module doc for the rules); with ``layout``, one per table, all in that layout."""
    sites: list[Site] = []
    for source, records in data.tables.items():
        sites += split_sites(source, records) if not layout and LAYOUTS[source] == EITHER \
            else [build_site(source, records, layout)]
    return sites


def build_site(source: str, records: Sequence[Record], layout: str | None = None) -> Site:
    """The site of a table shown in one layout (its own, or ``layout``), a profile per
    first author."""
    layout = layout or LAYOUTS[source]
    return Site(source, layout, _pages(layout, [
        (record.authors[0] if record.authors else source, record)
        for record in records if placed(record)]))


def split_sites(source: str, records: Sequence[Record]) -> list[Site]:
    """An ``EITHER`` table on two sites, layout A and layout B: each record on the
    profile of one of its authors, layout and author drawn from its key."""
    drawn: dict[str, list[tuple[str, Record]]] = {LAYOUT_A: [], LAYOUT_B: []}
    for record in records:
        if placed(record):
            layout, owner = placement(record)
            drawn[layout].append((owner, record))
    return [Site(f"{source}-{layout}", layout, _pages(layout, owned))
            for layout, owned in drawn.items()]


def placed(record: Record) -> bool:
    """Does the record go on a page? Not without a title (see the module doc)."""
    return bool(record.title.strip())


def placement(record: Record) -> tuple[str, str]:
    """(layout, profile name) of a record of an ``EITHER`` table; the same every run."""
    draw = random.Random(f"{PLACEMENT_SEED}:{record.key}")
    layout = LAYOUT_A if draw.random() < SHARE_LAYOUT_A else LAYOUT_B
    owner = profile_name(draw.choice(record.authors)) if record.authors else record.source
    return layout, owner


def profile_name(printed: str) -> str:
    """A name as a profile heads it: "Zuna, R E" -> "R E Zuna"; other forms unchanged."""
    surname, comma, given = printed.partition(",")
    if not comma or "," in given or not given.strip() or not surname.strip():
        return printed.strip()
    return f"{given.strip()} {surname.strip()}"


def _pages(layout: str, owned: Sequence[tuple[str, Record]]) -> list[Page]:
    """One page per owner, in order of the owner's first record; records in given order."""
    by_owner: dict[str, Page] = {}
    folder = "bzpeer/researchers" if layout == LAYOUT_A else "papercards/authors"
    for owner, record in owned:
        page = by_owner.get(owner)
        if page is None:
            page = by_owner[owner] = Page(f"/{folder}/{_slug(owner)}-{len(by_owner):05d}.html",
                                          owner)
        page.records.append(record)
    return list(by_owner.values())


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
                year=record.year, month=month, day=day, type=record.entry_type or WORK_TYPE,
                venue=record.venue,
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
