"""Layout B: paper-card profiles.

The page reads: the name, a field tag, the metrics (``h-index3``, ``3papers``,
``28citations``, ``Novelty40%``, ``AI Score45``), ``N Papers`` and then, per
paper, a meta line ``[score][category][date][Code]``, the title, the authors
(possibly ending in ``et al.``) and the abstract.
"""

from __future__ import annotations

import re
from datetime import date

from crawler.extract.bzpeer import Parsed
from crawler.extract.lines import match_across, split_listings
from crawler.extract.values import (
    PRINTED_DATE,
    printed_date,
    read_authors,
    to_int,
    to_number,
)

SOURCE = "papercards"

_H_INDEX = re.compile(r"h-index\s*(\d+)", re.I)
_METRICS = {
    "h_index": (_H_INDEX, to_int),
    # Lower-case "papers" is the metric; "3 Papers" with a capital is the list heading.
    "papers_count": (re.compile(r"(?<![\w.])(\d[\d,]*)\s*papers\b"), to_int),
    "citations": (re.compile(r"(?<![\w.])(\d[\d,]*)\s*citations\b", re.I), to_int),
    "novelty_pct": (re.compile(r"Novelty\s*(\d+(?:\.\d+)?)\s*%", re.I), to_number),
    "ai_score": (re.compile(r"AI\s*Score\s*(\d+(?:\.\d+)?)", re.I), to_number),
}
_LIST_HEADING = re.compile(r"(?P<count>\d[\d,]*)\s*Papers?")
# "68.9AIMay 14", "DCDec 10, 2024Code", "LGMay 22, 2021"
_META = re.compile(
    r"(?P<score>\d{1,3}(?:\.\d+)?)?\s*(?P<category>[A-Za-z][A-Za-z.\-]{0,11}?)?\s*"
    rf"(?P<date>{PRINTED_DATE.pattern})\s*(?P<code>Code)?"
)


def matches(lines: list[str]) -> bool:
    """Does the text read like a paper-card profile?"""
    head = "\n".join(lines[:200])
    return bool(_H_INDEX.search(head) and (re.search(r"citations|papers", head, re.I)))


def parse(lines: list[str], headings: list[str], today: date) -> Parsed:
    first_metric = next((i for i in range(len(lines)) if _metric_starts(lines, i)), len(lines))
    list_at, used = _list_heading(lines, first_metric)
    before = lines[:first_metric]
    name_at = _name_position(before, headings)
    researcher: dict = {
        "name": before[name_at] if before else "",
        "field": " ".join(before[name_at + 1:]) or None,
    }
    metrics = "\n".join(lines[first_metric:list_at])
    for key, (pattern, convert) in _METRICS.items():
        found = pattern.search(metrics)
        researcher[key] = convert(found.group(1)) if found else None
    parsed = Parsed(researcher)
    if list_at >= len(lines):
        parsed.problems.append("no 'N Papers' list")
        return parsed
    heading = _LIST_HEADING.fullmatch("".join(lines[list_at:list_at + used]))
    researcher["listed_count"] = to_int(heading["count"]) if heading else None
    parsed.works = _works(lines[list_at + used:], today, parsed.problems)
    return parsed


def _metric_starts(lines: list[str], i: int) -> bool:
    text = "\n".join(lines[i:i + 2])
    return any(pattern.match(text) for pattern, _ in _METRICS.values())


def _name_position(before: list[str], headings: list[str]) -> int:
    """The name is the <h1> when there is one, else the line before the field tag."""
    for heading in headings:
        if heading in before:
            return before.index(heading)
    return max(0, len(before) - 2)


def _list_heading(lines: list[str], start: int) -> tuple[int, int]:
    """Where "N Papers" stands (case matters: "3papers" is a metric).

    Printed on one line or as a number line followed by a "Papers" line; never
    read across other lines, or "AI Score" "45" "3 Papers" would say 453.
    """
    for i in range(start, len(lines)):
        if _LIST_HEADING.fullmatch(lines[i]):
            return i, 1
        if lines[i].replace(",", "").isdigit() and lines[i + 1:i + 2] in (["Papers"], ["Paper"]):
            return i, 2
    return len(lines), 0


def _meta_at(lines: list[str], i: int) -> tuple[re.Match[str] | None, int]:
    if len(lines[i]) > 40:  # a meta line is short; prose is not
        return None, 0
    return match_across(lines, i, _META, 4, _may_end_meta)


def _may_end_meta(text: str) -> bool:
    """_META ends in a date's day or year, "Code", or whitespace: a title or prose does not."""
    last = text[-1:]
    return last.isdigit() or last.isspace() or text.endswith("Code")


def _works(lines: list[str], today: date, problems: list[str]) -> list[dict]:
    works: list[dict] = []
    for meta, body in split_listings(lines, _meta_at, problems):
        authors: list[str] = []
        truncated = False
        rest = body[1:]
        if rest and (read := read_authors(rest[0])):
            authors, truncated = read
            rest = rest[1:]
        day = printed_date(meta["month"], meta["day"], meta["year"], today)
        works.append({
            "title": body[0],
            "abstract": "\n".join(rest) or None,
            "date": day.isoformat() if day else None,
            "year": day.year if day else None,
            "category": meta["category"] or None,
            "score": to_number(meta["score"]),
            "authors": authors,
            "authors_truncated": truncated,
            "code": bool(meta["code"]),
        })
    return works
