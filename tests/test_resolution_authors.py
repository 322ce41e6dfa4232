"""scholarindex.core.resolution.authors: who an atom's people are, and when they rule a pair out."""

from __future__ import annotations

import pytest

from scholarindex.core.names import parse_name
from scholarindex.core.resolution import Atom
from scholarindex.core.resolution.authors import (
    compare_people,
    people_of,
    readable_name,
    same_surname,
)


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
    evidence = compare_people(people_of(listing), people_of(card))
    assert evidence.shared == 1 and not evidence.conflict
    # Another first initial shares nothing, but rules no one out: surnames decide that.
    other = atom(owners=("S Madden",), authors=("S Madden", "KJ Franklin"))
    evidence = compare_people(people_of(listing), people_of(other))
    assert evidence.shared == 0 and not evidence.conflict


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


@pytest.mark.parametrize(("x", "y", "same"), [
    ("Bill Rosenblatt", "Bill Rosneblatt", True),  # two letters swapped
    ("Thomas A. Mueck", "Thomas A. Mück", True),  # transliterated umlaut
    ("Tim Finin", "Timothy W. Finin", True),
    ("Brigitta König-Ries", "Birgitta König-Ries", True),
    ("Rob Goldring", "Rob Golding", True),  # a letter dropped
    ("Avi Silberschatz", "Abraham Silberschatz", True),  # given names are not read
    ("Zhiyuan Chen", "Zhiyuan Chan", True),  # a short surname, a long given name in full
    ("Jihwang Yoo", "Jihwang Yeo", True),
    ("Daniel Barbará-Millá", "Daniel Barbará", True),  # a double surname printed in part
    ("Fernando Berzal Galiano", "Fernando Berzal", True),
    ("F J van-Kemenade", "van Kemenade, F J", True),  # a particle glued on
    ("Stefan Fischer", "Stefan Fisher", True),
    ("Jim Gray", "Jim Grey", False),  # a short surname one letter apart: "Wang" / "Wong"
    ("Wei Wang", "Wei Wong", False),
    ("Wei Zhang", "Wei Zheng", False),
    ("Hans Müller", "Hans Miller", False),  # a letter changed in a surname of 6
    ("Jim Li", "Jim Lu", False),
    ("Jürgen Zuber", "Jürgen Huber", False),  # the first letter changed
    ("Michael Carey", "Michael Stonebraker", False),
])
def test_surnames_read_loosely_for_conflicts(x: str, y: str, same: bool) -> None:
    px, py = parse_name(x), parse_name(y)
    assert px is not None and py is not None
    assert same_surname(px, py) is same
    assert same_surname(py, px) is same


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


# --- printed authors decide: near misses on both sides ---------------------------------------

@pytest.mark.parametrize(("owner", "listed"), [
    ("J. Zuber", ("Zuber, J", "Huber, K")),  # initials, family name first
    ("Jürgen Zuber", ("J. Zuber", "K. Huber")),
    ("Juergen Zuber", ("Jürgen Zuber",)),  # a transliterated given name
    ("Hans Müller", ("Mueller, H", "Schmidt, A")),  # a transliterated surname
    ("Jürgen Zuber", ("J. Zubre", "K. Huber")),  # a surname typo, two letters swapped
    ("F. Coutlee", ("Tota, J", "Coutle, F")),  # a surname typo, a letter dropped
    ("K J Syrjanen", ("Syrj?nen, K J",)),  # a letter lost to an encoding
    ("F J van-Kemenade", ("Voorhorst, F J", "van Kemenade, F J")),  # a particle glued on
    ("Fernando Berzal Galiano", ("Fernando Berzal", "Nicolás Marín")),  # a second surname
    ("A. Prasad Sistla", ("Isabel Cruz", "Prasad Sistla")),  # known by a middle name
    ("Avi Silberschatz", ("Abraham Silberschatz", "Stanley B. Zdonik")),  # a short form
    ("Werner Kießling", ("Werner Kießling", "Stefan Fischer 0003")),  # a DBLP number
    ("yoav freund.", ("freund, y.",)),  # a citation's full stop after the surname
    ("Zhiyuan Chen", ("Phillippe Bonnet", "Zhiyuan Chan")),  # short surname, long given name
    ("Christos Faloutsos", ("Y Byoung-Kee", "F Christos")),  # the order swapped, as Scholar
    ("J Han", ("H Jiawei", "P Jian")),  # prints some names: the surname's initial first
])
def test_an_owner_spelt_another_way_is_on_the_list(owner: str, listed: tuple[str, ...]) -> None:
    evidence = compare_people(people_of(atom(owners=(owner,))),
                              people_of(atom(owners=(listed[0],), authors=listed)))
    assert not evidence.conflict


@pytest.mark.parametrize(("owner", "listed"), [
    ("Jürgen Zuber", ("J. Huber", "K. Meyer")),  # one letter apart, but the first
    ("Wei Wang", ("Wei Wong", "Li Zhang")),  # a short surname one letter apart
    ("Hans Müller", ("Hans Miller",)),  # not a transliteration
    ("Flip Korn", ("Zhiyuan Chen", "Johannes Gehrke")),
    ("Christos Faloutsos", ("F Konstantinos",)),  # swapped, but another given name
    ("Christos Faloutsos", ("C Fotis",)),  # not swapped: another surname
])
def test_another_person_is_not_on_the_list(owner: str, listed: tuple[str, ...]) -> None:
    evidence = compare_people(people_of(atom(owners=(owner,))),
                              people_of(atom(owners=(listed[0],), authors=listed)))
    assert evidence.shared == 0 and evidence.conflict


def test_two_complete_lists_with_no_surname_in_common_conflict() -> None:
    a = atom(owners=("Marie Scully",), authors=("Marie Scully", "Tim Goodship"))
    b = atom(owners=("Fadi Fakhouri",), authors=("Fadi Fakhouri", "Chantal Loirat"))
    assert compare_people(people_of(a), people_of(b)).conflict
    # Nobody owns either listing (a record placed on no one's page): the lists alone decide.
    assert compare_people(people_of(atom(authors=a.authors)),
                          people_of(atom(authors=b.authors))).conflict
    # A surname in common, spelt with a typo, is no conflict between the lists.
    typo = atom(authors=("Fadi Fakhouri", "Tim Goodshp"))
    assert not compare_people(people_of(atom(authors=a.authors)), people_of(typo)).conflict


@pytest.mark.parametrize("authors", [
    ("Zhiyuan Chen", "Johannes Gehrke…"),  # cut
    ("Zhiyuan Chen", "Johannes Gehrke..."),
    ("Zhiyuan Chen", "Johannes Gehrke\u00e2?\u00a6"),  # the cut mark as mojibake left it
    ("S Chaudhuri andV",),  # two names glued where a space was lost
    ("T NguyenandV",),
    ("MFDFJ Kang",),  # several people's initials run together
    ("N/A",),
])
def test_a_damaged_list_rules_no_one_out(authors: tuple[str, ...]) -> None:
    listing = atom(owners=("Flip Korn",))
    card = atom(owners=(authors[0],), authors=authors)
    assert not people_of(card).complete
    assert not compare_people(people_of(listing), people_of(card)).conflict


@pytest.mark.parametrize(("name", "readable"), [
    ("JD Ullman", True), ("Wright Jr., T C", True), ("O'Brien, J", True),
    ("Berends-Van Der Meer, T M A", True), ("S Chaudhuri…", True),
    ("S Chaudhuri andV", False), ("MFDFJ Kang", False), ("N/A", False), ("Report 12", False),
])
def test_readable_names(name: str, readable: bool) -> None:
    assert readable_name(name) is readable


def test_a_disambiguation_number_leaves_a_list_complete() -> None:
    card = atom(owners=("Werner Kießling",), authors=("Werner Kießling", "Stefan Fischer 0003"))
    assert people_of(card).complete
    assert compare_people(people_of(atom(owners=("Stefan Fischer",))), people_of(card)).shared
