"""Every field of every item, for every fixture page in every markup.

Expected values in fixtures/expected/ were written from the pages' text by hand,
not produced by this parser.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from crawler.extract import parse_profile
from scholarindex.core.identity import work_id

FIXTURES = Path(__file__).parent.parent / "fixtures"
TODAY = date(2026, 11, 22)
PAGES = {p.stem: p for d in ("seeds", "heldout") for p in sorted((FIXTURES / d).glob("*.txt"))}
MARKUPS = sorted(p.name for p in (FIXTURES / "html").glob("*") if p.is_dir() and p.name != "broken")
RESEARCHER_KEYS = (
    "name bio role affiliation trust_score trust_label verification_level claimed "
    "open_to_collaborate works_count followers topics_count collaborators_count field h_index "
    "papers_count citations novelty_pct ai_score listed_count"
).split()
WORK_KEYS = (
    "title abstract type year date venue category score authors authors_truncated code"
).split()


def expected(stem: str) -> dict:
    return json.loads((FIXTURES / "expected" / f"{stem}.json").read_text(encoding="utf-8"))


def renderings() -> list[tuple[str, str]]:
    cases = [(stem, "txt") for stem in PAGES]
    cases += [(stem, markup) for markup in MARKUPS for stem in PAGES
              if (FIXTURES / "html" / markup / f"{stem}.html").exists()]
    return cases


def load(stem: str, markup: str) -> tuple[bytes, str]:
    if markup == "txt":
        return PAGES[stem].read_bytes(), "text/plain"
    return (FIXTURES / "html" / markup / f"{stem}.html").read_bytes(), "text/html"


@pytest.mark.parametrize(("stem", "markup"), renderings())
def test_every_field(stem: str, markup: str) -> None:
    body, content_type = load(stem, markup)
    page = parse_profile(f"https://example.org/{stem}", body, content_type, TODAY)
    want = expected(stem)
    assert page.layout == want["layout"]
    if want["researcher"] is None:
        assert page.researcher is None and page.works == []
        return
    got = {key: getattr(page.researcher, key) for key in RESEARCHER_KEYS}
    assert got == {key: want["researcher"][key] for key in RESEARCHER_KEYS}
    assert [{key: getattr(w, key) for key in WORK_KEYS} for w in page.works] == [
        {key: w[key] for key in WORK_KEYS} for w in want["works"]
    ]
    assert page.truncated == bool(want.get("truncated"))
    assert page.researcher is not None
    for work in page.works:
        assert work.work_id == work_id(work.title)
        assert work.researcher_id == page.researcher.id
        assert work.researcher_name == page.researcher.name


@pytest.mark.parametrize(("stem", "markup"), renderings())
def test_plain_and_html_agree_with_typed_values(stem: str, markup: str) -> None:
    """Counts are ints and booleans are bools, not strings that look like them."""
    body, content_type = load(stem, markup)
    page = parse_profile(f"https://example.org/{stem}", body, content_type, TODAY)
    if page.researcher is None:
        return
    for key in ("trust_score", "works_count", "followers", "h_index", "citations"):
        value = getattr(page.researcher, key)
        assert value is None or type(value) is int
    for work in page.works:
        assert work.year is None or type(work.year) is int


def identity_pairs() -> list[tuple[str, str, str, str]]:
    pairs = []
    for stem in PAGES:
        for title, others in expected(stem).get("same_work_as", {}).items():
            for other in others:
                other_stem, other_title = other.split(":", 1)
                pairs.append((stem, title, other_stem, other_title))
    return pairs


@pytest.mark.parametrize(("stem", "title", "other_stem", "other_title"), identity_pairs())
def test_same_work_across_pages(stem: str, title: str, other_stem: str, other_title: str) -> None:
    assert work_id(title) == work_id(other_title)


def test_seed_pages_have_25_distinct_works_and_relibra_is_shared() -> None:
    seeds = sorted((FIXTURES / "seeds").glob("*.txt"))
    listings = [w for p in seeds for w in parse_profile(str(p), p.read_bytes(), None, TODAY).works]
    assert len(listings) == 26
    by_id: dict[str, set[str]] = {}
    for work in listings:
        by_id.setdefault(work.work_id, set()).add(work.researcher_name)
    assert len(by_id) == 25
    shared = {wid: names for wid, names in by_id.items() if len(names) > 1}
    assert list(shared.values()) == [{"Chao Jin", "Yinmin Zhong"}]


def test_distinct_titles_get_distinct_ids_across_all_fixtures() -> None:
    """Only titles declared the same work (same_work_as) may share an id."""
    same = {(a, b) for s, a, _, b in identity_pairs()} | {(b, a) for s, a, _, b in identity_pairs()}
    by_id: dict[str, set[str]] = {}
    for stem in PAGES:
        for work in expected(stem)["works"]:
            by_id.setdefault(work_id(work["title"]), set()).add(work["title"])
    for titles in by_id.values():
        ordered = sorted(titles)
        for i, first in enumerate(ordered):
            for second in ordered[i + 1:]:
                assert (first, second) in same, f"{first!r} and {second!r} share an id"


BROKEN = json.loads((FIXTURES / "html" / "broken" / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", BROKEN, ids=[c["case"] for c in BROKEN])
def test_wrong_or_missing_encoding_still_reads_the_text(case: dict) -> None:
    body = (FIXTURES / "html" / "broken" / case["file"]).read_bytes()
    page = parse_profile("https://example.org/p", body, "text/html", TODAY)
    want = expected(case["stem"])
    assert page.researcher is not None and page.researcher.name == want["researcher"]["name"]
    assert [w.title for w in page.works] == [w["title"] for w in want["works"]]
    assert [w.abstract for w in page.works] == [w["abstract"] for w in want["works"]]
