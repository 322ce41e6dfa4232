"""Author evidence: do two atoms share a person, or does one rule the other out?

An atom knows people two ways: the profile owners who list it (every owner is
an author of the paper) and the authors some listings print (layout B cards;
layout A prints none, so there the owner is the only evidence). Names are
repaired (``clean.repair_text``: entities, mojibake) and compared with
``scholarindex.core.names.same_person``: accents and case folded, initials agree with the
names they start ("J. Gray" is "Jim Gray"), "Gray, Jim" is "Jim Gray".

* **shared**: how many of one atom's people have a namesake among the other's:
  ``same_person``, or the same surname with one first given name a short form
  of the other, at least ``SHORT_FORM_LETTERS`` (3) letters ("Don Slutz" /
  "Donald R. Slutz", "Alex Borgida" / "Alexander Borgida"), or one typo from the
  other, both at least ``SPELT_APART_LETTERS`` (5) letters long ("Brigitta" /
  "Birgitta König-Ries"; "Jan Li" / "Jun Li" are two people), or a surname with an
  umlaut written out ("Meikel Poess" / "Meikel Pöss"), or one first given name
  written out in full on both sides and surnames one typo apart, both at least
  ``SPELT_APART_LETTERS`` long, a letter changed only from ``SURNAME_CHANGE_LETTERS``
  (7) ("Bill Rosneblatt" / "Bill Rosenblatt"; "Hans Müller" / "Hans Miller" are two
  people).
* **complete**: an atom's printed author list is whole, so it can rule people out:
  some listing printed authors, none ended in "et al.", none is cut ("…", "...", also
  where mojibake lost the mark's middle byte, ``clean.repair_text``), and every name
  reads as one person's (``readable_name``: letters, initials, particles, at least
  one word of two letters or more; not two names glued at a lost space, "S Chaudhuri
  andV"; not the initials of several people run together, "MFDFJ Kang"). A damaged
  line says who is on it, never who is not.
* **conflict**, printed authors decide where they are printed (the title does not
  overrule them; only a verified key does, ``decide`` rule 1):
  - an owner of one atom (read from the profile; an owner whose name does not read
    as a person's proves nothing) has no surname on the other atom's complete list;
  - both atoms print complete lists and no surname is on both.
  Surnames, not whole names: a given name varies too much between printings to rule
  anyone out ("Avi" / "Abraham Silberschatz", "Bob" / "Robert H. Gerber", "Stratis" /
  "Efstratios Viglas", "Xiolai" / "Xiaolei Qian"; initials, "J. Zuber" / "Jürgen
  Zuber"). Surnames are read loosely (``same_surname``), so a misspelt or
  transliterated one is no conflict: equal once accents are folded and umlauts
  written out ("Mück" / "Mueck"), or one typo apart with the first letter kept when
  long enough (a letter added, dropped or two swapped from ``SURNAME_TYPO_LETTERS``
  (5) letters, a letter changed from ``SURNAME_CHANGE_LETTERS`` (7)), or beside one
  first given name written out on both sides ("Rosneblatt" / "Rosenblatt", "Coutle"
  / "Coutlee", "Zhiyuan Chen" / "Zhiyuan Chan"; "Wang" / "Wong", "Zhang" / "Zheng",
  "Müller" / "Miller", "Zuber" / "Huber" are other people's), or one is the other
  with a particle glued on ("van-Kemenade" / "van Kemenade"), or a part of a double
  surname of at least ``DOUBLE_PART_LETTERS`` (4) letters ("Barbará-Millá" /
  "Barbará", "Berzal Galiano" / "Berzal"), or printed with the order swapped, the
  surname's initial first and the first given name after it, as Google Scholar
  prints some names ("F Christos" / "C Faloutsos", "H Jiawei" / "J Han": a lone
  initial that starts the other's surname, a word the other's first given name is or
  starts with). A bibliography's disambiguation number after a name ("Stefan Fischer
  0003") is no part of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from rapidfuzz.distance import OSA

from scholarindex.core import memo
from scholarindex.core.names import (
    PARTICLES,
    ParsedName,
    is_author_name,
    parse_name,
    same_parsed,
)
from scholarindex.core.resolution.clean import repair_text
from scholarindex.core.resolution.model import Atom
from scholarindex.core.resolution.similarity import one_typo_apart

SHORT_FORM_LETTERS = 3
SPELT_APART_LETTERS = 5
SURNAME_TYPO_LETTERS = 5
SURNAME_CHANGE_LETTERS = 7
DOUBLE_PART_LETTERS = 4
GLUED_INITIALS_MAX = 3  # "JD Ullman", "MJF Smith": more run together are several people's

# A printed list cut short: the mark at its end, also as mojibake left it (``repair_text``
# restores "â?¦" to "…").
_CUT = ("…", "...")
# Two names run together where a space was lost: "S Chaudhuri andV", "T NguyenandV".
_GLUED_AND = re.compile(r"(?:^|\s|[a-z])and[A-Z]")
_GLUED_CAPITALS = re.compile(rf"(?<![\w.])[A-Z]{{{GLUED_INITIALS_MAX + 1},}}(?=\s)")
# What no name holds ("N/A", "Report 12"); "?" is a letter lost to an encoding ("Syrj?nen").
_NOT_A_NAME = re.compile(r"[^\w\s.,'’?\-]|\d|_")


@dataclass(frozen=True)
class People:
    """An atom's people, parsed once."""

    everyone: tuple[ParsedName, ...]
    owners: tuple[ParsedName, ...]  # the owners whose names read as a person's
    printed: tuple[ParsedName, ...]
    complete: bool  # ``printed`` is the whole author list (module doc)


def readable_name(name: str) -> bool:
    """Whether a printed name (repaired) reads as one person's (see the module doc)."""
    bare = name.strip().rstrip(".…").strip()
    if not bare or _NOT_A_NAME.search(bare) or _GLUED_AND.search(bare):
        return False
    if _GLUED_CAPITALS.search(bare + " ") and any(c.islower() for c in bare):
        return False
    parsed = parse_name(bare)
    return parsed is not None and len(parsed.surname) >= 2


_NUMBERED = re.compile(r"\s+\d{4}$")  # DBLP's "Stefan Fischer 0003"


@dataclass(frozen=True)
class _Name:
    """One printed name, read once: the person, whether it reads as one, whether cut."""

    listed: bool  # a name at all (not "et al.", not empty)
    person: ParsedName | None  # None: no name, or no surname
    readable: bool
    cut: bool


@lru_cache(maxsize=memo.NAMES)
def _read(name: str) -> _Name:
    text = _NUMBERED.sub("", repair_text(name))  # "Stefan Fischer 0003"
    if not is_author_name(text):
        return _Name(False, None, False, False)
    return _Name(True, parse_name(text), readable_name(text), text.rstrip().endswith(_CUT))


def _people(names: tuple[_Name, ...]) -> tuple[ParsedName, ...]:
    return tuple(dict.fromkeys(n.person for n in names if n.person is not None))


def people_of(atom: Atom) -> People:
    """The atom's people (see the module doc)."""
    owners, printed = tuple(map(_read, atom.owners)), tuple(map(_read, atom.authors))
    whole = not atom.authors_truncated and all(n.readable and not n.cut
                                                for n in printed if n.listed)
    printed_people = _people(printed)
    return People(tuple(dict.fromkeys(_people(owners) + printed_people)),
                  _people(tuple(n for n in owners if n.readable)), printed_people,
                  bool(printed_people) and whole)


@dataclass(frozen=True)
class AuthorEvidence:
    """How many people two atoms share, and whether complete lists rule one out."""

    shared: int
    conflict: bool


def _short_form(a: ParsedName, b: ParsedName) -> bool:
    """One surname, and one first given name a short form of the other ("Don" /
    "Donald") or the other spelt one typo apart ("Brigitta" / "Birgitta")."""
    if a.surname != b.surname or not a.given or not b.given:
        return False
    x, y = sorted((a.given[0].text, b.given[0].text), key=len)
    if len(x) >= SHORT_FORM_LETTERS and y.startswith(x):
        return True
    return len(x) >= SPELT_APART_LETTERS and one_typo_apart(x, y)


def _surname_spelt_apart(a: ParsedName, b: ParsedName) -> bool:
    """One first given name written out in full, and surnames one typo apart, both at
    least ``SPELT_APART_LETTERS`` long, a letter changed only from
    ``SURNAME_CHANGE_LETTERS`` ("Bill Rosneblatt" / "Bill Rosenblatt"; "Wei Chen" / "Wei
    Chan", "Hans Müller" / "Hans Miller" are two people)."""
    if not a.given or not b.given or a.given[0].text != b.given[0].text:
        return False
    x, y = a.surname, b.surname
    return (len(a.given[0].text) >= SHORT_FORM_LETTERS
            and min(len(x), len(y)) >= (SURNAME_CHANGE_LETTERS if _substitution(x, y)
                                        else SPELT_APART_LETTERS)
            and one_typo_apart(x, y))


def same_author(a: ParsedName, b: ParsedName) -> bool:
    """``core.names.same_parsed``, or a short form of the first given name, or a surname
    transliterated ("Pöss" / "Poess") with the given names agreeing (module doc)."""
    if same_parsed(a, b) or _short_form(a, b) or _surname_spelt_apart(a, b):
        return True
    return (a.surname != b.surname and _transliterated(a.surname) == _transliterated(b.surname)
            and same_parsed(replace(a, surname=b.surname), b))


def _on_list(person: ParsedName, names: tuple[ParsedName, ...]) -> bool:
    return any(same_author(person, other) for other in names)


_TRANSLITERATED = (("ue", "u"), ("oe", "o"), ("ae", "a"))


def _transliterated(surname: str) -> str:
    """"poess" -> "poss": an umlaut written out, as accents are folded away."""
    for long, short in _TRANSLITERATED:
        surname = surname.replace(long, short)
    return surname


def _substitution(x: str, y: str) -> bool:
    """Equal lengths, one letter changed (not two neighbours swapped)."""
    return len(x) == len(y) and sum(p != q for p, q in zip(x, y, strict=True)) == 1


def _surname_typo(a: ParsedName, b: ParsedName) -> bool:
    """Surnames one typo apart, the first letter kept, long enough that the typo is
    unlikely to spell another surname: a letter added, dropped or two swapped from
    ``SURNAME_TYPO_LETTERS`` (5) letters, a letter changed from ``SURNAME_CHANGE_LETTERS``
    (7) ("Zhang" / "Zheng", "Müller" / "Miller" are other people); or, any length, beside
    one first given name written out on both sides, at least ``SPELT_APART_LETTERS`` (5)
    long ("Zhiyuan Chen" / "Zhiyuan Chan", "Jihwang Yoo" / "Jihwang Yeo"; "Wei Chen" /
    "Wei Chan" are two people)."""
    x, y = a.surname, b.surname
    if x[0] != y[0] or OSA.distance(x, y, score_cutoff=1) > 1:
        return False
    if min(len(x), len(y)) >= (SURNAME_CHANGE_LETTERS if _substitution(x, y)
                               else SURNAME_TYPO_LETTERS):
        return True
    return (bool(a.given) and bool(b.given) and not a.given[0].initial
            and a.given[0].text == b.given[0].text
            and len(a.given[0].text) >= SPELT_APART_LETTERS)


def _without_particle(surname: str) -> str:
    """"vankemenade" -> "kemenade": a particle glued on by a hyphen ("van-Kemenade")."""
    for particle in PARTICLES:
        if surname.startswith(particle) and len(surname) - len(particle) >= 3:
            return surname[len(particle):]
    return surname


def _part_of_double(x: str, y: str) -> bool:
    """One surname is a part of the other, a double surname printed in full on one side
    ("barbaramilla" / "barbara", "milutingasperov" / "gasperov"), the part at least
    ``DOUBLE_PART_LETTERS`` (4) letters."""
    short, long = sorted((x, y), key=len)
    return (len(short) >= DOUBLE_PART_LETTERS and len(long) > len(short)
            and (long.startswith(short) or long.endswith(short)))


def same_surname(a: ParsedName, b: ParsedName) -> bool:
    """Whether two names may carry one person's surname, misspelt or printed another way
    (see the module doc): the reading that decides whether a list leaves someone out."""
    x, y = a.surname, b.surname
    if x == y or _transliterated(x) == _transliterated(y) or _surname_typo(a, b):
        return True
    if _without_particle(x) == _without_particle(y) or _part_of_double(x, y):
        return True
    if _order_swapped(a, b) or _order_swapped(b, a):
        return True
    # A second surname printed on one side only ("Fernando Berzal Galiano" / "Fernando
    # Berzal"): the other's surname is a name after the first given name.
    return (any(p.text == y and not p.initial for p in a.given[1:])
            or any(p.text == x and not p.initial for p in b.given[1:]))


def _order_swapped(a: ParsedName, b: ParsedName) -> bool:
    """``a`` printed with the order swapped: the surname's initial first, then the first
    given name ("F Christos" for C Faloutsos, "H Jiawei" for J Han, "Y Byoung-Kee" for
    B Yi, as Google Scholar prints some names)."""
    if len(a.given) != 1 or not a.given[0].initial or not b.given:
        return False
    first = b.given[0]
    return (a.given[0].text == b.surname[:1]
            and (a.surname[:1] == first.text if first.initial else a.surname == first.text))


def _surname_on_list(person: ParsedName, names: tuple[ParsedName, ...]) -> bool:
    return any(same_surname(person, other) for other in names)


def _rules_out(whole: People, other: People) -> bool:
    """``whole``'s complete list lacks an owner of ``other``, or, both complete, they have
    no surname in common."""
    if not whole.complete:
        return False
    if any(not _surname_on_list(owner, whole.printed) for owner in other.owners):
        return True
    return other.complete and not any(_surname_on_list(p, whole.printed)
                                      for p in other.printed)


def compare_people(a: People, b: People) -> AuthorEvidence:
    """The ``AuthorEvidence`` of two atoms' people (see the module doc)."""
    small, large = (a, b) if len(a.everyone) <= len(b.everyone) else (b, a)
    shared = sum(1 for person in small.everyone if _on_list(person, large.everyone))
    if shared:
        return AuthorEvidence(shared, False)
    return AuthorEvidence(0, _rules_out(a, b) or _rules_out(b, a))
