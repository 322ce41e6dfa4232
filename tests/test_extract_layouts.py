"""Page layouts as plug-ins: the registry, and what a layout's parse turns into.

Each layout is a module of ``crawler.extract.layouts`` implementing ``base.Layout``;
``LAYOUTS`` is tried in order and the first that recognises a page reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from datetime import date
from typing import Any

import pytest

from crawler.extract import parse_profile
from crawler.extract.layouts import LAYOUTS, recognise, register, unregister
from crawler.extract.layouts.base import Layout, Listing, ParseContext, ParsedPage, ResearcherFields
from crawler.extract.lines import PageText, page_text
from scholarindex.core.items import ResearcherItem, WorkItem

TODAY = date(2026, 11, 22)


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
