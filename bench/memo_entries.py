"""Bytes an entry of the title caches holds: ``python -m bench.memo_entries``.

Builds the features (``decide.features``) of the atoms of the first ``--listings``
listings of a bench site (``bench.judgment``'s), one listing a document, and measures
with ``tracemalloc`` what that holds, then, caches emptied, what each per-title or
per-word memo cache holds once asked about every cleaned title (or title word) of
them: its entries' keys and values and the cache's own bookkeeping. No node.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from bench.judgment import listings, memo_caches
from scholarindex.core import titles
from scholarindex.core.resolution import clean, generic, similarity
from scholarindex.core.resolution.decide import Features, features
from scholarindex.core.text import words
from scholarindex.indexing.atoms import atoms_of


def held(call: Callable[[Any], object], args: Sequence[Any]) -> float:
    """Bytes still allocated after ``call`` on each of ``args``, per argument."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for arg in args:
        call(arg)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / max(1, len(args))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memo_entries", description=__doc__)
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--listings", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    items = listings(args.profiles, args.seed)[:args.listings]
    atoms = [atom for item in items for atom in atoms_of([{"work_id": item["work_id"],
                                                           "listings": [item]}])]
    for function in memo_caches().values():
        function.cache_clear()
    built: list[Features] = []
    print(f"features_and_what_it_caches {held(lambda a: built.append(features(a)), atoms):.0f}")
    cleaned = sorted({title for f in built for title in f.titles})
    for function in memo_caches().values():
        if function is not features:
            function.cache_clear()
    for name, function in (("text.words", words), ("similarity.title_words",
                                                   similarity.title_words),
                           ("titles._words", titles._words),
                           ("titles.squashed", titles.squashed),
                           ("similarity._first_words", similarity._first_words),
                           ("similarity._numbers_and_years", similarity._numbers_and_years),
                           ("similarity.follow_up", similarity.follow_up),
                           ("generic.is_generic_title", generic.is_generic_title),
                           ("clean.contribution_kind", clean.contribution_kind)):
        print(f"{name} {held(function, cleaned):.0f}")
    vocabulary = sorted({w for title in cleaned for w in similarity.title_words(title)})
    print(f"similarity.variants {held(similarity.variants, vocabulary):.0f}")
    print(f"titles {len(cleaned)} words {len(vocabulary)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
