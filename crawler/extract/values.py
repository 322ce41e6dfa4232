"""Typed values from printed text: counts, numbers, dates, author lists."""

from __future__ import annotations

import re
from datetime import date

MONTHS = {
    name: number
    for number, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")),
        start=1,
    )
    for name in names
}
MONTH_PATTERN = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# "May 14", "Dec 10, 2024", "Sept. 3 2021"
PRINTED_DATE = re.compile(
    rf"(?P<month>{MONTH_PATTERN})\s*(?P<day>\d{{1,2}})(?:\s*,?\s*(?P<year>(?:19|20)\d{{2}}))?"
)
_ET_AL = re.compile(r"(?:,|;)?\s*(?:\bet\.?\s*al\.?|…|\.\.\.)\s*$", re.I)
_AUTHOR_SEPARATORS = re.compile(r"\s*(?:[,;]|\band\b|&)\s*")


def to_int(text: str | None) -> int | None:
    """``"1,287"`` -> 1287; None for anything that is not a whole number."""
    if text is None:
        return None
    digits = text.replace(",", "").replace("\u202f", "").replace(" ", "").strip()
    return int(digits) if digits.isdigit() else None


def to_number(text: str | None) -> int | float | None:
    """The number as printed: ``"40"`` -> 40, ``"7.5"`` -> 7.5."""
    if text is None:
        return None
    text = text.replace(",", "").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and "." not in text else value


def printed_date(month: str, day: str, year: str | None, today: date) -> date | None:
    """A listing's date; without a year, the latest such day not after ``today``."""
    number = MONTHS.get(month.rstrip(".").lower())
    if number is None:
        return None
    day_number = int(day)
    if year:
        try:
            return date(int(year), number, day_number)
        except ValueError:
            return None
    # Walk back at most 8 years: far enough for 29 February.
    for candidate_year in range(today.year, today.year - 9, -1):
        try:
            candidate = date(candidate_year, number, day_number)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


def _et_al(line: str) -> bool:
    """Does ``_ET_AL`` match, without letting it try every position of a line?

    The pattern is anchored at the end: a line it matches ends, but for trailing
    whitespace, in "al", "al.", "…" or "..." (any case), which is cheap to test.
    """
    tail = line.rstrip()[-3:].lower()
    return tail.endswith(("al", "al.", "…", "...")) and bool(_ET_AL.search(line))


def split_authors(line: str) -> tuple[list[str], bool]:
    """An author line as printed -> (names without ``et al.``, whether it was truncated)."""
    truncated = _et_al(line)
    if truncated:
        line = _ET_AL.sub("", line)
    return _names(line), truncated


def _names(line: str) -> list[str]:
    names = (name.strip() for name in _AUTHOR_SEPARATORS.split(line))
    return [name for name in names if name]


def looks_like_authors(line: str) -> bool:
    """Is this line a list of person names rather than prose?"""
    return read_authors(line) is not None


def read_authors(line: str) -> tuple[list[str], bool] | None:
    """``split_authors(line)`` if the line is a list of person names, else None.

    One call where a parser would ask ``looks_like_authors`` and then split the
    same line again.
    """
    if len(line) > 2000 or not line:
        return None
    if _et_al(line):
        return split_authors(line)
    if line.endswith((".", "!", "?", ":")) and not re.search(r"\b[A-Z]\.$", line):
        return None
    names = _names(line)  # split_authors(line) without asking again about "et al."
    if not names:
        return None
    for name in names:
        words = name.split()
        if not 1 <= len(words) <= 6:
            return None
        # A name's words are capitalised, save particles (van, de, al-) and initials.
        capitalised = sum(word[:1].isupper() for word in words)
        if capitalised < max(1, len(words) - 2):
            return None
    return names, False
