"""core.resolution.listing: where a listing's work starts, and one profile's repeated titles."""

from __future__ import annotations

from scholarindex.core.identity import work_id
from scholarindex.core.resolution.listing import listing_work_id, listing_work_ids, salted_work_id

TITLE = "QuickStore: A High Performance Mapped Object Store"


def item(title: str, year: int | None = None, venue: str | None = None) -> dict:
    return {"title": title, "year": year, "venue": venue}


def test_a_title_listed_once_keeps_the_titles_id() -> None:
    assert listing_work_ids([item(TITLE, 1994, "SIGMOD")], "r1") == [work_id(TITLE)]


def test_a_title_listed_in_two_venues_is_two_works() -> None:
    ids = listing_work_ids([item(TITLE, 1994, "SIGMOD Conference"),
                            item("Estimating Page Fetches", 1995),
                            item(TITLE.upper(), 1995, "VLDB J.")], "r1")
    assert ids[0] != ids[2]
    assert work_id(TITLE) not in (ids[0], ids[2])
    assert ids[0] == salted_work_id(TITLE, "r1", 1994, "SIGMOD Conference")
    assert ids[1] == work_id("Estimating Page Fetches")


def test_a_title_listed_in_two_years_without_venue_is_salted_too() -> None:
    ids = listing_work_ids([item(TITLE, 1994), item(TITLE, 1995)], "r1")
    assert len(set(ids)) == 2


def test_the_same_title_year_and_venue_twice_is_one_work_listed_twice() -> None:
    ids = listing_work_ids([item(TITLE, 1994, "SIGMOD"), item(TITLE, 1994, "SIGMOD")], "r1")
    assert ids == [work_id(TITLE)] * 2


def test_titles_one_letter_apart_are_not_one_title() -> None:
    ids = listing_work_ids([item(TITLE, 1994, "SIGMOD"), item(TITLE + "s", 1995, "VLDB J.")],
                           "r1")
    assert ids == [work_id(TITLE), work_id(TITLE + "s")]


def test_the_salt_holds_the_profile() -> None:
    a = listing_work_ids([item(TITLE, 1994, "S"), item(TITLE, 1995, "V")], "r1")
    b = listing_work_ids([item(TITLE, 1994, "S"), item(TITLE, 1995, "V")], "r2")
    assert set(a).isdisjoint(b)


def test_generic_titles_are_salted_as_before() -> None:
    ids = listing_work_ids([item("Preface", 2001, "VLDB")], "r1")
    assert ids == [listing_work_id("Preface", "r1", 2001, "VLDB")] != [work_id("Preface")]


def test_a_generic_title_listed_twice_in_one_issue_gets_one_id_per_entry() -> None:
    ids = listing_work_ids([item("Book Review Column", 2002, "SIGMOD Record")] * 3
                           + [item("Book Review Column", 2003, "SIGMOD Record")], "r1")
    assert len(set(ids)) == 4
    assert ids[0] == listing_work_id("Book Review Column", "r1", 2002, "SIGMOD Record")
