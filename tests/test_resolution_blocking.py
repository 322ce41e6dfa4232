"""scholarindex.core.resolution.blocking: the combined keys that survive titles of common words."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scholarindex.core.resolution import Atom, candidate_pairs
from scholarindex.core.resolution.blocking import (
    MAX_POSTING,
    candidate_pairs_from_titles,
    crossed,
    lookups,
    pair_keys,
    pair_words,
    rare_words,
    rarity,
    stored_keys,
    title_terms,
)
from scholarindex.core.resolution.decide import features
from scholarindex.core.resolution.similarity import same_word


def atom(work_id: str, title: str) -> Atom:
    return Atom(work_id, (title,), (), False, ("Ann Lee",), (2001,))


def crowd(words: list[str]) -> list[Atom]:
    """Enough atoms that every word in ``words`` is beyond the posting cap on its own."""
    out = []
    for k in range(MAX_POSTING + 1):
        for n, word in enumerate(words):
            other = words[(n + 1 + k % (len(words) - 1)) % len(words)]
            out.append(atom(f"c{n:02d}{k:03d}", f"{word} filler{k} {other}x{k}"))
    return out


COMMON = ["query", "optimization", "distributed", "database", "system"]


def named_pairs(atoms: list[Atom]) -> set[frozenset[str]]:
    return {frozenset((atoms[i].work_id, atoms[j].work_id)) for i, j in candidate_pairs(atoms)}


def test_titles_of_common_words_still_meet() -> None:
    atoms = [*crowd(COMMON), atom("a", "Query Optimization in Distributed Database Systems"),
             atom("b", "Query optimisation in distributed database system")]
    assert frozenset(("a", "b")) in named_pairs(atoms)


def test_titles_of_common_words_sharing_too_little_do_not_meet() -> None:
    atoms = [*crowd(COMMON), atom("a", "Query Optimization in Distributed Database Systems"),
             atom("b", "Optimization of Query Plans for Robots and Drones")]
    assert frozenset(("a", "b")) not in named_pairs(atoms)


def test_a_title_cut_short_meets_through_its_start() -> None:
    atoms = [*crowd(COMMON), atom("a", "Query Optimization Distributed: the bolt cache"),
             atom("b", "Query Optimization Distributed")]
    assert frozenset(("a", "b")) in named_pairs(atoms)


def test_a_short_title_with_a_typo_meets_its_correct_spelling() -> None:
    # One of two words misspelt leaves one in common, too few to pass the share test,
    # and "locking" may be too common to block on: the one-letter-dropped keys meet.
    for typo in ("lokcing", "lockng", "locckingg"[:8], "lockimg"):
        atoms = [atom("a", f"Altruistic {typo}"), atom("b", "Altruistic Locking")]
        assert named_pairs(atoms) == {frozenset(("a", "b"))}, typo


def test_a_typo_in_a_title_whose_every_word_and_pair_of_words_is_common_meets_its_paper(
        ) -> None:
    # Every word, every pair of words and every start of these titles is held by more
    # atoms than the cap: only the title with the misspelt word left out is rare.
    crowd_titles = [f"{a} {b} {c} filler{k} other{k}"
                    for k in range(MAX_POSTING + 1)
                    for a, b, c in itertools.combinations(COMMON, 3)]
    atoms = [atom(f"c{n:04d}", t) for n, t in enumerate(crowd_titles)]
    atoms += [atom("a", "Query Optimization Distributed Database System"),
              atom("b", "Query Optimizaton Distributed Database System")]
    assert frozenset(("a", "b")) in named_pairs(atoms)


def _far_apart_words(count: int) -> list[str]:
    """``count`` made-up words no two of which are a typo apart."""
    rng = random.Random(7)
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(7))
        if not any(same_word(word, other) for other in words):
            words.append(word)
    return words


def test_a_typo_in_the_first_word_meets_inside_a_leave_one_out_block_past_the_cap() -> None:
    # Every word, pair of words and start of these titles is past the cap, the first
    # word is each one's own, and the title without it is a block of all of them (past
    # the cap too). Inside it only members whose left-out words are a typo apart meet.
    tail = "Accelerating Edge Devices with Gradient Compression"
    atoms = [atom(f"c{k:03d}", f"{word}: {tail}")
             for k, word in enumerate(_far_apart_words(MAX_POSTING + 10))]
    atoms += [atom("a", f"NimbusStream: {tail}"), atom("b", f"Nimbussream: {tail}")]
    assert named_pairs(atoms) == {frozenset(("a", "b"))}


def test_a_typo_that_ends_a_word_in_s_meets_inside_a_leave_one_out_block_past_the_cap(
        ) -> None:
    # "NimbusSparse" printed "NimbusSpars" is read "nimbusspar": the part of the block
    # it meets in is that of its spelling with the "s" it lost to the plural.
    tail = "Accelerating Edge Devices with Gradient Compression"
    atoms = [atom(f"c{k:03d}", f"{word}: {tail}")
             for k, word in enumerate(_far_apart_words(MAX_POSTING + 10))]
    atoms += [atom("a", f"NimbusSparse: {tail}"), atom("b", f"NimbusSpars: {tail}")]
    assert named_pairs(atoms) == {frozenset(("a", "b"))}


def test_typos_of_one_spelling_past_the_cap_do_not_meet_inside_a_leave_one_out_block(
        ) -> None:
    # 52 atoms whose left-out words share one spelling ("nimbustream") and no other
    # across letters: that block is past the cap too, so no two letters meet.
    tail = "Accelerating Edge Devices with Gradient Compression"
    atoms = [atom(f"c{k:03d}", f"{word}: {tail}")
             for k, word in enumerate(_far_apart_words(MAX_POSTING + 10))]
    atoms += [atom(f"t{letter}{n}", f"{'The ' * n}Nimbus{letter}tream: {tail}")
              for letter in "abcdefghijklmnopqrstuvwxyz" for n in range(2)]
    assert {tuple(sorted(p)) for p in named_pairs(atoms)} == {
        (f"t{letter}0", f"t{letter}1") for letter in "abcdefghijklmnopqrstuvwxyz"}


def test_a_title_printed_with_its_spaces_lost_meets_the_title() -> None:
    # Glued, the words match none of the other printing's: the letters still do.
    title = "Approximate Medians and Other Quantiles in One Pass"
    others = [atom(f"o{k}", title.replace("One Pass", f"Pass {k}")) for k in range(3)]
    whole, glued = atom("a", title), atom("b", "Approximatemediansandother quantilesinonepass")
    assert frozenset(("a", "b")) in named_pairs([*others, whole, glued])
    # Other letters, glued alike, are another title.
    other = atom("c", "Approximatemediansandother quantilesintwopasses")
    assert frozenset(("a", "c")) not in named_pairs([*others, whole, other])


def test_short_titles_two_typos_apart_do_not_meet() -> None:
    atoms = [atom("a", "Altruistic lokcnig"), atom("b", "Altruistic Locking")]
    assert named_pairs(atoms) == set()


def test_the_printings_of_one_title_meet_under_a_cap_scaled_for_a_larger_crawl() -> None:
    # The evaluator imitates a larger crawl by lowering the cap on word postings; how
    # many atoms print one title does not grow with the crawl, so its block stays.
    atoms = [atom(f"p{k}", "Query Optimization Distributed") for k in range(4)]
    assert len(list(candidate_pairs(atoms, max_posting=2))) == 6


def test_a_long_title_offers_a_fourth_rare_word_for_the_combined_keys() -> None:
    # The long title's three rarest words are its own end, which the other printing
    # lacks; its fourth rarest pairs with the third as the short one's rarest do.
    # Every shared word is over the cap (3), so only a combined key can meet.
    postings = {"xenon": 1, "yttrium": 1, "uranium": 2, "vanadium": 3, "wolfram": 4,
                "thorium": 5}  # how many other atoms hold each word
    fillers = [atom(f"f{word}{n}", f"{word} junk{chr(97 + n)}{word[:3]}")
               for word, count in postings.items() for n in range(count)]
    long = atom("a", "Xenon Yttrium Uranium Vanadium Wolfram Thorium")
    short = atom("b", "Uranium Vanadium Wolfram")
    atoms = [*fillers, long, short]
    assert (len(atoms) - 2, len(atoms) - 1) in set(candidate_pairs(atoms, max_posting=3))


def test_a_title_cut_short_with_a_typo_in_its_start_meets_without_that_word() -> None:
    # Every word and every pair of words is beyond the cap: only the start can meet.
    # The first four distinctive words, each left out in turn, are keys of three.
    words = ["Database", "Distributed", "Query", "Optimization"]
    crowd_ = [atom(f"c{n}{k:03d}", " ".join([*words[:n], *words[n + 1:], f"filler{n}x{k}"]))
              for n in range(len(words)) for k in range(MAX_POSTING + 1)]
    full = atom("a", "Query Optimization in Distributed Databases: the bolt cache")
    cut = atom("b", "Query Optimizaton in Distributed Database…")
    assert frozenset(("a", "b")) in named_pairs([*crowd_, full, cut])


def test_rarity_keeps_small_counts_apart_and_grows_by_steps() -> None:
    ranks = [rarity(c) for c in range(1, 2000)]
    assert ranks == sorted(ranks)
    assert len(set(ranks[:6])) == 6  # 1..6 atoms: a rank each
    assert rarity(1000) == rarity(1001) and rarity(1000) < rarity(1250)


def test_crossed_names_every_boundary_blocking_reads() -> None:
    assert not crossed(1000, 1001)
    assert crossed(1, 2)  # another atom holds the word: usable
    assert crossed(MAX_POSTING, MAX_POSTING + 1)  # past the cap
    assert crossed(6, 7)
    assert all(crossed(c, c + 1) == (rarity(c) != rarity(c + 1)) for c in range(2, MAX_POSTING))


_words = st.lists(st.sampled_from(["query", "stream", "window", "sensor", "index", "graph",
                                    "join", "cache", "skyline", "spatial"]),
                  min_size=1, max_size=8, unique=True)


@settings(max_examples=300, deadline=None)
@given(_words, st.randoms())
def test_counts_that_cross_nothing_leave_an_atoms_choice_of_words(
        words: list[str], rnd: random.Random) -> None:
    # What lets an incremental pass skip the atoms around a word whose count moved
    # without crossing a boundary: blocking reads counts through ``rarity`` alone.
    counts = {w: rnd.randint(1, 2 * MAX_POSTING) for w in words}
    moved = dict(counts)
    for word, count in counts.items():
        step = rnd.choice([-3, -1, 1, 2, 5])
        if count + step > 0 and not crossed(min(count, count + step), max(count, count + step)):
            moved[word] = count + step
    assert rare_words(words, counts) == rare_words(words, moved)
    assert pair_words(words, counts) == pair_words(words, moved)


@settings(max_examples=500, deadline=None)
@given(_words, st.randoms())
def test_an_atom_that_looks_up_alike_at_both_ends_of_a_words_range_does_throughout(
        words: list[str], rnd: random.Random) -> None:
    # What lets an incremental pass skip the neighbours of an atom holding a word whose
    # count crossed a step of rarity: were its lookups the same at the ends of the
    # range the count moved in, they were at every count between.
    counts = {w: rnd.randint(2, MAX_POSTING) for w in words}
    moving = rnd.choice(words)
    low = rnd.randint(2, MAX_POSTING)
    high = rnd.randint(low, MAX_POSTING)
    ends = {lookups(words, {**counts, moving: c}) for c in (low, high)}
    between = {lookups(words, {**counts, moving: c}) for c in range(low, high + 1)}
    assert len(ends) == 2 or between == ends


def test_a_part_of_the_set_pairs_nothing_the_whole_set_does_not() -> None:
    # The incremental pass blocks the atoms it read with the whole index's counts and
    # block sizes. Two printings filed under a pair of rare words whose block the whole
    # set holds past the cap (two typos apart, so no part of the leave-one-out block
    # past the cap holds both) are not paired by a part of the set either: the block is
    # sized by the atoms holding both words, which the index counts from stored keys
    # (sized by the atoms read, the part paired them: at 100,000 synthetic works a full
    # pass split two typos the incremental pass had joined).
    tail = "and Data-Driven Partitioning for Time-Series Forecasting at Scale"
    crowd = [atom(f"c{k:03d}", f"Method{k} {tail}") for k in range(MAX_POSTING + 10)]
    pair = [atom("typo", f"Diferentiale {tail}"), atom("orig", f"Differentiable {tail}")]
    whole = crowd + pair
    words = [title_terms(features(a).titles) for a in whole]
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for a, held in zip(whole, words, strict=True):
        for word in held:
            counts[word] = counts.get(word, 0) + 1
        for key in stored_keys(features(a).titles, features(a).surnames):
            if not key.startswith("w:"):
                sizes[key] = sizes.get(key, 0) + 1
    part = [features(a) for a in pair]
    for f in part:  # as the index counts them: documents holding both words
        for key in pair_keys(title_terms(f.titles), counts):
            both = set(key[2:].split())
            sizes[key] = sum(1 for held in words if both <= held)
    in_part = {frozenset((pair[i].work_id, pair[j].work_id)) for i, j in
               candidate_pairs_from_titles([f.titles for f in part], [f.surnames for f in part],
                                           counts=counts, block_sizes=sizes)}
    assert in_part <= named_pairs(whole)
    assert not in_part  # the shared blocks are past the cap in the whole set
