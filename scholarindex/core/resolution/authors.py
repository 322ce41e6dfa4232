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
  ``SPELT_APART_LETTERS`` long ("Bill Rosneblatt" / "Bill Rosenblatt").
* **conflict**: one atom prints a complete author list (some listing printed
  authors and none ended in "et al.") and a profile owner of the other atom is
  not on it, even read loosely, while no one is shared. An owner is certainly an
  author, so a complete list without them is another paper, or a list printed
  short: ``decide`` lets near-identical titles overrule it. Read loosely
  (``maybe_same_person``), a surname one typo away or transliterated ("Mück" /
  "Mueck", "Rosneblatt" / "Rosenblatt") and a given name that starts the other
  ("Tim" / "Timothy", "Don" / "Donald") or is one typo away still count, so a
  misspelt name is no conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from scholarindex.core.names import ParsedName, is_author_name, parse_name, same_parsed
from scholarindex.core.resolution.clean import repair_text
from scholarindex.core.resolution.model import Atom
from scholarindex.core.resolution.similarity import same_word

SHORT_FORM_LETTERS = 3
SPELT_APART_LETTERS = 5


@dataclass(frozen=True)
class People:
    """An atom's people, parsed once."""

    everyone: tuple[ParsedName, ...]
    owners: tuple[ParsedName, ...]
    printed: tuple[ParsedName, ...]
    complete: bool  # ``printed`` is the whole author list


def _parsed(names: tuple[str, ...]) -> tuple[ParsedName, ...]:
    out = []
    for name in names:
        repaired = repair_text(name)
        if is_author_name(repaired) and (parsed := parse_name(repaired)) is not None:
            out.append(parsed)
    return tuple(dict.fromkeys(out))


def people_of(atom: Atom) -> People:
    """The atom's people (see the module doc)."""
    owners, printed = _parsed(atom.owners), _parsed(atom.authors)
    return People(tuple(dict.fromkeys(owners + printed)), owners, printed,
                  bool(printed) and not atom.authors_truncated)


@dataclass(frozen=True)
class AuthorEvidence:
    """How many people two atoms share, and whether a complete list rules one out."""

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
    return len(x) >= SPELT_APART_LETTERS and same_word(x, y)


def _surname_spelt_apart(a: ParsedName, b: ParsedName) -> bool:
    """One first given name written out in full, and surnames one typo apart, both at
    least ``SPELT_APART_LETTERS`` long ("Bill Rosneblatt" / "Bill Rosenblatt"; "Wei
    Chen" / "Wei Chan" are two people)."""
    if not a.given or not b.given or a.given[0].text != b.given[0].text:
        return False
    return (len(a.given[0].text) >= SHORT_FORM_LETTERS
            and min(len(a.surname), len(b.surname)) >= SPELT_APART_LETTERS
            and same_word(a.surname, b.surname))


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


def _loose_surname(a: str, b: str) -> bool:
    return a == b or same_word(a, b) or _transliterated(a) == _transliterated(b)


def _loose_given(a: tuple, b: tuple) -> bool:
    if not a or not b:
        return True  # a bare surname rules nothing out
    x, y = a[0].text, b[0].text
    return x[0] == y[0] and (x.startswith(y) or y.startswith(x) or same_word(x, y))


def maybe_same_person(a: ParsedName, b: ParsedName) -> bool:
    """Whether two names could be one person allowing for misspellings (see the module doc)."""
    if same_parsed(a, b):
        return True
    return _loose_surname(a.surname, b.surname) and _loose_given(a.given, b.given)


def _maybe_on_list(person: ParsedName, names: tuple[ParsedName, ...]) -> bool:
    return any(maybe_same_person(person, other) for other in names)


def compare_people(a: People, b: People) -> AuthorEvidence:
    """The ``AuthorEvidence`` of two atoms' people (see the module doc)."""
    small, large = (a, b) if len(a.everyone) <= len(b.everyone) else (b, a)
    shared = sum(1 for person in small.everyone if _on_list(person, large.everyone))
    if shared:
        return AuthorEvidence(shared, False)
    conflict = (a.complete and any(not _maybe_on_list(o, a.printed) for o in b.owners)) or (
        b.complete and any(not _maybe_on_list(o, b.printed) for o in a.owners))
    return AuthorEvidence(0, conflict)
