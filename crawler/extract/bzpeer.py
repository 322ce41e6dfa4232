"""Layout A: BZPEER researcher profiles.

The page reads, top to bottom: "Researcher profile", the name, a one-line bio,
a role / affiliation / collaboration bar, the trust snapshot with its counts,
boilerplate, "Published work", "N published item(s)" and then, per work, a
``<type><year><venue>`` line, the title and an optional abstract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from crawler.extract.lines import match_across, split_listings
from crawler.extract.values import to_int

SOURCE = "bzpeer"

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
# "preprint2026arXiv", "article 2019 Nature Communications"
_META = re.compile(
    rf"(?P<type>{'|'.join(sorted(WORK_TYPES, key=len, reverse=True))}) ?"
    r"(?P<year>(?:19|20)\d{2}) ?(?P<venue>\S.{0,119})?"
)
_META_MAX = 140
_TYPE_INITIALS = frozenset(kind[0] for kind in WORK_TYPES) | {""}  # "": the line may be empty
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


@dataclass
class Parsed:
    researcher: dict
    works: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def matches(lines: list[str]) -> bool:
    """Does the text read like a BZPEER profile?"""
    head = "\n".join(lines[:400])
    if "Trust snapshot" in head or _VERIFICATION_LEVEL.search(head):
        return True
    # _LISTED gives the regex engine nothing to skip ahead to, so on a page of the
    # other layout it tries every position; first look for what any match holds.
    return bool(_LISTED_HINT.search(head) and _LISTED.search(head))


def parse(lines: list[str], headings: list[str]) -> Parsed:
    works_at = _find(lines, _WORKS_HEADING)
    if works_at is None:
        works_at = _find(lines, _LISTED, whole=False)
    header = lines if works_at is None else lines[:works_at]
    researcher = _researcher(header, headings)
    parsed = Parsed(researcher)
    if works_at is None:
        parsed.problems.append("no 'Published work' section")
        return parsed
    start = works_at + 1
    match, used = match_across(lines, start, _LISTED, 2)
    if match:
        researcher["listed_count"] = to_int(match["count"])
        start += used
    parsed.works = _works(lines[start:], parsed.problems)
    return parsed


def _find(lines: list[str], pattern: re.Pattern[str], whole: bool = True) -> int | None:
    for i, line in enumerate(lines):
        if pattern.fullmatch(line) if whole else pattern.search(line):
            return i
    return None


def _researcher(header: list[str], headings: list[str]) -> dict:
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
    return fields


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


def _meta_at(lines: list[str], i: int) -> tuple[re.Match[str] | None, int]:
    """The ``<type><year><venue>`` line at ``i``, printed as one line or up to three.

    The shortest reading that has a venue wins, so a title is never read as a venue.
    """
    without_venue: tuple[re.Match[str] | None, int] = (None, 0)
    if len(lines[i]) > _META_MAX:  # prose: skip the regex work
        return without_venue
    if lines[i][:1] not in _TYPE_INITIALS:  # a title or prose: _META starts with a type
        return without_venue
    for count in range(1, min(3, len(lines) - i) + 1):
        match = _META.fullmatch("".join(lines[i:i + count]))
        if match and match["venue"]:
            return match, count
        if match and not without_venue[0]:
            without_venue = (match, count)
    return without_venue


def _works(lines: list[str], problems: list[str]) -> list[dict]:
    return [
        {
            "title": body[0],
            "abstract": "\n".join(body[1:]) or None,
            "type": meta["type"].lower(),
            "year": int(meta["year"]),
            "venue": (meta["venue"] or "").strip() or None,
        }
        for meta, body in split_listings(lines, _meta_at, problems)
    ]
