"""``publist``: a third page layout, for the tests only.

It shows what a layout is (README, "Adding a page layout"): one module implementing
``crawler.extract.layouts.base.Layout``. A page reads, one item a line::

    Publication list
    Ines Moreau
    Affiliation: Université de Lille
    3 publications
    2021 · Graph Sketches for Streaming Joins · VLDB
    2018 · A Note on Cuckoo Hashing

A listing line is ``year · title`` with an optional ``· venue``. A listing without
a title is left out and reported as ``ProblemKind.UNTITLED``, which the crawl
counts as it counts the shipped layouts'. The fixture page:
``fixtures/layouts/publist_ines_moreau.txt``.
"""

from __future__ import annotations

import re

from crawler.extract.layouts.base import Listing, ParseContext, ParsedPage, ResearcherFields
from crawler.extract.lines import PageText
from crawler.extract.problems import PageProblem, ProblemKind
from crawler.extract.values import to_int

_HEADING = "Publication list"
_LISTED = re.compile(r"(?P<count>\d[\d,]*) publications?")
_LISTING = re.compile(r"(?P<year>(?:19|20)\d\d) · (?P<title>[^·]*?) ?(?:· (?P<venue>.+))?")


class Publist:
    source = "publist"

    def recognise(self, text: PageText) -> bool:
        return text.lines[:1] == [_HEADING]

    def parse(self, text: PageText, context: ParseContext) -> ParsedPage:
        lines = text.lines
        researcher = ResearcherFields(name=lines[1] if len(lines) > 1 else "")
        parsed = ParsedPage(researcher)
        listed_at = len(lines)
        for i, line in enumerate(lines[2:], start=2):
            if line.startswith("Affiliation: "):
                researcher.affiliation = line.removeprefix("Affiliation: ") or None
            elif listed := _LISTED.fullmatch(line):
                researcher.listed_count, listed_at = to_int(listed["count"]), i
                break
        else:
            parsed.problems.append(PageProblem(ProblemKind.NO_LIST, "no 'N publications' line"))
            return parsed
        for n, line in enumerate(lines[listed_at + 1:], start=1):
            found = _LISTING.fullmatch(line)
            if found is None or not found["title"]:
                parsed.problems.append(PageProblem(
                    ProblemKind.UNTITLED, f"untitled listing {n}: {line[:60]!r}; left out"))
                continue
            parsed.listings.append(Listing(title=found["title"], year=int(found["year"]),
                                           venue=found["venue"]))
        return parsed


PUBLIST = Publist()
