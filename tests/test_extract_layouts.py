"""Page layouts as plug-ins: the registry, what a layout's parse turns into, and a
third layout added as the README's "Adding a page layout" says.

Each layout is a module implementing ``crawler.extract.layouts.base.Layout``;
``LAYOUTS`` is tried in order and the first that recognises a page reads it. The
third layout, ``publist``, lives in ``tests/support/publist_layout.py`` and is
registered for the tests that use it alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from crawler.extract import ProblemKind, parse_profile
from crawler.extract.layouts import LAYOUTS, recognise, register, unregister
from crawler.extract.layouts.base import Layout, Listing, ParseContext, ParsedPage, ResearcherFields
from crawler.extract.lines import PageText, page_text
from scholarindex.core.identity import researcher_id, work_id
from scholarindex.core.items import ResearcherItem, WorkItem
from tests.support.publist_layout import PUBLIST, Publist

TODAY = date(2026, 11, 22)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PUBLIST_PAGE = FIXTURES / "layouts" / "publist_ines_moreau.txt"


class Stub:
    """A layout that recognises one marker line and returns what it is given."""

    def __init__(self, source: str, marker: str, parsed: ParsedPage | None = None) -> None:
        self.source = source
        self.marker = marker
        self.parsed = parsed or ParsedPage(ResearcherFields(name="Stub Person"))

    def recognise(self, text: PageText) -> bool:
        return self.marker in text.lines[:3]

    def parse(self, text: PageText, context: ParseContext) -> ParsedPage:
        return self.parsed


@pytest.fixture
def registered() -> Iterator[list[Layout]]:
    """Layouts the test registers, unregistered afterwards whatever happens."""
    added: list[Layout] = []
    yield added
    for layout in added:
        unregister(layout.source)


def test_the_built_in_layouts_in_their_documented_order() -> None:
    assert [layout.source for layout in LAYOUTS] == ["bzpeer", "papercards"]


def test_the_first_layout_that_recognises_a_page_reads_it(registered: list[Layout]) -> None:
    late, early = Stub("late", "Stub page"), Stub("early", "Stub page")
    registered += [late, early]
    register(late)
    register(early, before="late")
    assert [layout.source for layout in LAYOUTS] == ["bzpeer", "papercards", "early", "late"]
    assert recognise(page_text("Stub page\nSomeone", "text/plain")) is early
    assert recognise(page_text("Nothing known\nSomeone", "text/plain")) is None


def test_a_layout_name_is_registered_once(registered: list[Layout]) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register(Stub("bzpeer", "x"))
    with pytest.raises(ValueError, match="no layout named 'nowhere'"):
        register(Stub("somewhere", "x"), before="nowhere")
    assert [layout.source for layout in LAYOUTS] == ["bzpeer", "papercards"]


def test_unregister_undoes_register() -> None:
    register(Stub("passing", "x"))
    unregister("passing")
    assert [layout.source for layout in LAYOUTS] == ["bzpeer", "papercards"]


def test_listing_fields_in_the_order_the_shipped_layouts_pass_them() -> None:
    """bzpeer.py and papercards.py build a Listing positionally (once a listing, where a
    class call's keyword arguments cost a dict): a field added or moved is added or
    moved there too."""
    assert [f.name for f in fields(Listing)] == [
        "title", "abstract", "type", "year", "date", "venue", "category", "score", "authors",
        "authors_truncated", "code"]


def _distinct(record: type, prefix: str) -> dict[str, Any]:
    """A string in every field, whatever its type: a value out of place shows where it went."""
    return {f.name: f"{prefix}{f.name}" for f in fields(record)}


def test_every_field_a_layout_reads_lands_in_its_item(registered: list[Layout]) -> None:
    """The items are built from the typed fields (works positionally, for speed): each
    field, set to a value of its own, comes out under its own name."""
    researcher = ResearcherFields(**{**_distinct(ResearcherFields, "r-"), "listed_count": 1})
    listing = Listing(**_distinct(Listing, "w-"))
    stub = Stub("stub", "Stub page", ParsedPage(researcher, [listing]))
    registered.append(stub)
    register(stub)
    page = parse_profile("https://stub.example/p", "Stub page\nr-name", "text/plain", TODAY)
    assert page.layout == "stub" and page.problems == []
    assert page.researcher is not None
    for f in fields(ResearcherFields):
        assert getattr(page.researcher, f.name) == getattr(researcher, f.name), f.name
    [work] = page.works
    for f in fields(Listing):
        assert getattr(work, f.name) == f"w-{f.name}", f.name
    assert (work.researcher_id, work.researcher_name, work.researcher_url, work.source,
            work.position, work.kind) == (page.researcher.id, "r-name", "https://stub.example/p",
                                          "stub", 1, "work")
    assert set(ResearcherItem.__dataclass_fields__) >= {f.name for f in fields(ResearcherFields)}
    assert set(WorkItem.__dataclass_fields__) >= {f.name for f in fields(Listing)}


@pytest.fixture
def publist() -> Iterator[Publist]:
    """The test layout, registered for one test."""
    register(PUBLIST)
    yield PUBLIST
    unregister(PUBLIST.source)


def test_a_third_layout_reads_its_fixture_page_into_items(publist: Publist) -> None:
    url = "https://publist.example/ines-moreau"
    page = parse_profile(url, PUBLIST_PAGE.read_bytes(), "text/plain", TODAY)
    assert page.layout == "publist" and page.problems == [] and not page.truncated
    assert page.researcher is not None
    assert (page.researcher.id, page.researcher.name, page.researcher.affiliation,
            page.researcher.source, page.researcher.listed_count, page.researcher.complete) == \
        (researcher_id(url), "Ines Moreau", "Université de Lille", "publist", 3, True)
    assert [(w.title, w.year, w.venue, w.position) for w in page.works] == [
        ("Graph Sketches for Streaming Joins", 2021, "VLDB", 1),
        ("Adaptive Bloom Filters Revisited", 2019, "SIGMOD", 2),
        ("A Note on Cuckoo Hashing", 2018, None, 3)]
    assert [w.work_id for w in page.works] == [work_id(w.title) for w in page.works]
    assert page.researcher.work_ids == [w.work_id for w in page.works]
    assert {(w.source, w.researcher_name, w.researcher_url) for w in page.works} == \
        {("publist", "Ines Moreau", url)}
    # Fields the layout does not print stay empty, as another layout's do.
    assert {(w.type, w.date, w.authors, w.abstract) for w in page.works} == \
        {(None, None, None, None)}


def test_a_third_layouts_problems_are_typed_as_the_shipped_layouts_are(publist: Publist) -> None:
    text = PUBLIST_PAGE.read_text(encoding="utf-8").replace("3 publications", "4 publications")
    text += "2017 · · arXiv\n"
    page = parse_profile("https://publist.example/ines-moreau", text, "text/plain", TODAY)
    assert len(page.works) == 3 and page.truncated and page.unread == 1
    assert [str(problem) for problem in page.untitled] == [
        "untitled listing 4: '2017 · · arXiv'; left out"]
    # The listing left out explains the shortfall: the last listing read is kept.
    assert {problem.kind for problem in page.problems} == {ProblemKind.UNTITLED,
                                                           ProblemKind.TRUNCATED}
    assert page.researcher is not None and not page.researcher.complete


def test_a_layout_registered_last_takes_no_page_the_shipped_layouts_read(publist: Publist
                                                                          ) -> None:
    for stem, layout in (("bzpeer_chao_jin", "bzpeer"),
                         ("papercards_jialiang_cheng", "papercards")):
        body = (FIXTURES / "seeds" / f"{stem}.txt").read_bytes()
        assert parse_profile("https://x.example/p", body, "text/plain", TODAY).layout == layout


def test_an_unregistered_layout_reads_nothing() -> None:
    page = parse_profile("https://publist.example/ines-moreau", PUBLIST_PAGE.read_bytes(),
                         "text/plain", TODAY)
    assert page.layout is None and page.researcher is None and page.works == []
