"""scholarindex.core.resolution.authors: who an atom's people are, and when they rule a pair out."""

from __future__ import annotations

import pytest

from scholarindex.core.names import parse_name
from scholarindex.core.resolution import Atom
from scholarindex.core.resolution.authors import compare_people, maybe_same_person, people_of


def atom(owners: tuple[str, ...] = (), authors: tuple[str, ...] = (),
         truncated: bool = False) -> Atom:
    return Atom("x", ("A Title of Some Length",), authors, truncated, owners)


@pytest.mark.parametrize(("a", "b"), [
    (atom(owners=("Jim Gray",)), atom(authors=("J. Gray", "P. Helland"))),  # initials
    (atom(owners=("José Peñalver",)), atom(authors=("Jose Penalver",))),  # accents folded
    (atom(owners=("Bertram Lud&#228;scher",)), atom(authors=("Bertram Ludäscher",))),  # entity
    (atom(owners=("Anna Sj\u00c3\u00b6str\u00c3\u00b6m",)), atom(authors=("Anna Sjöström",))),
    (atom(owners=("Gray, Jim",)), atom(owners=("Jim Gray",))),  # family name first
    (atom(owners=("Jeffrey D. Ullman",)), atom(authors=("JD Ullman", "J Widom"))),  # Scholar
    (atom(owners=("Meikel Pöss",)), atom(authors=("M Poess", "C Floyd"))),  # umlaut written out
])
def test_shared_people(a: Atom, b: Atom) -> None:
    evidence = compare_people(people_of(a), people_of(b))
    assert evidence.shared == 1 and not evidence.conflict


def test_layout_a_owner_against_a_complete_list_without_them_is_a_conflict() -> None:
    listing = atom(owners=("Flip Korn",))  # layout A: the owner is the only evidence
    card = atom(owners=("Zhiyuan Chen",), authors=("Zhiyuan Chen", "Johannes Gehrke"))
    evidence = compare_people(people_of(listing), people_of(card))
    assert evidence == compare_people(people_of(card), people_of(listing))
    assert evidence.shared == 0 and evidence.conflict


def test_an_owner_with_a_middle_initial_is_on_a_list_of_glued_initials() -> None:
    listing = atom(owners=("Michael J. Franklin",))
    card = atom(owners=("S Madden",), authors=("S Madden", "MJ Franklin", "JM Hellerstein"))
    assert compare_people(people_of(listing), people_of(card)).conflict is False
    other = atom(owners=("S Madden",), authors=("S Madden", "KJ Franklin"))
    assert compare_people(people_of(listing), people_of(other)).conflict is True


def test_a_list_ending_in_et_al_proves_nothing_by_absence() -> None:
    listing = atom(owners=("Flip Korn",))
    card = atom(owners=("Zhiyuan Chen",), authors=("Zhiyuan Chen", "Johannes Gehrke"),
                truncated=True)
    evidence = compare_people(people_of(listing), people_of(card))
    assert evidence.shared == 0 and not evidence.conflict


def test_a_written_out_umlaut_needs_the_given_names_too() -> None:
    evidence = compare_people(people_of(atom(owners=("Meikel Pöss",))),
                              people_of(atom(owners=("Carl Poess",))))
    assert evidence.shared == 0


def test_owners_only_on_both_sides_never_conflict() -> None:
    evidence = compare_people(people_of(atom(owners=("Chao Jin",))),
                              people_of(atom(owners=("Yinmin Zhong",))))
    assert evidence.shared == 0 and not evidence.conflict


def test_stray_et_al_and_empty_names_are_not_people() -> None:
    assert people_of(atom(authors=("et al.", "", "  "))).everyone == ()


@pytest.mark.parametrize(("x", "y", "maybe"), [
    ("Bill Rosenblatt", "Bill Rosneblatt", True),  # two letters swapped
    ("Thomas A. Mueck", "Thomas A. Mück", True),  # transliterated umlaut
    ("Tim Finin", "Timothy W. Finin", True),  # a short form of the given name
    ("Don Slutz", "Donald R. Slutz", True),
    ("Brigitta König-Ries", "Birgitta König-Ries", True),
    ("Rob Goldring", "Rob Golding", True),
    ("Jim Gray", "Jim Grey", True),  # one letter changed
    ("Jim Li", "Jim Lu", False),  # two letters: too short to call it a typo
    ("Jim Gray", "Pat Gray", False),  # another given name
    ("Michael Carey", "Michael Stonebraker", False),
])
def test_names_read_loosely_for_conflicts(x: str, y: str, maybe: bool) -> None:
    px, py = parse_name(x), parse_name(y)
    assert px is not None and py is not None
    assert maybe_same_person(px, py) is maybe


@pytest.mark.parametrize(("x", "y", "shared"), [
    ("Bill Rosneblatt", "Bill Rosenblatt", True),  # the given name in full, a surname typo
    ("Rob Goldring", "Rob Golding", True),
    ("Zhiyuan Chen", "Zhiyuan Chan", False),  # surnames too short to call it a typo
    ("B Rosneblatt", "B Rosenblatt", False),  # an initial is too little beside a typo
    ("Bill Rosneblatt", "Will Rosenblatt", False),
])
def test_a_surname_spelt_one_typo_apart_is_shared_beside_a_full_given_name(
        x: str, y: str, shared: bool) -> None:
    evidence = compare_people(people_of(atom(owners=(x,))), people_of(atom(authors=(y,))))
    assert (evidence.shared == 1) is shared
