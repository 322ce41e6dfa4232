"""``GrowingResolution``: round after round over a growing set, what ``resolve`` gives."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

import pytest

from bench.resolution_speed import synthetic_atoms
from scholarindex.core.resolution import Atom, resolve
from scholarindex.core.resolution.blocking import (
    candidate_pairs_from_titles,
    left_out_blocks,
    near_blocks,
    pair_key_words,
    pair_keys,
    spellings,
    stored_keys,
    title_terms,
)
from scholarindex.core.resolution.cluster import _pool
from scholarindex.core.resolution.decide import features
from scholarindex.core.resolution.growing import GrowingResolution, crossed_cap


def whole_numbers(whole: Sequence[Atom], region: Sequence[Atom], cap_scale: int = 1
                  ) -> tuple[dict[str, int], dict[str, int]]:
    """Blocking's numbers over ``whole`` for the atoms of ``region``, as an incremental
    pass counts them through the index: each of their words' holders and each of
    their blocks', and of the pairs of words and the parts of leave-one-out blocks, those
    two of them are filed under. ``cap_scale`` multiplies them, as a crawl far larger
    than the atoms at hand would."""
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    postings: dict[str, set[int]] = defaultdict(set)
    for n, atom in enumerate(whole):
        feats = features(atom)
        for key in stored_keys(feats.titles, feats.surnames):
            if key.startswith("w:"):
                counts[key[2:]] += 1
                postings[key[2:]].add(n)
            else:
                sizes[key] += 1
        for key, words in left_out_blocks(feats.titles).items():
            for name in near_blocks(key, words):
                sizes[name] += 1
    filed: Counter[str] = Counter()
    held: set[str] = set()
    for atom in region:
        feats = features(atom)
        held |= stored_keys(feats.titles, feats.surnames)
        filed.update(pair_keys(title_terms(feats.titles), counts))
        filed.update(name for key, words in left_out_blocks(feats.titles).items()
                     for name in near_blocks(key, words))
    for key in (k for k, atoms in filed.items() if atoms > 1 and k.startswith("&:")):
        first, second = pair_key_words(key)
        sizes[key] = len(postings[first] & postings[second])
    shown = held | {k for k, atoms in filed.items() if atoms > 1}
    return ({w[2:]: counts[w[2:]] * cap_scale for w in held if w.startswith("w:")},
            {k: sizes[k] * cap_scale for k in shown if not k.startswith("w:")})


def blocked(atoms: Sequence[Atom], counts: dict[str, int], sizes: dict[str, int]
            ) -> set[tuple[str, str]]:
    """The candidate pairs ``resolve`` decides (but those sharing a verified key: none here)."""
    pooled = _pool(atoms)
    feats = [features(a) for a in pooled]
    return {(pooled[i].work_id, pooled[j].work_id) for i, j in  # i < j: in work_id order
            candidate_pairs_from_titles([f.titles for f in feats], [f.surnames for f in feats],
                                        counts=counts, block_sizes=sizes)}


def reprinted(atoms: Sequence[Atom], rng: random.Random) -> list[Atom]:
    """A few atoms printed again under their own work_id on another profile (a work_id
    in two documents: ``resolve`` pools them), some with a year of their own."""
    return [replace(a, titles=(a.titles[0].lower(),), years=(a.years[0] + rng.choice((0, 3)),),
                    profiles=("another",)) for a in rng.sample(list(atoms), 8)]


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_each_round_resolves_as_resolve_does(seed: int) -> None:
    rng = random.Random(seed)
    universe = synthetic_atoms(1400, seed=seed)
    rng.shuffle(universe)
    region, outside = universe[:300], universe[700:]
    later = universe[300:700]
    growing = GrowingResolution()
    # The same, told which blocks crossed the cap, with one mapping of sizes kept up to
    # date in place (a block no longer counted keeps its last size), as a pass keeps it.
    in_place = GrowingResolution()
    kept_sizes: dict[str, int] = {}
    shown_outside = 200
    rounds = 0
    while True:
        whole = [*region, *later, *outside[:shown_outside]]
        # Some rounds the whole moves too (another crawl's writes): counts and sizes of
        # words and blocks the region holds shift under atoms already resolved.
        counts, sizes = whole_numbers(whole, region, cap_scale=rng.choice((1, 1, 2)))
        expected = resolve(region, counts=counts, sizes=sizes)
        got = growing.resolve(region, counts=counts, sizes=sizes)
        assert growing.candidate_pairs() == blocked(region, counts, sizes)
        assert got.clusters == expected.clusters
        assert got.links == expected.links
        moved = {k for k, size in sizes.items()
                 if k in kept_sizes and crossed_cap(kept_sizes[k], size)}
        kept_sizes.update(sizes)
        told = in_place.resolve(region, counts=counts, sizes=kept_sizes, sizes_moved=moved)
        assert in_place.candidate_pairs() == growing.candidate_pairs()
        assert told == got
        rounds += 1
        if not later:
            break
        step = rng.choice((1, 5, 40, 120))
        region = [*region, *later[:step]]
        if rng.random() < 0.3:
            region += reprinted(region, rng)
        later = later[step:]
        shown_outside += rng.choice((0, 0, 50))
    assert rounds > 3
    assert any(len(c) > 1 for c in got.clusters)


def test_operators_decisions_changed_between_rounds_resolve_everything_again() -> None:
    atoms = synthetic_atoms(400, seed=5)
    counts, sizes = whole_numbers(atoms, atoms)
    growing = GrowingResolution()
    joined = next(c for c in resolve(atoms, counts=counts, sizes=sizes).clusters if len(c) > 1)
    growing.resolve(atoms, counts=counts, sizes=sizes)
    apart = [(joined[0], joined[1])]
    got = growing.resolve(atoms, cannot_link=apart, counts=counts, sizes=sizes)
    assert got == resolve(atoms, cannot_link=apart, counts=counts, sizes=sizes)
    assert joined not in got.clusters


@pytest.mark.parametrize("seed", [3, 11])
def test_deciding_only_what_the_change_reaches_gives_resolves_clusters(seed: int) -> None:
    # Resolved once; then atoms are added round by round, and only they are live: the
    # rest stand as the first resolution grouped them, and every pair of two of them is
    # as it decided (the numbers of the whole do not move here).
    rng = random.Random(seed)
    universe = synthetic_atoms(1400, seed=seed)
    rng.shuffle(universe)
    settled, later = universe[:900], universe[900:1300]
    counts, sizes = whole_numbers(universe, universe)
    held = [list(c) for c in resolve(settled, counts=counts, sizes=sizes).clusters]
    growing = GrowingResolution()
    region, live = list(settled), set()
    while later:
        step = rng.choice((5, 40, 120))
        added, later = later[:step], later[step:]
        region += added
        live |= {a.work_id for a in added}
        held += [[a.work_id] for a in added]

        got = growing.resolve(region, counts=counts, sizes=sizes, live=live, held=held)

        expected = resolve(region, counts=counts, sizes=sizes)
        assert got.clusters == expected.clusters
        assert growing.reached is not None and live <= growing.reached
        assert got.links == {w: link for w, link in expected.links.items()
                             if w in growing.reached}
        assert growing.candidate_pairs() == blocked(region, counts, sizes)
        held = [list(c) for c in got.clusters]
    assert growing.reached is not None
    assert len(growing.reached) < len(region) / 2  # most stood as they were
    assert any(len(c) > 1 and set(c) & live for c in got.clusters)


def unlike_words(n: int) -> list[str]:
    """``n`` words no two of which are a typo apart (no spelling in common)."""
    words: list[str] = []
    seen: set[str] = set()
    for first in "bcdfgklmnprt":
        for second in "aeiou":
            for third in "bcdfgklmnprt":
                word = f"{first}{second}{third}{second}{first}ton"
                if seen.isdisjoint(spellings(word)):
                    words.append(word)
                    seen |= spellings(word)
                if len(words) == n:
                    return words
    raise AssertionError("too few")


def test_an_atom_added_meets_its_typo_in_a_leave_one_out_block_past_the_cap() -> None:
    # Sixty titles share every word but their last: each word, pair of words, start
    # and the block leaving the last word out are past the cap. Only that block's part
    # of one spelling pairs the misprinted title added last with its paper.
    crowd = [Atom(f"c{n:02d}", (f"Quantum Widget Fabric Lattice {word}",), years=(2020,))
             for n, word in enumerate(unlike_words(60))]
    paper = Atom("paper", ("Quantum Widget Fabric Lattice Zebrafish",), years=(2020,))
    typo = Atom("typo", ("Quantum Widget Fabric Lattice Zebrafsh",), years=(2020,))
    whole = [*crowd, paper, typo]
    counts, sizes = whole_numbers(whole, whole)
    growing = GrowingResolution()
    growing.resolve([*crowd, paper], counts=counts, sizes=sizes)

    got = growing.resolve(whole, counts=counts, sizes=sizes)

    assert growing.candidate_pairs() == blocked(whole, counts, sizes) == {("paper", "typo")}
    assert ("paper", "typo") in got.clusters
