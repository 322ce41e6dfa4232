"""How long ``scholarindex.core.resolution.resolve`` takes on a synthetic set of atoms.

The atoms imitate a crawl of a large bibliography (the size of the DBLP-Scholar
table, 70,000 by default): titles of 3 to 14 words drawn from a Zipf-distributed
vocabulary of 30,000 words (so common words are very common, as in titles), one
to six authors from 40,000 names, years 1985-2015; a tenth of the atoms are
variants of another (a typo, a word dropped, the title cut at its colon, authors
printed as initials) so the decisions see matches, not only rejections.

    python -m bench.resolution_speed [--atoms 70000] [--seed 1]

prints the time per phase (features, blocking, decisions, clustering) and the
candidate pairs; nothing is asserted (``tests/test_resolution_speed.py`` runs a
small set).
"""

from __future__ import annotations

import argparse
import itertools
import random
import string
import time
from dataclasses import replace

from scholarindex.core.resolution import Atom, resolve
from scholarindex.core.resolution.blocking import candidate_pairs_from_titles
from scholarindex.core.resolution.decide import decide_features, features


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 11)))


def synthetic_atoms(count: int, seed: int = 1) -> list[Atom]:
    """``count`` atoms as described in the module doc, the same for the same seed."""
    rng = random.Random(seed)
    vocabulary = [_word(rng) for _ in range(30_000)]
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))
    names = [f"{_word(rng).title()} {_word(rng).title()}" for _ in range(40_000)]
    atoms: list[Atom] = []
    while len(atoms) < count:
        if atoms and rng.random() < 0.1:
            atoms.append(_variant(rng.choice(atoms), rng, len(atoms)))
            continue
        size = rng.randint(3, 14)
        title_words = rng.choices(vocabulary, cum_weights=cumulative, k=size)
        if rng.random() < 0.3:
            title_words[rng.randint(1, size - 1)] += ":"
        authors = tuple(rng.sample(names, rng.randint(1, 6)))
        layout_a = rng.random() < 0.4
        atoms.append(Atom(
            work_id=f"{len(atoms):016x}", titles=(" ".join(title_words).capitalize(),),
            authors=() if layout_a else authors, owners=(authors[0],),
            years=(rng.randint(1985, 2015),), venues=("Proceedings of " + rng.choice(vocabulary),),
        ))
    return atoms


def _variant(atom: Atom, rng: random.Random, number: int) -> Atom:
    title_words = atom.titles[0].split()
    kind = rng.random()
    if kind < 0.4:  # a typo
        k = rng.randrange(len(title_words))
        w = title_words[k]
        if len(w) > 3:
            i = rng.randrange(len(w))
            title_words[k] = w[:i] + w[i + 1:]
    elif kind < 0.7 and len(title_words) > 4:  # a word dropped
        del title_words[rng.randrange(len(title_words))]
    else:  # cut at the colon, or at two thirds
        colon = next((k for k, w in enumerate(title_words) if w.endswith(":")), None)
        cut = colon + 1 if colon is not None else max(3, 2 * len(title_words) // 3)
        title_words = title_words[:cut]
    initials = tuple(f"{n.split()[0][0]}. {n.split()[-1]}" for n in atom.authors or atom.owners)
    return replace(atom, work_id=f"{number:016x}", titles=(" ".join(title_words),),
                   authors=initials, owners=(atom.owners[0],))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--atoms", type=int, default=70_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    atoms = synthetic_atoms(args.atoms, args.seed)
    # CPU seconds of this process: the figure does not depend on what else runs.
    started = time.process_time()
    feats = [features(a) for a in atoms]
    featured = time.process_time()
    pairs = list(candidate_pairs_from_titles([f.titles for f in feats],
                                             [f.surnames for f in feats]))
    blocked = time.process_time()
    matches = sum(decide_features(feats[i], feats[j]).match for i, j in pairs)
    decided = time.process_time()
    print(f"{len(atoms):,} atoms (CPU seconds): features {featured - started:.1f}, blocking "
          f"{blocked - featured:.1f} ({len(pairs):,} candidate pairs), decisions "
          f"{decided - blocked:.1f} ({matches:,} matches)", flush=True)
    _clear_caches()
    started, wall = time.process_time(), time.perf_counter()
    resolution = resolve(atoms)
    elapsed, wall = time.process_time() - started, time.perf_counter() - wall
    joined = sum(len(c) for c in resolution.clusters if len(c) > 1)
    print(f"resolve, caches cleared first: {elapsed:.1f} CPU seconds ({wall:.1f} s wall), "
          f"{len(resolution.clusters):,} works, {joined:,} atoms joined to another")


def _clear_caches() -> None:
    from scholarindex.core.resolution import authors, clean, generic, similarity, venue

    for function in (clean._clean, generic.is_generic_title, similarity.title_words,
                     similarity.variants, similarity.same_word, similarity._numbers_and_years,
                     similarity._typo_targets, similarity._colon_parts,
                     similarity.subtitle_added, similarity.contained, authors._read,
                     venue._forms):
        function.cache_clear()


if __name__ == "__main__":
    main()
