"""The sizes of the memo caches (``functools.lru_cache``) of titles, words and atoms.

A crawl's index writer keeps these caches for the whole crawl, so their sizes are its
memory budget, with the documents its judgment keeps read (``unresolved.NEIGHBOURS_KEPT``):
a cache sized for more than the writer reuses fills only on a larger crawl, and the
writer's memory grows with the crawl up to it. What the writer reuses is bounded by a
batch and its neighbourhood (the batch's new works, the nearest documents of each,
mostly the last batches' again), not by the index. So each size is about what a crawl
of 1,000 bench-site profiles (20,000 listings) fills, and the writer's memory reaches
its ceiling there; each cache's hits at 1,000 to 10,000 profiles, and what smaller
sizes cost in CPU, are in docs/performance.md ("The writer's memory").
"""

from __future__ import annotations

from typing import Final

# Keyed by one cleaned title, which decisions compare (``similarity``, ``titles``): the
# titles of the documents the judgment keeps read come back batch after batch: at
# 16,384 the writer's CPU over 2,500 profiles rose by 15%. About 1.1 KB a title in all.
TITLES: Final = 24_576
# Keyed by one printed title, read when an atom's features are built: again only when
# ``features`` has let the atom go. At 65,536 about a third of the asks hit; at this
# size 1%, and ``clean._clean`` kept at 24,576 (18% hit) made no difference in CPU.
PRINTINGS: Final = 8_192
# Keyed by one title word (``similarity.variants``: about 1.2 KB). The bench site's
# vocabulary is 1,105 words; real titles' grows with the crawl, so it is bounded too.
WORDS: Final = 16_384
WORD_PAIRS: Final = 32_768  # keyed by two title words (``same_word``): 83% hit
# Keyed by one atom (``decide.features``: about 2 KB with the atom it pins); a crawl's
# 1,000 bench-site profiles make about 20,000. With this and ``TITLES`` at 32,768 the
# writer used 14% less CPU over 3,000 profiles, and its memory grew from 1,000 to 3,000
# profiles by 67 MB instead of 17: the budget is the trade.
ATOMS: Final = 20_480
NAMES: Final = 16_384  # keyed by one printed name
