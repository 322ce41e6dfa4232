"""Printed values to typed ones."""

from datetime import date

import pytest

from crawler.extract.values import (
    looks_like_authors,
    printed_date,
    split_authors,
    to_int,
    to_number,
)

TODAY = date(2026, 11, 22)


def test_counts_and_numbers() -> None:
    assert to_int("1,287") == 1287
    assert to_int("12a") is None
    assert to_number("40") == 40 and isinstance(to_number("40"), int)
    assert to_number("7.5") == 7.5
    assert to_number("68.9") == 68.9


@pytest.mark.parametrize(
    ("month", "day", "year", "expected"),
    [
        ("May", "14", None, date(2026, 5, 14)),
        ("Nov", "22", None, date(2026, 11, 22)),  # today counts as "not after"
        ("Nov", "23", None, date(2025, 11, 23)),
        ("Dec", "25", None, date(2025, 12, 25)),
        ("Feb", "29", None, date(2024, 2, 29)),
        ("Dec", "10", "2024", date(2024, 12, 10)),
        ("Sept.", "3", "2021", date(2021, 9, 3)),
        ("Feb", "30", "2021", None),
    ],
)
def test_printed_dates(month: str, day: str, year: str | None, expected: date | None) -> None:
    assert printed_date(month, day, year, TODAY) == expected


def test_author_lines() -> None:
    assert split_authors("Juntong Wu, Jialiang Cheng, Qishen Yin et al.") == (
        ["Juntong Wu", "Jialiang Cheng", "Qishen Yin"], True)
    assert split_authors("Ana Silva and Bo Li") == (["Ana Silva", "Bo Li"], False)
    assert split_authors("Jialiang Cheng") == (["Jialiang Cheng"], False)
    assert looks_like_authors("Ludwig van Beethoven, J. R. R. Tolkien")
    assert looks_like_authors("ChangQing Xu, Yi Liu, XinFang Liao et al.")
    assert not looks_like_authors("In this paper, a novel method is proposed.")
    assert not looks_like_authors("")
