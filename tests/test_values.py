"""Printed values to typed ones."""

from datetime import date

import pytest

from crawler.extract.values import (
    looks_like_authors,
    printed_date,
    read_authors,
    split_authors,
    to_int,
    to_number,
)
from scholarindex.core.text import decode_entities

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


@pytest.mark.parametrize(("line", "names"), [
    # HTML entities printed as text: decoded, and their ";" splits nothing.
    ("Chaitan Baru, Bertram Lud&#228;scher, Vincent Chu",
     ["Chaitan Baru", "Bertram Ludäscher", "Vincent Chu"]),
    ("Jos&eacute; A. Blakeley", ["José A. Blakeley"]),
    ("M. Tamer &#214;zsu, Banu &#xD6;zden", ["M. Tamer Özsu", "Banu Özden"]),
    ("Tom &amp; Jerry Smith, Ann Lee", ["Tom", "Jerry Smith", "Ann Lee"]),
    # "and" / "&" separate names, with or without a comma before them.
    ("Ana Silva & Bo Li", ["Ana Silva", "Bo Li"]),
    ("Ana Silva, Bo Li, and Carl Berg", ["Ana Silva", "Bo Li", "Carl Berg"]),
    ("A and B", ["A", "B"]),
    # Trailing separators and a closing period; initials keep their periods.
    ("Yoav Freund and Robert E. Schapire.", ["Yoav Freund", "Robert E. Schapire"]),
    ("Ana Silva, Bo Li,", ["Ana Silva", "Bo Li"]),
    ("Smith, J.", ["Smith, J."]),
    # A suffix, or initials, alone between commas belong to the name before them.
    ("Christos Faloutsos, Caetano Traina, Jr.", ["Christos Faloutsos", "Caetano Traina, Jr."]),
    ("Roberto J. Bayardo, Jr.", ["Roberto J. Bayardo, Jr."]),
    # Lines in lower case.
    ("p. auer, n. cesa-bianchi, y. freund, and r. e. schapire,",
     ["p. auer", "n. cesa-bianchi", "y. freund", "r. e. schapire"]),
    ("avrim blum, merrick furst, michael kearns, and richard j. lipton.",
     ["avrim blum", "merrick furst", "michael kearns", "richard j. lipton"]),
    ("blum, a., furst, m., jackson, j., & rudich, s.",
     ["blum, a.", "furst, m.", "jackson, j.", "rudich, s."]),
    ("kearns, m.j. and l.g. valiant.", ["kearns, m.j.", "l.g. valiant"]),
    ("m. kearns.", ["m. kearns"]),
    ("yoav freund, robert schapire, manfred warmuth",
     ["yoav freund", "robert schapire", "manfred warmuth"]),
    # "surname, given" people separated by ";"; a closing ":" after initials.
    ("drucker, harris; schapire, robert; and simard,",
     ["drucker, harris", "schapire, robert", "simard"]),
    ("Smith, John; Doe, Jane", ["Smith, John", "Doe, Jane"]),
    ("A Smith, B Jones; C Lee", ["A Smith", "B Jones", "C Lee"]),
    ("freund, y. and schapire, r.e.:", ["freund, y.", "schapire, r.e."]),
])
def test_author_lines_read_as_names(line: str, names: list[str]) -> None:
    assert read_authors(line) == (names, False)
    assert split_authors(line) == (names, False)


def test_truncated_author_lines_in_any_case() -> None:
    assert read_authors("r. schapire, et al.") == (["r. schapire"], True)
    assert read_authors("J&#246;rg Sander et al.") == (["Jörg Sander"], True)
    assert read_authors("Asuman Dogac, Ilker Durusoy, Sena Arp…") == (
        ["Asuman Dogac", "Ilker Durusoy", "Sena Arp"], True)
    assert read_authors("JD Ullman, J Widom...") == (["JD Ullman", "J Widom"], True)


@pytest.mark.parametrize("line", [
    # Titles cut short end in "…" as lists do; their words are no names.
    "The role of B2B engines in B2B integration archite…",
    "Advanced XML data processing: guest editor's intro…",
    "how to use expert advice…",
    "Implementation and Analysis of a Parallel Collecti…",
    "Query Decomposition and View Maintenance for Query…",
    # A sentence ends inside: a title and the venue glued after it.
    "Standards. In ACM SIGMOD Record",
    "Middle East Technical University Software Research and Development Center. In ACM "
    "SIGMOD Record",
])
def test_a_title_cut_short_or_glued_to_its_venue_is_no_author_line(line: str) -> None:
    assert read_authors(line) is None


@pytest.mark.parametrize(("line", "names"), [
    ("Robert St. Clair, J. Smith", ["Robert St. Clair", "J. Smith"]),
    ("Maria de la Cruz, Wil van der Aalst", ["Maria de la Cruz", "Wil van der Aalst"]),
    ("CORPORATE National Technical Univ. of Athens",
     ["CORPORATE National Technical Univ. of Athens"]),
])
def test_abbreviations_inside_a_name_end_no_sentence(line: str, names: list[str]) -> None:
    assert read_authors(line) == (names, False)


@pytest.mark.parametrize("line", [
    "In this paper, a novel method is proposed.",
    "we study sparse routing.",
    "Deep Learning.",  # one name and a period: a short sentence or a title
    "yoav freund.",  # ... also in lower case, unless the name has initials
    "how to use expert advice,",  # lower-case titles hold function words
    "efficient learning of typical finite automata from random walks,",
    "machine learning, neural and statistical classification",
    "boosting algorithms",  # one lower-case phrase shows no name
    # Two lower-case names without initials read as a title does: not taken.
    "yoav freund and robert schapire",
    "on-line prediction and conversion strategies.",
    "Results and Discussion:",
    # A sentence that lists capitalised words is prose, not names.
    "We compare BERT, GPT and T5.",
    "Alice, Bob and Carol went home.",
    "mansour (1996). applying the weak learning framework",
    "Keywords:",
    "72",
    "",
])
def test_prose_and_titles_are_not_author_lines(line: str) -> None:
    assert read_authors(line) is None


def test_a_bare_ampersand_or_unknown_entity_is_printed_text() -> None:
    assert decode_entities("AT&T &notanentity; &#228;") == "AT&T &notanentity; ä"
    assert decode_entities("Plain") == "Plain"


@pytest.mark.parametrize(("line", "owner", "names"), [
    ("yoav freund.", "yoav freund.", ["yoav freund"]),
    ("ieeexplore.ieee.org", "ieeexplore.ieee.org", ["ieeexplore.ieee.org"]),
    ("yoav  FREUND.", "Yoav Freund", ["yoav  FREUND"]),
    ("robert e. schapire yoram singer.", "robert e. schapire yoram singer.",
     ["robert e. schapire yoram singer"]),
    ("yoav freund and robert schapire", "Yoav Freund", ["yoav freund", "robert schapire"]),
    ("bertram lud&#228;scher.", "Bertram Ludäscher", ["bertram ludäscher"]),
])
def test_a_line_naming_the_pages_owner_is_an_author_line(line: str, owner: str,
                                                          names: list[str]) -> None:
    assert read_authors(line) is None  # alone, each reads like a title or a sentence
    assert read_authors(line, owner=owner) == (names, False)


@pytest.mark.parametrize(("line", "owner"), [
    ("boosting a weak learning algorithm by majority.", "yoav freund."),
    ("on-line prediction and conversion strategies", "yoav freund."),
    ("yoav freundlich.", "yoav freund."),  # the name inside another word is not the name
    ("we thank yoav freund for his comments.", "yoav freund."),
    ("yoav freund.", ""),
])
def test_a_line_merely_holding_the_owners_name_is_no_author_line(line: str, owner: str) -> None:
    assert read_authors(line, owner=owner) is None
