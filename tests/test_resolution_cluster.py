"""core.resolution.resolve: a partition that does not chain weak links, whatever the order."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scholarindex.core.resolution import Atom, candidate_pairs, resolve
from scholarindex.core.resolution.cluster import clustered, resolve_new
from scholarindex.core.resolution.decide import decide_features, features
from scholarindex.core.resolution.model import Decision


def listing(work_id: str, title: str, owner: str, year: int | None = 2020,
            keys: tuple[str, ...] = ()) -> Atom:
    return Atom(work_id, (title,), (), False, (owner,), (year,) if year else (), (), (), keys)


def card(work_id: str, title: str, authors: tuple[str, ...], year: int | None = 2020) -> Atom:
    return Atom(work_id, (title,), authors, False, (authors[0],), (year,) if year else ())


# A small world with every kind of link: strong joins, weak ones, generic titles,
# a column's issues, a cannot-link through a complete author list, a verified key.
WORLD = [
    listing("01", "Integrating Triggers and Declarative Constraints in SQL Database Systems",
            "Roberta Cochrane", 1996),
    card("02", "Integrating triggers and declarative constraints in SQL database sytems",
         ("Roberta Cochrane", "Hamid Pirahesh"), 1996),
    listing("03", "Integrating Triggers and Declarative Constraints in SQL Datab…",
            "Hamid Pirahesh", 1996),
    card("04", "Editor's Notes", ("Ling Liu",), 2002),
    listing("05", "Editor's notes", "Ling Liu", 2002),
    listing("06", "Editor's notes", "Ling Liu", 2002),
    listing("07", "Editor's Notes", "Jennifer Widom", 1996),
    card("08", "Mariposa: a wide-area distributed database system",
         ("Michael Stonebraker", "Paul M. Aoki")),
    card("09", "The Mariposa distributed database management system",
         ("Jeff Sidell", "Michael Stonebraker")),
    listing("10", "Mariposa: A Wide-Area Distributed Database System", "Carl Staelin"),
    listing("11", "Efficient Query Processing over Uncertain Data", "Jim Gray", 2003,
            keys=("doi:10.1/q",)),
    listing("12", "Query Processing over Uncertain Data, Efficiently", "Pat Helland", 2003,
            keys=("doi:10.1/q",)),
    listing("13", "Efficient Query Processing over Uncertain Data", "Jim Gray", 2003,
            keys=("doi:10.1/other",)),
]


def clusters_of(resolution) -> set[tuple[str, ...]]:
    return set(resolution.clusters)


def test_the_world_resolves_as_expected() -> None:
    resolution = resolve(WORLD)
    together = {c for c in resolution.clusters if len(c) > 1}
    assert ("01", "02", "03") in together  # a typo (strong), then a cut-short title (weak)
    assert ("11", "12") in together  # the verified key, however unlike the titles
    assert all("13" not in c or c == ("13",) for c in resolution.clusters)  # another DOI
    # Three "Editor's Notes" by one editor in one year: ambiguous, none joined.
    assert {("04",), ("05",), ("06",), ("07",)} <= set(resolution.clusters)
    # "The Mariposa ... management system" is another paper: a complete list lacks Staelin.
    assert not any("09" in c and len(c) > 1 for c in resolution.clusters)
    assert resolution.clusters == sorted(resolution.clusters)
    assert all(c == tuple(sorted(c)) for c in resolution.clusters)
    # Every atom but each cluster's smallest has a link, leading to the smallest.
    for cluster in resolution.clusters:
        for work_id in cluster[1:]:
            seen = work_id
            for _ in cluster:
                seen = resolution.links[seen].to
                if seen == cluster[0]:
                    break
            assert seen == cluster[0]
        assert cluster[0] not in resolution.links


def test_every_atom_is_in_exactly_one_cluster() -> None:
    resolution = resolve(WORLD)
    flat = [w for c in resolution.clusters for w in c]
    assert sorted(flat) == sorted(a.work_id for a in WORLD)


@settings(max_examples=60, deadline=None)
@given(st.permutations(WORLD))
def test_the_partition_does_not_depend_on_order(atoms: list[Atom]) -> None:
    assert resolve(atoms) == resolve(WORLD)


@settings(max_examples=30, deadline=None)
@given(st.permutations(WORLD), st.randoms(use_true_random=False))
def test_blocking_pairs_are_the_same_pairs_in_any_order(atoms: list[Atom], rng) -> None:
    def named(order: list[Atom]) -> set[frozenset[str]]:
        return {frozenset((order[i].work_id, order[j].work_id)) for i, j in candidate_pairs(order)}
    assert named(atoms) == named(WORLD)


def test_weak_links_do_not_chain() -> None:
    # b is a cut short from a and from c, but a and c differ by a word: a weak chain.
    a = listing("a", "Adaptive Query Processing for Streams of Uncertain Sensor Data", "Ann Lee")
    b = listing("b", "Adaptive Query Processing for Streams of Uncertain Sensor…", "Ann Lee")
    c = listing("c", "Adaptive Query Processing for Streams of Uncertain Sensor Readings",
                "Ann Lee")
    assert clusters_of(resolve([a, b, c])) == {("a", "b"), ("c",)}


def test_three_profiles_variant_titles_of_one_paper_join() -> None:
    """Each pair alike but none strongly: the first round joins the closest two, the
    next joins the third to them."""
    a = listing("a", "Adaptive Query Processing for Streams of Uncertain Sensor Data", "Ann Lee")
    b = card("b", "Adaptive query processing for streams of uncertain sensor data: the cloud",
             ("Bo Ek", "Ann Lee"))
    c = card("c", "Adaptive query processing for uncertain sensor data streams",
             ("Cy Young", "Ann Lee", "Bo Ek"))
    assert clusters_of(resolve([a, b, c])) == {("a", "b", "c")}


def test_must_and_cannot_links() -> None:
    a = listing("a", "Deep Learning for Molecules", "Ann Lee")
    b = listing("b", "Something Else Entirely Different", "Bob Ray")
    c = listing("c", "Deep Learning for Molecules!", "Ann Lee")
    assert ("a", "b") in resolve([a, b], must_link=[("a", "b")]).clusters
    assert resolve([a, b], must_link=[("a", "b")]).links["b"].evidence == ("must-link",)
    apart = resolve([a, c, b], cannot_link=[("a", "c")])
    assert ("a",) in apart.clusters and ("c",) in apart.clusters
    # A cannot-link holds against a chain: b joins a by must-link, c may not then join b's group.
    guarded = resolve([a, b, c], must_link=[("a", "b"), ("b", "c")], cannot_link=[("a", "c")])
    assert not any({"a", "c"} <= set(cl) for cl in guarded.clusters)


def test_duplicate_work_ids_pool_their_evidence() -> None:
    a1 = listing("a", "Streaming Joins over Sliding Windows in Practice", "Ann Lee")
    a2 = card("a", "Streaming joins over sliding windows in practice", ("Ann Lee", "Bob Ray"))
    resolution = resolve([a1, a2])
    assert resolution.clusters == [("a",)]


def test_bad_input_does_not_crash() -> None:
    odd = [listing("x", "", ""), listing("y", "&#;&amp;", "et al."), card("z", "???", ("",))]
    resolution = resolve(odd)
    assert sorted(w for c in resolution.clusters for w in c) == ["x", "y", "z"]


WORDS = ["query", "queries", "data", "streams", "stream", "sensor", "adaptive", "processing",
         "optimisation", "optimization", "join", "joins", "index", "editor's", "notes", "the", "of"]
NAMES = ["Ann Lee", "A. Lee", "Bob Ray", "Robert Ray", "Chen Li", "Li, Chen", "Dana Fox"]


@st.composite
def random_atoms(draw) -> list[Atom]:
    count = draw(st.integers(min_value=1, max_value=14))
    atoms = []
    for k in range(count):
        title = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7)))
        authors = tuple(draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True)))
        owners = tuple(draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2,
                                     unique=True)))
        years = tuple(draw(st.lists(st.integers(2000, 2004), max_size=2, unique=True)))
        keys = tuple(draw(st.lists(st.sampled_from(["doi:1", "doi:2", "arxiv:3"]), max_size=1)))
        venues = tuple(draw(st.lists(st.sampled_from(["VLDB", "SIGMOD"]), max_size=1)))
        profiles = tuple(draw(st.lists(st.sampled_from(["p1", "p2", "p3"]), max_size=2,
                                       unique=True)))
        atoms.append(Atom(f"{k:02d}", (title,), authors, draw(st.booleans()), owners, years,
                          venues, (), keys, profiles))
    return atoms


@settings(max_examples=150, deadline=None)
@given(random_atoms(), st.randoms(use_true_random=False), st.data())
def test_random_atoms_partition_and_guards(atoms: list[Atom], rng, data) -> None:
    ids = [a.work_id for a in atoms]
    cannot = data.draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)),
                                max_size=3))
    resolution = resolve(atoms, cannot_link=cannot)
    flat = [w for c in resolution.clusters for w in c]
    assert sorted(flat) == sorted(ids)  # a partition: every atom exactly once
    shuffled = list(atoms)
    rng.shuffle(shuffled)
    assert resolve(shuffled, cannot_link=cannot) == resolution  # order does not matter
    cluster_of = {w: c for c in resolution.clusters for w in c}
    for a, b in cannot:
        assert a == b or cluster_of[a] != cluster_of[b]  # a cannot-link always holds
    for work_id, link in resolution.links.items():
        assert cluster_of[link.to] == cluster_of[work_id]


def test_a_title_thousands_print_still_meets_its_coauthors() -> None:
    crowd = [listing(f"{k:04d}", "Introduction", f"Person{k} Crowd{k}", 2001) for k in range(300)]
    pair = [card("a0", "Introduction", ("Ann Lee", "Bob Ray"), 2001),
            card("a1", "Introduction", ("Bob Ray", "Ann Lee"), 2001)]
    atoms = crowd + pair
    named = {frozenset((atoms[i].work_id, atoms[j].work_id)) for i, j in candidate_pairs(atoms)}
    assert frozenset(("a0", "a1")) in named  # through "introduction|lee"
    assert len(named) < 1000  # not the 45,150 pairs of the whole crowd
    assert ("a0", "a1") in resolve(atoms).clusters


def edition(work_id: str, year: int | None, venue: str | None, profile: str) -> Atom:
    return Atom(work_id, ("QuickStore: A High Performance Mapped Object Store",), (), False,
                ("Seth J. White",), (year,) if year else (), (venue,) if venue else (), (), (),
                (profile,))


def test_a_conference_paper_and_its_journal_version_pair_by_year() -> None:
    atoms = [edition("d94", 1994, "SIGMOD Conference", "dblp"),
             edition("d95", 1995, "VLDB J.", "dblp"),
             edition("a94", 1994, None, "acm"), edition("a95", 1995, None, "acm")]
    assert clusters_of(resolve(atoms)) == {("a94", "d94"), ("a95", "d95")}


def test_a_listing_equally_like_both_versions_joins_neither() -> None:
    atoms = [edition("d94", 1994, "SIGMOD Conference", "dblp"),
             edition("d95", 1995, "VLDB J.", "dblp"), edition("x", None, None, "other")]
    assert clusters_of(resolve(atoms)) == {("d94",), ("d95",), ("x",)}


def test_a_listing_nearer_one_version_joins_that_one() -> None:
    atoms = [edition("d94", 1994, "SIGMOD Conference", "dblp"),
             edition("d95", 1995, "VLDB J.", "dblp"), edition("x", 1995, None, "other")]
    assert clusters_of(resolve(atoms)) == {("d94",), ("d95", "x")}


def column(work_id: str, owner: str = "Karl Aberer", year: int = 2002) -> Atom:
    return Atom(work_id, ("Book Review Column",), (), False, (owner,), (year,))


def test_a_column_one_person_wrote_once_that_year_joins_on_that_person() -> None:
    assert clusters_of(resolve([column("a"), column("b")])) == {("a", "b")}
    assert clusters_of(resolve([column("a"), column("b", "Jim Gray")])) == {("a",), ("b",)}


def test_one_persons_several_columns_of_a_year_join_none() -> None:
    atoms = [column("a1"), column("a2"), column("b1"), column("b2")]
    assert clusters_of(resolve(atoms)) == {("a1",), ("a2",), ("b1",), ("b2",)}


def version(work_id: str, year: int, venue: str | None, profile: str,
            title: str = "Garbage Collection in Object Oriented Databases") -> Atom:
    return Atom(work_id, (title,), (), False, ("Prasan Roy",), (year,),
                (venue,) if venue else (), (), (), (profile,))


def test_a_journal_and_proceedings_of_another_year_never_share_a_work() -> None:
    """Two co-authors' profiles, one listing the conference paper, the other its journal
    version: the cannot-link keeps a third listing from chaining them."""
    atoms = [version("c", 1997, "VLDB Conference", "p1"), version("j", 1998, "VLDB J.", "p2"),
             version("x", 1997, None, "p3")]
    assert clusters_of(resolve(atoms)) == {("c", "x"), ("j",)}
    # the same journal a year apart (online first, then in print) stays one work
    atoms = [version("j1", 1997, "VLDB J.", "p1"), version("j2", 1998, "The VLDB Journal", "p2")]
    assert clusters_of(resolve(atoms)) == {("j1", "j2")}


def test_a_printing_cut_short_joins_the_version_of_its_year() -> None:
    """A title cut short may join a listing a year away (``decide`` lets it), but a
    match across two years ranks below one of the same year, whatever the scores: the
    journal version's title is the likelier here only because it has fewer words."""
    pico = "PicoDBMS: Scaling down database techniques for the smartcard"
    atoms = [version("c", 2000, "VLDB Conference", "p1", pico + " environment"),
             version("j", 2001, "VLDB J.", "p2", pico),
             version("x", 2000, None, "p3", "PicoDBMS: Scaling down database techniques "
                     "for the…")]
    assert clusters_of(resolve(atoms)) == {("c", "x"), ("j",)}


def test_a_typo_a_year_apart_joins_a_lone_printing_not_two_corroborated_versions() -> None:
    """Two profiles each list the proceedings of 2000 and two the journal of 2001, their
    titles a typo apart: each year is corroborated, two works. One printing with the
    typo and another year, beside the paper: Scholar's wrong year, one work."""
    conf = "PicoDMBS: Scaling Down Database Techniques for the Smartcard"
    journal = "PicoDBMS: Scaling down database techniques for the smartcard"
    atoms = [version("c1", 2000, None, "p1", conf), version("c2", 2000, None, "p2", conf),
             version("j1", 2001, None, "p3", journal), version("j2", 2001, None, "p4", journal)]
    assert clusters_of(resolve(atoms)) == {("c1", "c2"), ("j1", "j2")}
    atoms = [version("paper", 2000, None, "p1", journal),
             version("printing", 2001, None, "p2", conf)]
    assert clusters_of(resolve(atoms)) == {("paper", "printing")}


def test_a_title_printed_the_same_wins_a_tie_over_one_only_cleaned_alike() -> None:
    exact = "Tutorial: Application Servers and Associated Technologies"
    atoms = [version("sigmod", 2002, "SIGMOD Conference", "dblp", exact),
             version("vldb", 2002, "VLDB", "dblp", "Application Servers and Associated "
                     "Technologies"),
             version("card", 2002, None, "acm", exact.lower())]
    assert clusters_of(resolve(atoms)) == {("card", "sigmod"), ("vldb",)}


def test_resolve_leaves_the_cycle_collector_as_it_found_it() -> None:
    import gc
    assert gc.isenabled()
    resolve(WORLD)
    assert gc.isenabled()
    with pytest.raises(AttributeError):
        resolve([None])  # type: ignore[list-item]
    assert gc.isenabled()
    gc.disable()
    try:
        resolve(WORLD)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_printings_of_one_paper_alike_to_one_another_join_despite_the_tie() -> None:
    """A paper and two printings of it cut short: each equally like the other two,
    which are alike to each other (no choice to make), so all three join. Before, each
    saw a tie between two groups and joined neither."""
    full = listing("a", "Semantic Interoperability in Global Information Systems: A Brief "
                        "Introduction to the Research Area", "Amit Sheth")
    cut = card("b", "Semantic interoperability in global information systems",
               ("Aris Ouksel", "Amit Sheth"), 2020)
    cut_more = card("c", "Semantic interoperability in global information sy…",
                    ("Aris Ouksel", "Amit Sheth"), 2020)
    assert clusters_of(resolve([full, cut, cut_more])) == {("a", "b", "c")}


def test_a_tie_between_printings_judged_apart_still_joins_neither() -> None:
    """The cut printing is equally like two titles that differ by a swapped word (judged
    apart): a real choice, so it joins neither."""
    cut = card("a", "Semantic B2B integration: issues in ontology-based…",
               ("Zhan Cui", "Dean Jones"), 2002)
    one = listing("b", "Semantic B2B Integration: Issues in Ontology-based Applications",
                  "Zhan Cui", 2002)
    other = card("c", "Semantic B2B integration: issues in ontology-based approaches",
                 ("Zhan Cui", "Dean Jones"), 2002)
    assert clusters_of(resolve([cut, one, other])) == {("a",), ("b",), ("c",)}


@pytest.mark.parametrize("title", ["Editorial", "Editorial Introduction", "In this Issue",
                                   "Editor's Notes"])
@pytest.mark.parametrize("venue", [None, "IEEE Trans. Knowl. Data Eng."])
@pytest.mark.parametrize("profiles", [("p1",), ("p1", "p2", "p3")])
def test_one_editors_column_of_twelve_years_is_twelve_works_or_more(
        title: str, venue: str | None, profiles: tuple[str, ...]) -> None:
    """An editor's profile lists a column every year; a co-editor's lists the same
    columns, another site's card prints them again, one undated: no work spans two years."""
    def column(work_id: str, year: int | None, profile: str, authors: tuple[str, ...] = ()
               ) -> Atom:
        owner = {"p1": "Ling Liu", "p2": "Calton Pu", "p3": "Ling Liu"}[profile]
        return Atom(work_id, (title,), authors, False, (owner,), (year,) if year else (),
                    (venue,) if venue else (), (), (), (profile,))
    atoms = [column(f"a{y}", y, "p1") for y in range(2001, 2013)]
    if "p2" in profiles:
        atoms += [column(f"b{y}", y, "p2", ("Calton Pu", "Ling Liu")) for y in range(2001, 2013)]
        atoms += [column(f"c{y}", y, "p3", ("Ling Liu",)) for y in range(2001, 2013, 3)]
        atoms.append(column("undated", None, "p3", ("Ling Liu", "Calton Pu")))
    years = {a.work_id: a.years for a in atoms}
    resolution = resolve(atoms)
    for cluster in resolution.clusters:
        assert len({y for w in cluster for y in years[w]}) <= 1, cluster
    if "p2" in profiles:
        assert ("a2002", "b2002") in resolution.clusters  # one year's two printings join


# ``resolve_new``: new atoms among works already resolved, deciding only what they change.

def blocked(atoms: list[Atom]) -> list[tuple[str, str]]:
    return [(atoms[i].work_id, atoms[j].work_id) for i, j in candidate_pairs(atoms)]


def test_new_atoms_join_the_works_resolve_would_join_them_to() -> None:
    settled = {"01": "A", "02": "A", "11": "B", "08": "C", "10": "C"}
    atoms = [a for a in WORLD if a.work_id in {*settled, "03", "12", "13"}]
    together = {c for c in resolve_new(atoms, settled, blocked(atoms)).clusters if len(c) > 1}
    assert together == {("01", "02", "03"), ("11", "12"), ("08", "10")}


def test_settled_works_are_neither_joined_nor_split() -> None:
    # Two printings the last pass kept apart stay apart; a work of two unlike listings
    # (joined by an operator, say) stays one, and a typo of either joins it whole.
    settled = {"d94": "one", "a94": "two", "m1": "three", "m2": "three"}
    atoms = [edition("d94", 1994, "SIGMOD Conference", "dblp"),
             edition("a94", 1994, None, "acm"),
             listing("m1", "Mariposa: A Wide-Area Distributed Database System", "Carl Staelin"),
             listing("m2", "Altruistic Locking in Multiversion Databases", "Carl Staelin"),
             listing("new", "Altruistic Locking in Multiversion Databses", "Eve Kay")]
    assert clusters_of(resolve_new(atoms, settled, blocked(atoms))) == {("d94",), ("a94",),
                                                        ("m1", "m2", "new")}


def test_a_new_atom_equally_like_two_works_joins_neither() -> None:
    atoms = [edition("d94", 1994, "SIGMOD Conference", "dblp"),
             edition("d95", 1995, "VLDB J.", "dblp"), edition("x", None, None, "other")]
    assert clusters_of(resolve_new(atoms, {"d94": "a", "d95": "b"}, blocked(atoms))) == {
        ("d94",), ("d95",), ("x",)}
    atoms[2] = edition("x", 1995, None, "other")
    assert clusters_of(resolve_new(atoms, {"d94": "a", "d95": "b"}, blocked(atoms))) == {
        ("d94",), ("d95", "x")}


def test_only_pairs_a_new_atom_can_change_are_decided() -> None:
    decided: list[tuple[str, str]] = []

    def judge(a, b):
        decided.append((a.atom.work_id, b.atom.work_id))
        return decide_features(a, b)

    atoms = [column("a1"), column("a2"), column("b1"), column("b2", "Jim Gray"),
             listing("t", "Transaction Processing Concepts", "Jim Gray")]
    resolve_new(atoms, {"a1": "A", "a2": "B", "b1": "C", "b2": "D"}, blocked(atoms),
                judge=judge)
    assert decided == []  # no new atom meets them: nothing to decide
    atoms.append(column("new", "Jim Gray"))
    resolve_new(atoms, {"a1": "A", "a2": "B", "b1": "C", "b2": "D"}, blocked(atoms),
                judge=judge)
    assert decided and all("new" in pair for pair in decided)


def _judged(atoms: list[Atom], alike: dict[tuple[str, str], float],
            apart: dict[tuple[str, str], Decision]) -> dict[tuple[int, int], Decision]:
    index = {a.work_id: i for i, a in enumerate(atoms)}
    decisions = {(index[a], index[b]): Decision(True, score, ("alike",))
                 for (a, b), score in alike.items()}
    decisions.update({(index[a], index[b]): d for (a, b), d in apart.items()})
    return decisions


@pytest.mark.parametrize(("verdict", "joins"), [
    (Decision(False, 0.5, ("titles 0.50",), on_wording=True), True),
    (Decision(False, 0.8, ("title 0.80", "another year")), False),
    (Decision(False, 0.8, ("title 0.80", "1 shared author(s)", "another kind of contribution")),
     False),
])
def test_a_lone_printing_outvotes_a_verdict_on_wording_alone(verdict: Decision,
                                                              joins: bool) -> None:
    """Rounds join a, b, then d, into one work; c, alike to a and d, was judged apart from
    b on its title's wording alone (words glued, a citation's debris): two members alike
    to one apart, it joins. A verdict on the paper itself keeps it out."""
    atoms = [listing(k, f"Printing {k}", "Ann Lee", None) for k in "abcd"]
    decisions = _judged(atoms, {("a", "b"): 0.95, ("a", "d"): 0.94, ("b", "d"): 0.93,
                                ("a", "c"): 0.92, ("c", "d"): 0.92}, {("b", "c"): verdict})
    resolution = clustered(atoms, [features(a) for a in atoms], decisions)
    assert clusters_of(resolution) == ({("a", "b", "c", "d")} if joins
                                       else {("a", "b", "d"), ("c",)})


def test_a_lone_printing_alike_to_one_member_and_apart_from_another_stays_out() -> None:
    atoms = [listing(k, f"Printing {k}", "Ann Lee", None) for k in "abc"]
    decisions = _judged(atoms, {("a", "b"): 0.95, ("a", "c"): 0.92},
                        {("b", "c"): Decision(False, 0.5, ("titles 0.50",), on_wording=True)})
    resolution = clustered(atoms, [features(a) for a in atoms], decisions)
    assert clusters_of(resolution) == {("a", "b"), ("c",)}


def _on_profiles(atom: Atom, *profiles: str) -> Atom:
    """The atom as the pass pools it when those profiles print its title the same."""
    return replace(atom, profiles=profiles)


@pytest.mark.parametrize(("alike_on", "apart_on", "joins"), [
    (("p1", "p2"), ("p3",), True),  # two printings of a alike to c, one of b apart
    (("p1",), ("p3",), False),  # one to one: the chain the guard is for
    (("p1", "p2"), ("p3", "p4"), False),  # two to two: no majority
])
def test_a_lone_printing_is_outvoted_by_printings_not_atoms(
        alike_on: tuple[str, ...], apart_on: tuple[str, ...], joins: bool) -> None:
    """a pools the listings of every profile that prints its title the same: each is a
    printing judged alike to c, as separate atoms of it would be."""
    atoms = [listing(k, f"Printing {k}", "Ann Lee", None) for k in "abc"]
    atoms[0] = _on_profiles(atoms[0], *alike_on)
    atoms[1] = _on_profiles(atoms[1], *apart_on)
    atoms[2] = _on_profiles(atoms[2], "p9")
    decisions = _judged(atoms, {("a", "b"): 0.95, ("a", "c"): 0.92},
                        {("b", "c"): Decision(False, 0.5, ("titles 0.50",), on_wording=True)})
    resolution = clustered(atoms, [features(a) for a in atoms], decisions)
    assert clusters_of(resolution) == ({("a", "b", "c")} if joins else {("a", "b"), ("c",)})


def test_printings_of_a_member_do_not_outvote_a_verdict_on_the_paper() -> None:
    atoms = [listing(k, f"Printing {k}", "Ann Lee", None) for k in "abc"]
    atoms[0] = _on_profiles(atoms[0], "p1", "p2", "p3")
    decisions = _judged(atoms, {("a", "b"): 0.95, ("a", "c"): 0.92},
                        {("b", "c"): Decision(False, 0.8, ("title 0.80", "another year"))})
    resolution = clustered(atoms, [features(a) for a in atoms], decisions)
    assert clusters_of(resolution) == {("a", "b"), ("c",)}


def test_printings_cut_short_do_not_outvote_one_word_swapped() -> None:
    """c is alike to both printings cut short, but the paper's own title differs from c's
    by one word swapped: a verdict on the paper, which no count of printings overrules."""
    a = listing("a", "Adaptive Query Processing for Streams of Uncertain Sensor Data", "Ann Lee")
    b1 = listing("b1", "Adaptive Query Processing for Streams of Uncertain Sensor…", "Ann Lee")
    b2 = listing("b2", "Adaptive query processing for streams of uncertain sens…", "Ann Lee")
    c = listing("c", "Adaptive Query Processing for Streams of Uncertain Sensor Readings",
                "Ann Lee")
    assert clusters_of(resolve([a, b1, b2, c])) == {("a", "b1", "b2"), ("c",)}
