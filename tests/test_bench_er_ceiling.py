"""The ceiling report counts the pairs the pages cannot tell apart, class by class."""

from __future__ import annotations

from typing import Any

import pytest

from bench.er.ceiling import main, one_work_id, surnames, title_classes, year_class
from bench.er.data import available


def _item(work_id: str, title: str, year: int | None, owner: str,
          authors: list[str] | None = None) -> dict[str, Any]:
    return {"work_id": work_id, "title": title, "year": year, "researcher_name": owner,
            "authors": authors}


ITEMS = {
    "A:1": _item("w1", "Learning Binary Relations.", 1989, "Sally A. Goldman"),
    "B:1": _item("w1", "learning binary relations", 1989, "S Goldman",
                 ["S Goldman", "R Rivest"]),
    "B:2": _item("w2", "Learning binary relations,", None, "Rivest",
                 ["Rivest, R. L.", "Schapire, R."]),
    "B:3": _item("w1", "Learning Binary Relations", 1990, "Jane Doe"),
    "A:2": _item("w3", "Another paper", 1989, "Sally A. Goldman"),
}


def test_pairs_of_one_work_id_are_counted_by_the_gold() -> None:
    gold = {("A:1", "B:1")}
    # w1 holds A:1, B:1, B:3: across the tables A:1-B:1 (gold) and A:1-B:3 (not).
    assert one_work_id(ITEMS, gold, cross_source=True) == {True: 1, False: 1}
    # Within tables too: B:1-B:3 as well.
    assert one_work_id(ITEMS, gold, cross_source=False) == {True: 1, False: 2}


def test_one_title_pairs_need_a_shared_surname_and_go_by_their_years() -> None:
    gold = {("A:1", "B:1"), ("A:1", "B:2")}
    counts = title_classes(ITEMS, gold, cross_source=True)
    # A:1-B:1: the same year, gold. A:1-B:2 (gold) and A:1-B:3 share no surname: not
    # counted. A:2's title is its own.
    assert counts == {("same year", True): 1}
    counts = title_classes(ITEMS, gold, cross_source=False)
    assert counts == {("same year", True): 1, ("undated", False): 1}  # B:1-B:2: Rivest


def test_surnames_read_author_lines_and_the_owner() -> None:
    assert surnames(ITEMS["B:2"]) == {"rivest", "schapire"}
    assert surnames(ITEMS["A:1"]) == {"goldman"}


@pytest.mark.parametrize(("a", "b", "expected"), [
    (1989, 1989, "same year"), (None, 1989, "undated"), (1989, 1990, "one apart"),
    (1995, 1989, "further")])
def test_year_classes(a: int | None, b: int | None, expected: str) -> None:
    assert year_class(a, b) == expected


def test_the_report_prints_every_class_of_a_set(capsys: pytest.CaptureFixture[str]) -> None:
    if not available("bib-cytology"):
        pytest.skip("bib-cytology is not in ER_DATA_DIR (default ../shared/data/er)")
    assert main(["--data", "bib-cytology"]) == 0
    out = capsys.readouterr().out
    assert "one work_id: gold" in out and "precision at most" in out
    for name in ("same year", "undated", "one apart", "further"):
        assert name in out
