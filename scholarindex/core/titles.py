"""Comparing titles: how alike two titles are, and which of their words tell papers apart.

Shared by arXiv verification (``scholarindex.enrichment.matching``) and work resolution
(``scholarindex.core.resolution``); each states its own thresholds.

* ``title_similarity`` is the Indel similarity (2·longest common subsequence /
  total length; rapidfuzz, bit-parallel C) over the titles' letters and digits once
  folded (``text.words`` joined without spaces), so case, punctuation, dashes,
  accents, LaTeX and "multi-lingual" vs "multilingual" cost nothing, while every
  extra, missing or reordered word does. (It replaced difflib's ratio, 2·matches /
  total length over Ratcliff-Obershelp blocks: the common subsequence is never
  shorter than those blocks, so a figure never falls, and on DBLP-ACM's pairs the
  two agree but for 9 of 2,224, none across a threshold; it is about 100 times
  faster, so no bound is needed before it.)
* ``distinctive_words``: a title's words without function words ("of", "for",
  "via"), a plural read as its singular; ``title_containment`` is the share of one
  title's distinctive words the other holds.
* ``extra_words``: how many words a title adds around the whole of another.
"""

from __future__ import annotations

from functools import lru_cache

from rapidfuzz.distance import Indel

from scholarindex.core import memo
from scholarindex.core.text import words


# Titles are compared with many others (resolution decides each candidate pair): each
# one is folded once, not once a comparison.
@lru_cache(maxsize=memo.TITLES)
def _words(title: str) -> tuple[str, ...]:
    return words(title)


@lru_cache(maxsize=memo.TITLES)
def squashed(title: str) -> str:
    """The title's folded letters and digits with every space and mark left out:
    "Information sharingacrossprivate databases" is "Information Sharing Across
    Private Databases" printed with spaces lost."""
    return "".join(_words(title))


def title_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two titles once folded (see the module doc)."""
    squashed_a, squashed_b = squashed(a), squashed(b)
    if not squashed_a or not squashed_b:
        return 0.0
    return float(Indel.normalized_similarity(squashed_a, squashed_b))


# Words that say nothing about which paper a title names.
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "for", "and", "or", "in", "on", "at", "to", "by", "with", "via",
    "from", "into", "over", "under", "through", "toward", "towards", "using", "based", "is",
    "are", "its", "their", "as", "we", "our", "vs", "versus",
})


# Runs for every candidate the similarity check rejects, mostly on the titles of one
# decision; an entry (a frozenset) is over a kilobyte, so the cache stays small.
@lru_cache(maxsize=2048)
def distinctive_words(title: str) -> frozenset[str]:
    """The words of a title that tell papers apart: no function words, plurals singular."""
    return frozenset(singular(w) for w in words(title) if w not in FUNCTION_WORDS)


def singular(word: str) -> str:
    """A plural read as its singular: "networks" -> "network" ("class" stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def title_containment(listed: str, entry: str) -> float:
    """The share of ``listed``'s distinctive words that ``entry`` holds, in [0, 1]."""
    mine = distinctive_words(listed)
    return len(mine & distinctive_words(entry)) / len(mine) if mine else 0.0


def extra_words(a: str, b: str) -> int:
    """How many words the longer title adds around the whole of the shorter one (0 if not)."""
    short, long = sorted((_words(a), _words(b)), key=len)
    span = len(short)
    if not span or span == len(long):
        return 0
    if any(long[i:i + span] == short for i in range(len(long) - span + 1)):
        return len(long) - span
    return 0
