"""Layout A: BZPEER researcher profiles.

The page reads, top to bottom: "Researcher profile", the name, a one-line bio,
a role / affiliation / collaboration bar, the trust snapshot with its counts,
boilerplate, "Published work", "N published item(s)" and then, per work, a
``<type><year><venue>`` line, the title and an optional abstract.

How a meta line is read (``_meta_at``):

1. The type is one of ``WORK_TYPES`` (as printed, lower case), the year is the
   four digits after it (19xx or 20xx), and the venue is everything after the
   year, of any length and holding anything (years, digits, full stops, colons,
   ``Conference: ...``), or nothing: ``article2010`` has no venue. A space may
   stand between the pieces (``article 2019 Nature Communications``). So a
   venue that starts with a digit, glued to the year, is the year's four digits
   and then the venue: ``conference20193DV`` is 2019, ``3DV``;
   ``article20093 Biotech`` is 2009, ``3 Biotech``.
2. A line that holds the type and the year is the whole meta line: its three
   pieces run together (inline elements), so a venue is on that line or there
   is none. The line after it is the title.
3. A markup that gives each piece a line of its own (a table's cells) prints
   the type, then the year (with the venue run on, or alone), then the venue on
   a line of its own, or no venue line when the venue is empty. A venue line and
   a title line are alike, so the line after a lone year is the venue unless
   reading it so leaves the listing no title: it is itself a meta line, or the
   line after it is a meta line, the end, or an abstract (a placeholder such as
   ``Abstract not available.``, or prose: 400 characters or more holding two
   sentence breaks). Two kinds of listing so printed read wrong: one with no
   venue, a title and a short abstract (its title is read as the venue, its
   abstract as the title), and one with a venue and no title (its venue is read
   as the title). A meta line printed as one line (rule 2) reads right.

A listing whose title slot holds no title of its own (nothing, an abstract, or
a line shaped like a meta line the type list does not know, ``misc2011...``) is
not a work: it is left out and reported as a ``ProblemKind.UNTITLED`` problem
(``untitled listing 2: ...``), which the crawl counts and logs, as it does a page
whose listings fall short of its ``N published items``.

The affiliation the bar leaves out (``Affiliation not imported``) is taken from the
page's JSON-LD ``Person`` when it names one; the other layout has no affiliation.
"""

from __future__ import annotations

import re

from crawler.extract.layouts.base import Listing, ParseContext, ParsedPage, ResearcherFields
from crawler.extract.lines import PageText, find_listings, match_across
from crawler.extract.problems import PageProblem, ProblemKind
from crawler.extract.values import to_int

_PROFILE_HEADING = re.compile(r"researcher profile", re.I)
_WORKS_HEADING = re.compile(r"published works?", re.I)
_LISTED = re.compile(r"(?P<count>\d[\d,]*)\s*published items?(?:\(s\))?", re.I)
# " item" as _LISTED's IGNORECASE reads it (it also lets "ı" and "İ" be an "i"),
# led by a literal space that the regex engine scans for quickly.
_LISTED_HINT = re.compile(" [iIİı][tT][eE][mM]")
_TRUST_HEAD = re.compile(r"Trust snapshot|Trust\s*\d", re.I)
_BAR_PIECE = re.compile(r"affiliation|collaborat", re.I)
_COLLAB = re.compile(
    r"(?P<status>(?:not\s*)?(?:open|closed)\s*to\s*collaborat\w*|not\s*collaborating)\s*$", re.I
)
_TRUST = re.compile(r"Trust\s*(?P<score>\d+)\s*[-–—]?\s*(?P<label>[^\n]*?)\s*"
                    r"(?=Verification|Unclaimed|Claimed|\n|$)", re.I)
_VERIFICATION = re.compile(r"Verification\s*(?P<level>L?\s*\d+)", re.I)
_VERIFICATION_LEVEL = re.compile(r"Verification\s*L\d")
_CLAIMED = re.compile(r"(?P<claim>Unclaimed|Claimed)\s*author", re.I)
_COUNTS = {
    "works_count": re.compile(r"(?<![\w])(\d[\d,]*)\s*works\b", re.I),
    "followers": re.compile(r"(?<![\w])(\d[\d,]*)\s*followers\b", re.I),
    "topics_count": re.compile(r"(?<![\w])(\d[\d,]*)\s*topics\b", re.I),
    "collaborators_count": re.compile(r"(?<![\w])(\d[\d,]*)\s*close\s*collaborators\b", re.I),
}
WORK_TYPES = (
    "preprint article journal-article journal conference conference-paper proceedings paper "
    "book book-chapter chapter thesis dissertation dataset software report review "
    "editorial letter poster presentation workshop patent other"
).split()
_TYPES = "|".join(sorted(WORK_TYPES, key=len, reverse=True))  # longest first: book-chapter
# "preprint2026arXiv", "article 2019 Nature Communications", "article2010": the venue is
# the rest of the line, whatever it holds (rule 1 of the module doc).
_META = re.compile(rf"(?P<type>{_TYPES}) ?(?P<year>(?:19|20)\d\d) ?(?P<venue>.*)")
_TYPE = re.compile(_TYPES)  # fullmatch: a type on a line of its own
_YEAR = re.compile(r"(?:19|20)\d\d")  # match: a line that starts with a year
_TYPE_INITIALS = frozenset(kind[0] for kind in WORK_TYPES) | {""}  # "": the line may be empty
# What a title slot holds when the listing has no title of its own: an abstract's
# placeholder, prose (an abstract: long, several sentences), or a meta line whose type
# the list above lacks ("misc2011arXiv", "inproceedings 2004 VLDB").
_ABSTRACT_PLACEHOLDER = re.compile(
    r"\W*(?:no abstract(?: is)?(?: available| provided)?|abstract(?: is)? (?:not available|"
    r"unavailable|not provided|missing))\W*", re.I)
_PROSE_MIN = 400  # characters: above titles (the longest in DBLP-ACM and Cora: 272, 316)
_SENTENCE_BREAK = re.compile(r"[.!?] [A-Z]")
_META_SHAPED = re.compile(r"[a-z]{3,}(?:-[a-z]+)* ?(?:19|20)\d\d")
# Roles the site prints before the affiliation, when their text runs together.
ROLES = sorted(
    "Researcher|Independent researcher|Research scientist|Scientist|Professor|Associate professor|"
    "Assistant professor|Emeritus professor|Lecturer|Senior lecturer|Postdoc|"
    "Postdoctoral researcher|PhD student|PhD candidate|Doctoral student|Student|"
    "Graduate student|Engineer|Research engineer|Software engineer|Fellow|Director|Librarian"
    .split("|"),
    key=len,
    reverse=True,
)


class Bzpeer:
    """Layout A (the module doc)."""

    source = "bzpeer"

    def recognise(self, text: PageText) -> bool:
        """A trust snapshot, a verification level or an ``N published items`` line."""
        head = "\n".join(text.lines[:400])
        if "Trust snapshot" in head or _VERIFICATION_LEVEL.search(head):
            return True
        # _LISTED gives the regex engine nothing to skip ahead to, so on a page of the
        # other layout it tries every position; first look for what any match holds.
        return bool(_LISTED_HINT.search(head) and _LISTED.search(head))

    def parse(self, text: PageText, context: ParseContext) -> ParsedPage:
        parsed = _parse(text.lines, text.headings)
        affiliation = context.person.get("affiliation")
        if parsed.researcher.affiliation is None and affiliation:
            parsed.researcher.affiliation = affiliation
        return parsed


BZPEER = Bzpeer()


def _parse(lines: list[str], headings: list[str]) -> ParsedPage:
    works_at = _find(lines, _WORKS_HEADING)
    if works_at is None:
        works_at = _find(lines, _LISTED, whole=False)
    header = lines if works_at is None else lines[:works_at]
    researcher = _researcher(header, headings)
    parsed = ParsedPage(researcher)
    if works_at is None:
        parsed.problems.append(PageProblem(ProblemKind.NO_LIST, "no 'Published work' section"))
        return parsed
    start = works_at + 1
    match, used = match_across(lines, start, _LISTED, 2)
    if match:
        researcher.listed_count = to_int(match["count"])
        start += used
    parsed.listings = _works(lines[start:], parsed.problems)
    return parsed


def _find(lines: list[str], pattern: re.Pattern[str], whole: bool = True) -> int | None:
    for i, line in enumerate(lines):
        if pattern.fullmatch(line) if whole else pattern.search(line):
            return i
    return None


def _researcher(header: list[str], headings: list[str]) -> ResearcherFields:
    at = _find(header, _PROFILE_HEADING)
    name_at = 0 if at is None else at + 1
    trust_at = _find(header, _TRUST_HEAD, whole=False) or len(header)
    if headings and headings[0] in header[:trust_at]:
        name_at = header.index(headings[0])
    name = header[name_at] if name_at < len(header) else ""
    between = header[name_at + 1:trust_at]
    bar_at = next(
        (i for i, line in enumerate(between)
         if _BAR_PIECE.search(line)
         or (i + 1 < len(between) and _BAR_PIECE.search(between[i + 1]) and _is_role(line))),
        len(between),
    )
    text = "\n".join(header[trust_at:])
    fields: dict = {
        "name": name,
        "bio": " ".join(between[:bar_at]) or None,
        **_bar(between[bar_at:]),
        **_trust(text),
    }
    for key, pattern in _COUNTS.items():
        found = pattern.search(text)
        fields[key] = to_int(found.group(1)) if found else None
    return ResearcherFields(**fields)


def _is_role(line: str) -> bool:
    return len(line) <= 40 and "." not in line


def _bar(pieces: list[str]) -> dict:
    """Role, affiliation and collaboration status, split however the markup printed them."""
    text = "\n".join(pieces)
    open_to_collaborate = None
    if found := _COLLAB.search(text):
        open_to_collaborate = found["status"].lower().startswith("open")  # "Not open", "Closed"
        text = text[: found.start()]
    text = text.strip()
    role, rest = _split_role(text)
    affiliation: str | None = re.sub(r"^affiliation\s*:?\s*", "", rest.replace("\n", " "),
                                     flags=re.I).strip()
    if not affiliation or re.fullmatch(r"not imported|none|unknown|—|-", affiliation, re.I):
        affiliation = None
    return {"role": role, "affiliation": affiliation, "open_to_collaborate": open_to_collaborate}


def _split_role(text: str) -> tuple[str | None, str]:
    """(role, rest): the bar's first element is the role unless it is the affiliation."""
    if "\n" in text:
        first, rest = text.split("\n", 1)
        return (None, text) if first.lower().startswith("affiliation") else (first, rest)
    if found := re.search(r"affiliation", text, re.I):
        return text[: found.start()].strip() or None, text[found.start():]
    for role in ROLES:
        if text.lower().startswith(role.lower()):
            return text[: len(role)], text[len(role):]
    # An unknown role run together with its affiliation: split where case changes.
    camel = re.match(r"(\S.*?[a-z])([A-Z].*)", text)
    if camel and _is_role(camel.group(1)):
        return camel.group(1), camel.group(2)
    return None, text


def _trust(text: str) -> dict:
    trust = _TRUST.search(text)
    verification = _VERIFICATION.search(text)
    claim = _CLAIMED.search(text)
    return {
        "trust_score": int(trust["score"]) if trust else None,
        "trust_label": (trust["label"].strip() or None) if trust else None,
        "verification_level": verification["level"].replace(" ", "") if verification else None,
        "claimed": claim["claim"].lower() == "claimed" if claim else None,
    }


def reads_as_abstract(line: str) -> bool:
    """Is the line an abstract rather than a title: a placeholder, or prose?"""
    if len(line) >= _PROSE_MIN:
        return len(_SENTENCE_BREAK.findall(line)) >= 2
    return bool(_ABSTRACT_PLACEHOLDER.fullmatch(line))


def _meta_at(lines: list[str], i: int) -> tuple[re.Match[str] | None, int]:
    """The ``<type><year><venue>`` line at ``i``, printed as one line or up to three
    (the module doc's rules 2 and 3); the match and how many lines it used."""
    line = lines[i]
    if line[:1] not in _TYPE_INITIALS:  # a title or prose: a meta line starts with a type
        return None, 0
    if match := _META.fullmatch(line):  # rule 2: type and year on one line, the venue too
        return match, 1
    if not _TYPE.fullmatch(line) or i + 1 == len(lines) or not _YEAR.match(lines[i + 1]):
        return None, 0
    year = lines[i + 1]
    if len(year) > 4 or not _venue_line(lines, i + 2):  # the venue run on, or none
        return _META.fullmatch(line + year), 2
    return _META.fullmatch(line + year + lines[i + 2]), 3


def _starts_meta(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line[:1] not in _TYPE_INITIALS:
        return False
    if _META.fullmatch(line):
        return True
    return bool(_TYPE.fullmatch(line) and i + 1 < len(lines) and _YEAR.match(lines[i + 1]))


def _venue_line(lines: list[str], i: int) -> bool:
    """After a lone type and a lone year: is line ``i`` the venue (rule 3)?

    Not when it starts the next listing, nor when reading it as the venue would
    leave the listing no title (nothing but the next listing or an abstract after it).
    """
    if i >= len(lines) or _starts_meta(lines, i):
        return False
    after = i + 1
    return (after < len(lines) and not _starts_meta(lines, after)
            and not reads_as_abstract(lines[after]))


def _not_a_title(line: str) -> str | None:
    """What the title slot holds instead of a title, or None when it is one."""
    if reads_as_abstract(line):
        return "an abstract"
    if _META_SHAPED.match(line):
        return "a meta line"
    return None


def _works(lines: list[str], problems: list[PageProblem]) -> list[Listing]:
    works = []
    for n, (_, meta, begin, end) in enumerate(find_listings(lines, _meta_at), start=1):
        body = lines[begin:end]
        if not body:
            problems.append(PageProblem(
                ProblemKind.UNTITLED,
                f"untitled listing {n}: no title line before the next listing; left out"))
            continue
        if held := _not_a_title(body[0]):
            problems.append(PageProblem(
                ProblemKind.UNTITLED,
                f"untitled listing {n}: its title line holds {held} ({body[0][:60]!r}); left out"))
            continue
        # Positional, in Listing's order (title, abstract, type, year, date, venue): this runs
        # once a listing, and keyword arguments to a class cost a dict each call.
        works.append(Listing(body[0], "\n".join(body[1:]) or None, meta["type"].lower(),
                             int(meta["year"]), None, meta["venue"].strip() or None))
    return works
