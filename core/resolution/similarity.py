"""How alike two cleaned titles are, surviving typos, truncation and word order.

A title is read as its folded words (``core.text.words``), plurals as singular
(``core.titles.singular``). Two measures, the larger wins:

* **Soft word overlap** (Dice): 2·matched / (words of a + words of b), where a
  word matches an equal word of the other title, or failing that a word within
  edit distance 1 (both at least ``TYPO_MIN_LENGTH`` = 4 letters) or 2 (both at
  least 9 letters): "Sytems" is "Systems", "Databse" is "Database". Order does
  not count, so moved words cost nothing.
* **Letter ratio**: ``core.titles.title_similarity`` (difflib over the letters),
  which sees words split or joined ("data base" / "database"). It is quadratic,
  so it runs only when the overlap is at least ``RATIO_FROM`` (0.6) and below 1.

``TitleMatch.prefix`` is true when the shorter title (at least
``PREFIX_MIN_WORDS`` = 3 distinctive words) is, word for word with the same
tolerance, the start of the longer one, or the longer one's part before or after
its first colon: a title cut short, or a subtitle dropped or added. ``extra`` is
how many words the longer title has beyond the shorter one.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from core.text import words
from core.titles import FUNCTION_WORDS, singular, title_similarity

TYPO_MIN_LENGTH = 4
LONG_WORD = 9
RATIO_FROM = 0.6
PREFIX_MIN_WORDS = 3


@dataclass(frozen=True)
class TitleMatch:
    """The similarity of two titles in [0, 1] and whether one is a cut-short other."""

    score: float
    prefix: bool
    extra: int


@lru_cache(maxsize=131_072)
def title_words(title: str) -> tuple[str, ...]:
    """The title's comparison words: folded, plurals singular."""
    return tuple(singular(w) for w in words(title))


@lru_cache(maxsize=131_072)
def _colon_parts(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    head, sep, tail = title.partition(":")
    return (title_words(head), title_words(tail)) if sep else ((), ())


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether the edit distance of ``a`` and ``b`` is at most ``limit`` (small limits)."""
    if abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


@lru_cache(maxsize=262_144)
def same_word(a: str, b: str) -> bool:
    """Equal, or one typo apart (see the module doc)."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < TYPO_MIN_LENGTH:
        return False
    return within_edits(a, b, 2 if shorter >= LONG_WORD else 1)


def soft_overlap(a: tuple[str, ...], b: tuple[str, ...], at_least: int = 0) -> int:
    """How many words of ``a`` match a distinct word of ``b`` (equal first, then typos).

    When even matching every leftover word cannot reach ``at_least``, the count of
    equal words is returned without looking for typos (most candidate pairs).
    """
    common = Counter(a) & Counter(b)
    matched = sum(common.values())
    left_a = list((Counter(a) - common).elements())
    left_b = list((Counter(b) - common).elements())
    if not left_a or not left_b or matched + min(len(left_a), len(left_b)) < at_least:
        return matched
    for word in left_a:
        for k, other in enumerate(left_b):
            if abs(len(word) - len(other)) <= 2 and same_word(word, other):
                del left_b[k]
                matched += 1
                break
    return matched


def _is_start(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    if len(short) > len(long):
        return False
    return all(same_word(x, y) for x, y in zip(short, long[: len(short)], strict=True))


def _prefix(a: str, b: str, wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    (short, short_title), (long, long_title) = sorted(((wa, a), (wb, b)), key=lambda p: len(p[0]))
    if len([w for w in short if w not in FUNCTION_WORDS]) < PREFIX_MIN_WORDS:
        return False
    if same_word(short[0], long[0]) and _is_start(short, long):
        return True
    head, tail = _colon_parts(long_title)
    if head and (head == short or tail == short):
        return True
    head, tail = _colon_parts(short_title)  # both have subtitles, one subtitle dropped
    return bool(head) and head == long[: len(head)] and len(head) >= PREFIX_MIN_WORDS


def compare_titles(a: str, b: str) -> TitleMatch:
    """The ``TitleMatch`` of two cleaned titles (see the module doc)."""
    wa, wb = title_words(a), title_words(b)
    if not wa or not wb:
        return TitleMatch(0.0, False, 0)
    if wa == wb:
        return TitleMatch(1.0, False, 0)
    total = len(wa) + len(wb)
    score = 2 * soft_overlap(wa, wb, at_least=math.ceil(RATIO_FROM * total / 2)) / total
    if RATIO_FROM <= score < 1.0:
        score = max(score, title_similarity(a, b))
    extra = abs(len(wa) - len(wb))
    return TitleMatch(score, extra > 0 and _prefix(a, b, wa, wb), extra)
