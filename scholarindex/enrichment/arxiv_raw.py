"""Reading arXiv's ``arXivRaw`` metadata format: version dates, authors, TeX accents.

``arXivRaw`` is the one OAI-PMH format of arXiv that lists every version with its
submission time (``<version version="v1"><date>Wed, 25 Jun 2008 15:29:38 GMT</date>``);
it gives the fields as submitted: the authors as one string
(``Roldao da Rocha, Waldyr A. Rodrigues Jr``), titles and names with TeX
(``Fr\\'ed\\'eric``). The query API gives the same paper's authors as a list of names
with the TeX accents read (``Frédéric``), so the mirror reads them the same way:

* ``split_authors``: the string split into names as arXiv's own parser does: on
  ``,``, ``;``, `` and ``, ``&`` and after a ``Collaboration:`` prefix; affiliations
  in parentheses (``(PMA)``, ``((1) IAG, (2) NAT)``) and ``et al`` dropped; initials
  spaced (``V.M. Abazov`` -> ``V. M. Abazov``); a lone suffix (``Jr.``) kept with the
  name before it;
* ``tex_accents``: accent commands on one letter (``\\"o``, ``\\'{e}``, ``\\c{c}``,
  ``\\v c``) and the letters TeX spells (``{\\o}``, ``\\ss``, ``\\l``) as Unicode;
  other TeX is left as it is, as the query API leaves it;
* ``version_dates``: every version's submission time, in version order.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from xml.etree import ElementTree as ET

# Accent command -> combining mark.
_MARKS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331",
}
# \"o  \'{e}  \"{\i}  \c{c}  \v c  \H o  (a letter command needs a brace or a space).
_ACCENT = re.compile(r"""\\(?:(["'`^~=.])\s*|([uvHckrdb])(?:\s+|(?=\{)))"""
                     r"""(?:\{\s*(\\[ij]|[A-Za-z])\s*\}|(\\[ij]\b|[A-Za-z]))""")
_LETTERS = {"o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "ss": "ß", "ae": "æ", "AE": "Æ",
            "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å", "i": "ı", "j": "ȷ"}
# {\o}  \o{}  \ss  \o followed by a non-letter (a space after it only ends the command).
_NAMES = "|".join(sorted(_LETTERS, key=len, reverse=True))
_LETTER = re.compile(rf"\{{\\({_NAMES})\}}|\\({_NAMES})(?:\{{\}}|\s|(?![A-Za-z]))")
# A braced single letter left once its accent is read: {é} -> é.
_BRACED_LETTER = re.compile(r"\{(\w)\}")


def _accented(match: re.Match[str]) -> str:
    mark = _MARKS[match.group(1) or match.group(2)]
    letter = match.group(3) or match.group(4)
    base = {"\\i": "i", "\\j": "j"}.get(letter, letter)
    return unicodedata.normalize("NFC", base + mark)


def tex_accents(text: str) -> str:
    """TeX accents and TeX-spelled letters as Unicode (``Sch\\"urmann`` -> ``Schürmann``)."""
    if "\\" not in text:
        return text
    text = _ACCENT.sub(_accented, text)
    text = _LETTER.sub(lambda m: _LETTERS[m.group(1) or m.group(2)], text)
    return _BRACED_LETTER.sub(r"\1", text)


_SEPARATOR = re.compile(r"\s*(?:[,;&]|\band\b)\s*")
_COLLABORATION = re.compile(r"^(.*?\b(?:collaboration|consortium|group|team)s?)\s*:\s*(.*)$",
                            re.IGNORECASE | re.DOTALL)
_ET_AL = re.compile(r"^et\.?\s*al\.?$", re.IGNORECASE)
_SUFFIX = re.compile(r"^(?:jr|sr|ii|iii|iv)\.?$", re.IGNORECASE)
# V.M. -> V. M.; T. F.Li -> T. F. Li; F.Ya.Khalili -> F. Ya. Khalili
_INITIAL_DOT = re.compile(r"(?:(?<=\b\w)|(?<=\b\w\w))\.(?=\w)")


def _without_parentheses(text: str) -> str:
    """Drop every parenthesised part, nested ones included (affiliations)."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def split_authors(raw: str) -> list[str]:
    """The author names of an ``arXivRaw`` ``<authors>`` string (rules in the module doc)."""
    text = " ".join(_without_parentheses(raw).split())
    pieces: list[str] = []
    collaboration = _COLLABORATION.match(text)
    if collaboration:
        pieces.append(collaboration.group(1))
        text = collaboration.group(2)
    names: list[str] = []
    for piece in pieces + _SEPARATOR.split(text):
        name = " ".join(_INITIAL_DOT.sub(". ", piece).split()).strip(" :")
        if not name or _ET_AL.match(name):
            continue
        if _SUFFIX.match(name) and names:
            names[-1] = f"{names[-1]} {name}"
            continue
        names.append(name)
    return names


def version_dates(node: ET.Element, namespace: str) -> list[datetime]:
    """Every ``<version>``'s submission time (UTC), in version order.

    Raises ValueError for a version without a readable date.
    """
    found: list[tuple[int, datetime]] = []
    for version in node.findall(namespace + "version"):
        label = (version.get("version") or "").lstrip("v")
        stamp = (version.findtext(namespace + "date") or "").strip()
        try:
            moment = parsedate_to_datetime(stamp)
        except (TypeError, ValueError):
            raise ValueError(f"version {label or '?'} has no readable date: {stamp!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        found.append((int(label) if label.isdigit() else len(found) + 1, moment.astimezone(UTC)))
    return [moment for _, moment in sorted(found, key=lambda pair: pair[0])]
