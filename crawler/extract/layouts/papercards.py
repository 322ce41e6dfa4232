"""Layout B: paper-card profiles.

The page reads: the name, a field tag, the metrics (``h-index3``, ``3papers``,
``28citations``, ``Novelty40%``, ``AI Score45``), ``N Papers`` and then, per
paper, a meta line ``[score][category][date][Code]``, the title, the authors
(possibly ending in ``et al.``) and the abstract.

Where one card ends and the next begins (``_works``):

1. A meta line with a date starts a card (``68.9AIMay 14``, ``DCDec 10, 2024Code``).
   Run over several lines (a table's cells), it holds one piece a line: an
   abstract ``LG`` or ``72`` is not run into the meta line after it.
2. A card may have no date: its meta line is only a score, a category tag and/or
   ``Code`` (``68.9AI``, ``DCCode``, ``LG``), or it has no meta line and starts
   with its title. Such a card is still a title line directly followed by an
   authors line, optionally led by that short meta line. A tag without a date is
   taken only when written as tags are (capitals, maybe behind an archive prefix:
   ``LG``, ``cs.LG``): a lone word is a title as often as a tag.
3. ``N Papers`` says how many cards there are. Only when the dated cards fall
   short of it are the lines before the first dated card and each card's lines
   after its title and authors searched for such undated starts (left to right,
   none overlapping). So an abstract that reads like a meta line, a title or an
   author list never splits a card whose page count is already met.
4. When more undated starts are found than the count leaves places for, the
   likeliest are taken: a start whose title the page's structured data lists
   (JSON-LD headline) before one it does not; within each, one led by a meta
   line before a bare title + authors pair; page order last. If the count falls
   inside one of those ranks, the split is a guess and is reported as an
   ``ambiguous ...`` problem (the crawl counts and logs it), as are more cards
   than the count. Fewer starts than places leave the page short, and
   ``page.truncated`` reports it as it reports a cut page.
5. A line that reads as a dated meta line with no title after it (the next line
   is another meta line) is the end of the card before's text, not a card: an
   abstract may end in ``Dec 10, 2024``. It stays in that text, with a problem.
6. A short line that reads as an undated meta line directly before a title and
   authors line is that card's meta line, not the last line of the card before
   (an abstract is prose, not ``LG``).
7. Titles are often written like names (``Deep Learning``), so where a bare
   title + authors pair could start on a line or on the next, the one whose
   authors line is an author list beyond doubt (several names, ``et al.``, or a
   name with initials: ``JD Miller``) wins. Failing that, a line that does not
   end in ``.`` is the title (a card's text ends in a sentence), one that is long
   or holds a sentence break is text of the card before, and a short one ending
   in ``.`` is taken as the title: a guess. A bare title that reads as a meta
   line (``DB``) is a guess too. A guess is reported as ambiguous when its card
   is taken.

8. A dated meta line with nothing after it but a meta line run over several
   lines (``Jan 1, 2003`` / ``Reports`` / ``Jan 1, 2003``) has a one-word title
   that is not written as a tag (rule 2): that word is its title, not the next
   card's category.

9. A line that names the page's own person (``values.read_authors`` with the
   owner) is an authors line, whatever it looks like: a bibliography that lower-cases
   everything prints ``yoav freund.`` under each of his titles, an index prints a
   site's name (``ieeexplore.ieee.org``) under each paper of the page it keeps for it;
   without this an undated card of such a page reads as the text of the card before.

An undated card's ``date`` and ``year`` are None. The page's structured data fills
them, and an empty author list, for the card whose title it lists
(``_fill_from_structured``).
Author lines are read by ``values.read_authors``; its docstring states the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from datetime import date
from functools import partial

from crawler.extract.layouts.base import Listing, ParseContext, ParsedPage, ResearcherFields
from crawler.extract.lines import PageText, find_listings, match_across
from crawler.extract.problems import PageProblem, ProblemKind
from crawler.extract.structured import StructuredArticle
from crawler.extract.values import (
    PRINTED_DATE,
    holds_function_words,
    printed_date,
    read_authors,
    to_int,
    to_number,
)
from scholarindex.core.identity import title_key

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
_PIECES = ("score", "category", "date", "code")  # a table gives each a cell: a line
# "68.9AI", "DCCode", "LG", "cs.LG", "72", "Code": a meta line without a date (rule 2).
_UNDATED_META = re.compile(
    r"(?=\S)(?P<score>\d{1,3}(?:\.\d+)?)?\s*"
    r"(?P<category>(?:[a-z][a-z\-]{0,9}\.)?[A-Z]{2,6})?\s*(?P<code>Code)?"
)
_UNDATED_PIECES = ("score", "category", "code")
_UNDATED_META_MAX = 24
_TITLE_MAX = 400  # a longer line is prose: an abstract
_INITIALS = re.compile(r"[A-Z]{1,3}|(?:[A-Z]\.-?){1,3}")  # "JD", "J.", "J.-P."
_PROSE_MIN = 100  # a line ending in "." and longer than this is a sentence, not a title
ReadAuthors = Callable[[str], tuple[list[str], bool] | None]  # read_authors, owner given


class Papercards:
    """Layout B (the module doc)."""

    source = "papercards"

    def recognise(self, text: PageText) -> bool:
        """An h-index near citations or papers counts."""
        head = "\n".join(text.lines[:200])
        return bool(_H_INDEX.search(head) and (re.search(r"citations|papers", head, re.I)))

    def parse(self, text: PageText, context: ParseContext) -> ParsedPage:
        parsed = _parse(text.lines, text.headings, context.today, context.articles.keys())
        if context.articles:
            for listing in parsed.listings:
                _fill_from_structured(listing, context.articles.get(title_key(listing.title)))
        return parsed


PAPERCARDS = Papercards()


def _parse(lines: list[str], headings: list[str], today: date,
           known_titles: Collection[str]) -> ParsedPage:
    """``known_titles``: title keys of the articles the page's structured data lists."""
    first_metric = next((i for i in range(len(lines)) if _metric_starts(lines, i)), len(lines))
    list_at, used = _list_heading(lines, first_metric)
    before = lines[:first_metric]
    name_at = _name_position(before, headings)
    metrics = "\n".join(lines[first_metric:list_at])
    values: dict = {}
    for key, (pattern, convert) in _METRICS.items():
        found = pattern.search(metrics)
        values[key] = convert(found.group(1)) if found else None
    researcher = ResearcherFields(name=before[name_at] if before else "",
                                  field=" ".join(before[name_at + 1:]) or None, **values)
    parsed = ParsedPage(researcher)
    if list_at >= len(lines):
        parsed.problems.append(PageProblem(ProblemKind.NO_LIST, "no 'N Papers' list"))
        return parsed
    heading = _LIST_HEADING.fullmatch("".join(lines[list_at:list_at + used]))
    researcher.listed_count = to_int(heading["count"]) if heading else None
    # Rule 9: a line naming the page's own person is an authors line.
    read = partial(read_authors, owner=researcher.name)
    parsed.listings = _works(lines[list_at + used:], today, parsed.problems,
                             researcher.listed_count, known_titles, read)
    return parsed


def _fill_from_structured(listing: Listing, article: StructuredArticle | None) -> None:
    """Fill what the card's text left open from the article of its title, if any."""
    if article is None:
        return
    if not listing.authors and article.authors:
        listing.authors = list(article.authors)
    if listing.date is None and article.date and len(article.date) >= 10:
        listing.date = article.date[:10]
    if listing.year is None and article.date and article.date[:4].isdigit():
        listing.year = int(article.date[:4])


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
    return match_across(lines, i, _META, 4, _may_end_meta, _PIECES)


def _may_end_meta(text: str) -> bool:
    """_META ends in a date's day or year, "Code", or whitespace: a title or prose does not."""
    last = text[-1:]
    return last.isdigit() or last.isspace() or text.endswith("Code")


@dataclass(frozen=True)
class _Start:
    """Where an undated card may start in a run of lines (rule 2)."""

    at: int  # its first line: the meta line, or the title when there is none
    meta: re.Match[str] | None
    used: int  # lines the meta line takes (0 without one)
    title: str
    # 0 if the structured data lists the title, else 2; +0 led by a meta line, +1 a
    # bare title + authors (``_rank``): the lower, the likelier.
    rank: int
    doubtful: bool = False  # taken by a guess (rule 7)


def _works(lines: list[str], today: date, problems: list[PageProblem], listed: int | None,
           known_titles: Collection[str], read: ReadAuthors) -> list[Listing]:
    # Runs of lines that may hold cards: what comes before the first dated card (no
    # card of its own), then each dated card's lines.
    runs: list[tuple[re.Match[str] | None, list[str]]] = []
    first = len(lines)
    for count, (start, meta, begin, end) in enumerate(_listings(lines), start=1):
        first = min(first, start)
        if end > begin:
            runs.append((meta, lines[begin:end]))
        elif runs:  # rule 5: the card before's text
            runs[-1] = (runs[-1][0], runs[-1][1] + lines[start:begin])
            problems.append(PageProblem(
                ProblemKind.DATE_IN_TEXT,
                f"card {len(runs)}: a line of its text reads as a date line "
                f"({''.join(lines[start:begin])[:40]!r}); kept as text"))
        else:
            problems.append(PageProblem(
                ProblemKind.UNTITLED,
                f"untitled listing {count}: no title line before the next listing"))
    dated = len(runs)
    runs.insert(0, (None, lines[:first]))
    places = (listed or 0) - dated
    chosen: list[list[_Start]] = [[] for _ in runs]
    if places > 0:
        found = [_undated_starts(body, 0 if meta is None else _after_heading(body, read),
                                 known_titles, read) for meta, body in runs]
        chosen = _choose(found, places, listed, dated, problems)
    works: list[Listing] = []
    for (dated_meta, body), starts in zip(runs, chosen, strict=True):
        if dated_meta is not None:
            works.append(_card(dated_meta, body[:starts[0].at] if starts else body, today,
                               read))
        for n, card in enumerate(starts):
            end = starts[n + 1].at if n + 1 < len(starts) else len(body)
            works.append(_card(card.meta, body[card.at + card.used:end], today, read))
    if listed is not None and len(works) > listed:
        problems.append(PageProblem(
            ProblemKind.AMBIGUOUS,
            f"ambiguous card split: {len(works)} cards read, {listed} announced"))
    return works


def _listings(lines: list[str]) -> list[tuple[int, re.Match[str], int, int]]:
    """The dated cards (``find_listings``), with rule 8's one-word titles given back."""
    found = list(find_listings(lines, _meta_at))
    for k in range(len(found) - 1):
        start, meta, begin, end = found[k]
        after, _, after_begin, after_end = found[k + 1]  # after == end
        if end > begin or after_begin - after < 2 or _UNDATED_META.fullmatch(lines[after]):
            continue
        again, used = _meta_at(lines, after + 1)
        if again and after + 1 + used == after_begin:
            found[k] = (start, meta, begin, begin + 1)
            found[k + 1] = (after + 1, again, after_begin, after_end)
    return found


def _after_heading(body: list[str], read: ReadAuthors) -> int:
    """Where a card's own title and authors end: the earliest a next card can start."""
    return 2 if len(body) > 1 and read(body[1]) else 1


def _undated_starts(body: list[str], begin: int, known_titles: Collection[str],
                    read: ReadAuthors) -> list[_Start]:
    """Rule 2's card starts in ``body[begin:]``, left to right, none overlapping."""
    starts: list[_Start] = []
    i = begin
    while i + 1 < len(body):
        start = _start_at(body, i, known_titles, read)
        if start is None:
            i += 1
            continue
        if start.meta is None and (later := _start_at(body, i + 1, known_titles, read)):
            start = _likelier(body, start, later, read)
        starts.append(start)
        i = start.at + start.used + 2
    return starts


def _start_at(body: list[str], i: int, known_titles: Collection[str],
              read: ReadAuthors) -> _Start | None:
    meta, used = (match_across(body, i, _UNDATED_META, 3, _short_meta, _UNDATED_PIECES)
                  if len(body[i]) <= _UNDATED_META_MAX else (None, 0))
    if meta and _title_and_authors(body, i + used, read):
        return _Start(i, meta, used, body[i + used], _rank(body[i + used], 0, known_titles))
    if _title_and_authors(body, i, read):
        # A title that reads as a meta line whose card did not follow: a guess (rule 7).
        return _Start(i, None, 0, body[i], _rank(body[i], 1, known_titles), bool(meta))
    return None


def _likelier(body: list[str], start: _Start, later: _Start, read: ReadAuthors) -> _Start:
    """Rule 7: a bare title + authors at ``start``, or a card one line later?"""
    if start.rank != later.rank:
        return min(start, later, key=lambda s: s.rank)
    here = _sure_authors(body[start.at + 1], read)
    there = _sure_authors(body[later.at + later.used + 1], read)
    if here != there:
        return start if here else later
    line = body[start.at]
    if not line.endswith("."):
        return start  # not a sentence: no card's text ends so
    if len(line) > _PROSE_MIN or ". " in line:
        return later  # a long sentence, or several: the text of the card before
    return replace(start, doubtful=True)  # a short sentence: a title or a one-line abstract


def _sure_authors(line: str, read: ReadAuthors) -> bool:
    """An author list beyond doubt: several names, "et al.", or a name with initials;
    no function word ("Technology and the Future of Commerce" reads as three names)."""
    found = read(line)
    if found is None:
        return False
    if read_authors(line) is None:
        return True  # read only as naming the page's owner (rule 9)
    if holds_function_words(found[0]):
        return False
    names, truncated = found
    return truncated or len(names) > 1 or any(map(_INITIALS.fullmatch, names[0].split()))


def _short_meta(text: str) -> bool:
    return len(text) <= _UNDATED_META_MAX


def _title_and_authors(body: list[str], i: int, read: ReadAuthors) -> bool:
    return (i + 1 < len(body) and len(body[i]) <= _TITLE_MAX
            and read(body[i + 1]) is not None)


def _rank(title: str, bare: int, known_titles: Collection[str]) -> int:
    known = bool(known_titles) and title_key(title) in known_titles
    return (0 if known else 2) + bare


def _choose(found: list[list[_Start]], places: int, listed: int | None, dated: int,
            problems: list[PageProblem]) -> list[list[_Start]]:
    """Rule 4: the ``places`` likeliest starts, by rank and then page order."""
    every = [(start.rank, run, n) for run, starts in enumerate(found)
             for n, start in enumerate(starts)]
    every.sort()
    taken = every[:places]
    if len(every) > places and every[places][0] == taken[-1][0]:
        tied = sum(1 for rank, _, _ in every if rank == taken[-1][0])
        problems.append(PageProblem(
            ProblemKind.AMBIGUOUS,
            f"ambiguous card split: {listed} papers announced, {dated} dated cards, "
            f"{len(every)} possible undated cards for {places} places "
            f"({tied} alike; took the first in page order)"))
    doubtful = [found[run][n] for _, run, n in taken if found[run][n].doubtful]
    if doubtful:
        titles = ", ".join(repr(start.title[:40]) for start in doubtful)
        problems.append(PageProblem(
            ProblemKind.AMBIGUOUS,
            f"ambiguous card start: {len(doubtful)} undated cards whose title "
            f"could be the line before or after ({titles})"))
    keep = {(run, n) for _, run, n in taken}
    return [[start for n, start in enumerate(starts) if (run, n) in keep]
            for run, starts in enumerate(found)]


def _card(meta: re.Match[str] | None, body: list[str], today: date, read: ReadAuthors
          ) -> Listing:
    """One card's fields from its meta line (None when it has none) and its lines."""
    fields = meta.groupdict() if meta else {}
    authors: list[str] = []
    truncated = False
    rest = body[1:]
    if rest and (found := read(rest[0])):
        authors, truncated = found
        rest = rest[1:]
    day = (printed_date(fields["month"], fields["day"], fields["year"], today)
           if fields.get("month") else None)
    # Positional, in Listing's order: this runs once a card, and keyword arguments to a
    # class cost a dict each call.
    return Listing(
        body[0],  # title
        "\n".join(rest) or None,  # abstract
        None,  # type: cards have none
        day.year if day else None,  # year
        day.isoformat() if day else None,  # date
        None,  # venue: cards have none
        fields.get("category") or None,
        to_number(fields.get("score")),
        authors,
        truncated,  # authors_truncated
        bool(fields.get("code")),
    )
