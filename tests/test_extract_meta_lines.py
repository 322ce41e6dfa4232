"""Layout A's ``<type><year><venue>`` lines, whatever the venue holds and whatever the markup.

Pages are built here from listings (type, year, venue, title, abstract) and shown in
several markups: the plain text, one block element per visible line, the pieces as
inline spans run together (with or without spaces between them), and one table cell
per piece. Every markup must give the same listings (the rule:
``crawler/extract/layouts/bzpeer.py``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from crawler.extract import ProblemKind, parse_profile
from crawler.extract.layouts.bzpeer import WORK_TYPES
from crawler.extract.page import ProfilePage

TODAY = date(2026, 11, 22)
SEED = Path(__file__).parent.parent / "fixtures" / "heldout" / "bzpeer_kadri_tamm.txt"
_SEED_LINES = [line for line in SEED.read_text(encoding="utf-8").splitlines() if line]
# The page down to "Published work": its listings are replaced by the test's own.
HEADER = _SEED_LINES[:_SEED_LINES.index("Published work") + 1]
PLACEHOLDER = "Abstract not available."
PROSE = ("Heavy-tailed fluctuations are pervasive in environmental records, yet most inference "
         "methods scale poorly beyond a few thousand observations. We introduce a stochastic "
         "variational scheme that represents the stable law through an auxiliary Gaussian "
         "scale mixture, which yields closed-form local updates. On synthetic data the method "
         "recovers the stability index to within 0.02 and is two orders of magnitude faster "
         "than Markov chain Monte Carlo.")
LONG_VENUE = ("Pediatric Nephrology.Conference: 15th Congress of the International Pediatric "
              "Nephrology Association, IPNA 2010 New York, NY United States.")
ONE_LINE = ("txt", "lines", "spans", "spaced")  # markups that print a meta line as one line
MARKUPS = (*ONE_LINE, "cells")


@dataclass(frozen=True)
class Listing:
    type: str
    year: int
    venue: str  # as printed: "" when the export has none
    title: str | None  # None: the page prints no title for it
    abstract: str | None = None


def _meta_text(item: Listing, between: str = "") -> str:
    return between.join(p for p in (item.type, str(item.year), item.venue) if p)


def _txt(items: list[Listing]) -> str:
    lines = [*HEADER, f"{len(items)} published item(s)"]
    for item in items:
        lines += [_meta_text(item), *(t for t in (item.title, item.abstract) if t)]
    return "\n\n".join(lines) + "\n"


def _html(items: list[Listing], markup: str) -> str:
    e = html.escape
    out = [f"<div>{e(line)}</div>" for line in HEADER[:-1]]
    out += ["<h2>Published work</h2>", f"<p>{len(items)} published item(s)</p>"]
    rows = []
    for item in items:
        if markup == "cells":
            cells = [item.type, str(item.year), item.venue, item.title or "", item.abstract or ""]
            rows.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
            continue
        if markup == "lines":
            out.append(f"<div>{e(_meta_text(item))}</div>")
        else:  # spans: the pieces run together, or with a space between them ("spaced")
            between = " " if markup == "spaced" else ""
            pieces = [item.type, str(item.year), item.venue]
            out.append("<div>" + between.join(f"<span>{e(p)}</span>" for p in pieces) + "</div>")
        if item.title:
            words = item.title.split(" ")
            out.append(f"<h3><span>{e(words[0])} </span><em>{e(' '.join(words[1:]))}</em></h3>"
                       if markup == "spans" and len(words) > 1 else f"<h3>{e(item.title)}</h3>")
        if item.abstract:
            out.append(f"<p>{e(item.abstract)}</p>")
    if rows:
        out.append("<table><tbody>" + "".join(rows) + "</tbody></table>")
    return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>" + \
        "\n".join(out) + "</body></html>"


def parse(items: list[Listing], markup: str) -> ProfilePage:
    if markup == "txt":
        return parse_profile("https://example.org/p", _txt(items), "text/plain", TODAY)
    return parse_profile("https://example.org/p", _html(items, markup).encode(), "text/html",
                         TODAY)


def read(page: ProfilePage) -> list[tuple]:
    return [(w.type, w.year, w.venue, w.title, w.abstract) for w in page.works]


def shown(items: list[Listing]) -> list[tuple]:
    """What the listings should read as: text as a browser shows it (spaces collapsed)."""
    def clean(text: str | None) -> str | None:
        return (" ".join(text.split()) or None) if text is not None else None
    return [(i.type, i.year, clean(i.venue), clean(i.title), clean(i.abstract)) for i in items]


# --- the cases real exports print ----------------------------------------------------------

CASES = {
    "empty venue, placeholder abstract": [
        Listing("article", 2010, "", "Renal outcomes after paediatric transplant", PLACEHOLDER),
        Listing("conference", 2019, "", "A title after an empty venue", PROSE),
        Listing("preprint", 2026, "arXiv", "Title two", "A short abstract."),
    ],
    "empty venue, no abstract, then the next listing": [
        Listing("conference", 2019, "", "Only a title", None),
        Listing("article", 2019, "Nature Communications", "Second", None),
        Listing("article", 2011, "", "Last, with no venue and no abstract", None),
    ],
    "long venue with a year, full stops and a conference": [
        Listing("article", 2010, LONG_VENUE, "Hypertension in children on dialysis", PLACEHOLDER),
    ],
    "venues with digits, colons, commas": [
        Listing("article", 2009, "3 Biotech", "Starts with a digit", None),
        Listing("conference", 2019, "3DV", "Depth completion", PROSE),
        Listing("article", 2018, "Proc. VLDB Endow. 11(12): 1-14, 2018", "Numbers", None),
        Listing("journal-article", 2020, "Conference: ICML 2020, Vienna, Austria.", "Colons", None),
        Listing("book-chapter", 2001, "LNCS, Vol. 2001", "A chapter", "Chapter text."),
    ],
    "a very long venue": [
        Listing("proceedings", 2015, " ".join([LONG_VENUE] * 3), "After a 450-character venue",
                PROSE),
    ],
    "unicode venue": [
        Listing("article", 2016, "Eesti Teaduste Akadeemia Toimetised · Võrtsjärv — ü",
                "Lévy processes", None),
    ],
}


@pytest.mark.parametrize("markup", MARKUPS)
@pytest.mark.parametrize("case", CASES)
def test_every_meta_line_reads_right(case: str, markup: str) -> None:
    items = CASES[case]
    page = parse(items, markup)
    assert read(page) == shown(items)
    assert page.problems == [] and not page.truncated


@pytest.mark.parametrize("markup", MARKUPS)
def test_an_empty_venue_never_takes_the_title(markup: str) -> None:
    items = CASES["empty venue, placeholder abstract"][:1]
    page = parse(items, markup)
    assert [w.title for w in page.works] == ["Renal outcomes after paediatric transplant"]
    assert page.works[0].venue is None and page.works[0].abstract == PLACEHOLDER


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_long_venue_with_a_year_keeps_its_listing(markup: str) -> None:
    page = parse(CASES["long venue with a year, full stops and a conference"], markup)
    assert len(page.works) == 1 and page.works[0].year == 2010
    assert page.works[0].venue == LONG_VENUE


@pytest.mark.parametrize("printed", ["article20093 Biotech", "article 2009 3 Biotech"])
def test_a_digit_after_the_year_starts_the_venue(printed: str) -> None:
    """The year is the four digits after the type; a venue glued to it starts after them."""
    text = _txt([Listing("article", 2009, "", "T", None)]).replace("article2009", printed)
    page = parse_profile("https://example.org/p", text, "text/plain", TODAY)
    assert [(w.year, w.venue, w.title) for w in page.works] == [(2009, "3 Biotech", "T")]


def test_a_venue_may_be_printed_apart_from_type_and_year_run_together() -> None:
    """The type a block of its own, the year and venue spans run together."""
    body = _html([Listing("article", 2010, "Nature", "T", None)], "lines").replace(
        "<div>article2010Nature</div>", "<div>article</div><div><span>2010</span>"
                                        "<span>Nature</span></div>")
    page = parse_profile("https://example.org/p", body.encode(), "text/html", TODAY)
    assert read(page) == [("article", 2010, "Nature", "T", None)]


@pytest.mark.xfail(strict=True, reason="one cell per piece, no venue, a short abstract: a venue "
                   "line and a title line read alike (bzpeer.py, rule 3)")
def test_cells_with_no_venue_and_a_short_abstract() -> None:
    items = [Listing("article", 2010, "", "A title", "A short abstract.")]
    assert read(parse(items, "cells")) == shown(items)


# --- a listing without a title of its own: left out, and said --------------------------------

@pytest.mark.parametrize("markup", ONE_LINE)
@pytest.mark.parametrize("slot", ["nothing", "placeholder", "prose", "unknown meta line"])
def test_a_listing_with_no_title_is_left_out_and_reported(markup: str, slot: str) -> None:
    first = Listing("article", 2010, "Nature", "First", None)
    last = Listing("preprint", 2024, "arXiv", "Last", "Its abstract.")
    untitled = {"nothing": Listing("article", 2011, "", None, None),
                "placeholder": Listing("article", 2011, "", None, PLACEHOLDER),
                "prose": Listing("conference", 2011, "ICML", None, PROSE),
                "unknown meta line": Listing("article", 2011, "", "misc2011arXiv", None)}[slot]
    page = parse([first, untitled, last], markup)
    assert [w.title for w in page.works] == ["First", "Last"]
    assert {problem.kind for problem in page.problems} == {ProblemKind.UNTITLED,
                                                           ProblemKind.TRUNCATED}
    assert len(page.untitled) == 1 and str(page.untitled[0]).startswith("untitled listing 2:")
    assert page.truncated and page.unread == 1
    assert not page.researcher.complete  # type: ignore[union-attr]


def test_a_listing_left_out_does_not_make_the_page_look_cut() -> None:
    """A whole page short of its count only by a listing left out keeps its last listing,
    even one that does not end as a cut page's text ends (a title with no abstract)."""
    items = [Listing("article", 2010, "", None, PLACEHOLDER),
             Listing("article", 2012, "Nature", "A title with no full stop", None)]
    page = parse(items, "txt")
    assert [w.title for w in page.works] == ["A title with no full stop"]
    assert not page.of_kind(ProblemKind.CUT_LISTING)


def test_a_page_with_no_readable_listing_says_so() -> None:
    page = parse_profile("https://example.org/p",
                         _txt([Listing("article", 2010, "Nature", "T", None)])
                         .replace("article2010Nature", "Article 2010 Nature"), "text/plain", TODAY)
    assert page.works == [] and page.truncated and page.unread == 1


# --- any venue, any markup ---------------------------------------------------------------

_PIECES = ["Nature", "Communications", "2010", "IPNA 2010", "15th", "3", "3DV", "12(3):", "1-14",
           "Vol.", "No.", "pp.", "Conference:", "Proceedings", "of", "the", "New York, NY",
           "United States.", "J.", "Lévy", "Võrtsjärv", "日本語", "Ünïcødé", "—", "&", "<b>",
           "(2019)", ":", ",", ".", "arXiv", "IEEE/ACM", "cs.LG", "Workshop", "'s", "\"Q\""]
_JOINS = ["", " ", ". ", ", ", ": ", "."]
# Text a page can hold on one line: no control or line-breaking characters (a browser
# shows none), no unassigned code points.
_CHARS = st.characters(exclude_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp"))
_TYPE_AND_YEAR = re.compile(rf"(?:{'|'.join(WORK_TYPES)}) ?(?:19|20)\d\d")


def _joined(parts: list[tuple[str, str]]) -> str:
    return "".join(piece + join for piece, join in parts).strip()


venues = st.one_of(
    st.just(""),
    st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_JOINS)), min_size=1,
             max_size=80).map(_joined),  # up to 1,000 characters and more
    st.text(_CHARS, max_size=400),
).map(lambda v: " ".join(v.split()))
titles = st.lists(st.sampled_from(["Scalable", "Inference", "for", "α-Stable", "Lévy",
                                   "Processes", "3D", "2019:", "A", "Study", "of", "Graphs",
                                   "Neural", "Networks", "on", "the", "Edge", "(Extended)"]),
                  min_size=1, max_size=25).map(lambda words: " ".join(["Title", *words]))
abstracts = st.sampled_from([None, PLACEHOLDER, PROSE, "Short abstract.", "No abstract available"])
listings = st.builds(Listing, st.sampled_from(WORK_TYPES), st.integers(1900, 2099), venues,
                     titles, abstracts)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.lists(listings, min_size=1, max_size=6), st.sampled_from(MARKUPS))
def test_any_venue_in_any_markup(items: list[Listing], markup: str) -> None:
    # A venue that itself reads as a meta line is another listing in every markup.
    assume(not any(_TYPE_AND_YEAR.match(i.venue) or i.venue in WORK_TYPES for i in items))
    if markup == "cells":  # the one case rule 3 leaves open (the xfail above)
        assume(not any(not i.venue and i.abstract in ("Short abstract.",) for i in items))
    page = parse(items, markup)
    assert read(page) == shown(items)
    assert page.problems == [] and not page.truncated
