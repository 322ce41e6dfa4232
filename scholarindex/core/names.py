"""People's names: one key per person's spelling, the nicest spelling, and who may be whom.

Two questions, two rules:

* **The same spelling?** ``name_key`` folds case, accents, LaTeX and punctuation:
  "Chao Jin", "CHAO JIN" and "Cháo  Jin" share the key ``chao jin``. A document keeps
  one spelling per key, chosen by ``nicest`` so the result does not depend on which
  listing arrived first.
* **Possibly the same person?** ``same_person`` compares the way profiles and arXiv
  print names: "Jialiang Cheng", "J. Cheng", "Cheng, Jialiang", "Cheng Jialiang",
  "Jia-Liang Cheng", "JL Cheng". Surnames must be equal and the first given names
  agree (an initial agrees with any name it starts), or a two-part name is written
  family name first. Initials printed together in capitals ("JD Ullman", "Ullman,
  JD", as Google Scholar prints every name) are initials, unless the whole name is in
  capitals ("LI WEI": there a short given name cannot be told from initials). It
  tolerates initials on purpose, so it can only confirm an author overlap together
  with other evidence (title, year), never alone.
* **The same full name?** ``same_full_name`` is the stricter form for linking two
  profiles: the same spelling, or ``same_person`` with the first given names written
  out on both sides ("Jia-Liang Cheng" and "Cheng Jialiang", never "J. Cheng").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from scholarindex.core.text import fold

_NON_WORD = re.compile(r"[\W_]+")
_SPACES = re.compile(r"\s+")
_ET_AL = re.compile(r"^et\.?\s+al\.?$", re.IGNORECASE)
_LETTER = re.compile(r"[a-z]")
_NOT_LETTER_OR_DIGIT = re.compile(r"[^a-z0-9]")
_GLUED_INITIALS = re.compile(r"(?<!\S)[A-Z]{2,3}(?=\s)")  # "JD" before the surname


def clean_name(name: str) -> str:
    """Trim and collapse whitespace; keep the spelling otherwise."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", name)).strip()


def name_key(name: str) -> str:
    """Fold case, accents and punctuation: the identity of a spelling, for de-duplication.

    Letters of every script are kept, so names in other scripts do not collapse.
    """
    return " ".join(_NON_WORD.sub(" ", fold(name)).split())


def is_author_name(name: str) -> bool:
    """False for empty strings and a stray "et al."."""
    cleaned = clean_name(name)
    return bool(name_key(cleaned)) and not _ET_AL.match(cleaned)


def _spelling_rank(spelling: str) -> tuple[bool, int, str]:
    # Prefer mixed case ("Chao Jin" over "CHAO JIN"), then kept accents
    # ("Cháo" over "Chao"); the spelling itself breaks ties so the choice is total.
    mixed = spelling != spelling.upper() and spelling != spelling.lower()
    accents = sum(1 for ch in spelling if ord(ch) > 127)
    return (mixed, accents, spelling)


def nicest(spellings: Iterable[str]) -> str:
    """The best of several spellings of one name; the same whatever their order."""
    return max((clean_name(s) for s in spellings), key=_spelling_rank)


SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "da", "di", "du",
                        "le", "la", "dos", "das", "bin", "al"})


@dataclass(frozen=True)
class Part:
    """One part of a name: a full name or an initial."""

    text: str
    initial: bool


@dataclass(frozen=True)
class ParsedName:
    """A name as surname plus the other parts in their printed order."""

    surname: str
    given: tuple[Part, ...]


@lru_cache(maxsize=16_384)
def parse_name(name: str) -> ParsedName | None:
    """Parse a printed name; None when it has no usable surname."""
    name = _without_full_stop(name.strip())
    if "," in name:  # "Cheng, Jialiang" -> "Jialiang Cheng"
        last, _, first = name.partition(",")
        name = f"{first} {last}"
    parts: list[Part] = []
    for token in _spell_out_initials(name):
        if "." in token:  # "J." or "J.-L.": initials, first letter is what counts
            letters = _LETTER.findall(token)
            if letters and "".join(letters) not in SUFFIXES:
                parts.append(Part(letters[0], initial=True))
            continue
        # "Jia-Liang" -> "jialiang"; most tokens are plain already (``fold`` lower-cased them)
        plain = token.isascii() and token.isalnum()
        text = token if plain else _NOT_LETTER_OR_DIGIT.sub("", token)
        if not text or text in SUFFIXES:
            continue
        parts.append(Part(text, initial=len(text) == 1))
    full = [i for i, part in enumerate(parts) if not part.initial]
    if not full:
        return None
    surname_at = full[-1]
    given = tuple(
        part for i, part in enumerate(parts)
        if i != surname_at and not (part.text in PARTICLES and i > 0)
    )
    return ParsedName(parts[surname_at].text, given)


def _without_full_stop(name: str) -> str:
    """A citation's full stop after the last word taken off ("yoav freund." -> "yoav
    freund"): a word of 3 letters or more before it is no initial ("J.", "Th.") and
    no suffix ("Jr.")."""
    last = name.rpartition(" ")[2]
    word = last[:-1]
    if last.endswith(".") and len(word) >= 3 and word.isalpha() and word.lower() not in SUFFIXES:
        return name[:-1]
    return name


def _spell_out_initials(name: str) -> list[str]:
    """The name's folded tokens, "JD" read as "j." "d." (see the module doc)."""
    if _GLUED_INITIALS.search(name) and any(c.islower() for c in name):
        name = _GLUED_INITIALS.sub(lambda m: " ".join(c + "." for c in m.group()), name)
    return fold(name).split()


def _given_agree(a: tuple[Part, ...], b: tuple[Part, ...]) -> bool:
    if not a or not b:
        return False  # a bare surname confirms nothing
    first_a, first_b = a[0], b[0]
    if first_a.initial or first_b.initial:
        return first_a.text[0] == first_b.text[0]
    if first_a.text == first_b.text:
        return True
    # "Yin Min" and "Yinmin" are one given name.
    joined_a = "".join(p.text for p in a if not p.initial)
    joined_b = "".join(p.text for p in b if not p.initial)
    return joined_a == joined_b


def _reversed_pair(a: ParsedName, b: ParsedName) -> bool:
    """"Cheng Jialiang" against "Jialiang Cheng": family name first."""
    if len(a.given) != 1 or len(b.given) != 1 or a.given[0].initial or b.given[0].initial:
        return False
    return a.surname == b.given[0].text and b.surname == a.given[0].text


def same_person(a: str, b: str) -> bool:
    """Whether two printed names can name the same person."""
    return same_parsed(parse_name(a), parse_name(b))


def same_parsed(pa: ParsedName | None, pb: ParsedName | None) -> bool:
    """``same_person`` on names parsed already."""
    if pa is None or pb is None:
        return False
    if pa.surname == pb.surname and _given_agree(pa.given, pb.given):
        return True
    return _reversed_pair(pa, pb)


def same_full_name(a: str, b: str) -> bool:
    """Whether two printed names spell one full name: equal ``name_key``, or ``same_person``
    with a written-out first given name on both sides (an initial agrees with too many)."""
    if name_key(a) and name_key(a) == name_key(b):
        return True
    pa, pb = parse_name(a), parse_name(b)
    if pa is None or pb is None or not pa.given or not pb.given:
        return False
    if pa.given[0].initial or pb.given[0].initial:
        return False
    return same_person(a, b)


def shared_authors(known: list[str] | tuple[str, ...], authors: list[str]) -> list[str]:
    """The names in ``known`` that appear, in any spelling, among ``authors``."""
    # Each name is parsed once here, not once per pair; an author only when first
    # compared, as ``any`` stops at the first match (a parse costs more than a compare).
    parsed: list[ParsedName | None] = []

    def author(i: int) -> ParsedName | None:
        if i == len(parsed):
            parsed.append(parse_name(authors[i]))
        return parsed[i]

    return [name for name in known
            if (mine := parse_name(name)) is not None
            and any(same_parsed(mine, author(i)) for i in range(len(authors)))]
