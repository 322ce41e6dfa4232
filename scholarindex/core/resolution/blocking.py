"""Blocking: which pairs of atoms are worth a decision.

Comparing every pair is quadratic (70,000 atoms: 2.4 billion pairs). A pair is a
candidate when the two atoms share a rare title word and another, so typos,
truncation and word order all survive:

* every atom is indexed under each distinctive word of its cleaned titles
  (``similarity.title_words`` without function words) that at most
  ``MAX_POSTING`` (50) atoms hold: a word more atoms share tells little, and the
  cap keeps the work linear in the number of atoms;
* each atom looks up its ``RARE_WORDS`` (3) rarest such words (by ``rarity``, ties by
  the word) and pairs with every atom found there that shares at least half
  (``SHARED_SHARE``) of the shorter title's distinctive words and at least
  ``MIN_SHARED`` (2; all of them when a title has fewer): two titles sharing less
  cannot reach the decision's thresholds unless most of their words are typos;
* atoms whose titles have fewer than two usable rare words (generic or very
  short titles; a word no other atom holds is not usable: it finds nothing, and is
  often a typo) are paired through their whole folded title (``title_key``, as
  every atom is, below), in blocks of at most ``MAX_POSTING``, and through that
  title plus each of their people's surnames, so that a title thousands of profiles
  print ("Introduction") still brings together the listings that share a person,
  the only ones such a title may join (``decide``);
* **typos in short titles**: a title of at most ``TYPO_KEY_WORDS`` (2) distinctive
  words with one misspelt has too few left to share, and the word it should be
  may be too common to block on; such titles are also paired through each word
  in turn spelt with one letter dropped (``similarity.variants``: two words one typo
  apart share one), beside the other: "Altruistic lokcing" and "Altruistic Locking"
  meet at "altruistic loking". A title of ``LEAVE_ONE_OUT_WORDS`` (4) distinctive
  words or more is filed under its words with each in turn left out: a typo in its
  only rare word leaves it nothing rare to share where every other word, pair of
  words and start is common (a large crawl, a small vocabulary), and the rest of the
  title still is. Such a block past the cap (the title without its acronym, one per
  acronym) still pairs the members whose left-out words are a typo apart: it is
  split by each spelling of the left-out word (``near_blocks``: a word and its
  spellings with one letter dropped, as above), each part capped alike. These blocks
  and the whole-title ones hold the printings of one title, as many in any crawl:
  their cap does not scale;
* **titles printed with their spaces lost** ("Approximatemediansandother
  quantilesinonepass and with limited memory"): glued, their words are none of the
  other printing's, so every atom is paired through its whole folded titles
  (``title_key``: letters and digits alone, spaces and marks left out), not only those
  with too little rare text;
* **combined keys**, for titles whose words are all common (in a large crawl
  "query", "optimization", "distributed" each sit in thousands of atoms, beyond
  the cap): every atom is also filed under each pair of its ``PAIR_WORDS`` (3)
  rarest words that other atoms hold too (one more for a title of
  ``LONG_TITLE_WORDS`` (6) distinctive words or more: its rarest may all be words
  the other printing cut off or reworded), whatever their postings, and under each
  title's first ``PREFIX_WORDS`` (3) distinctive words in order (a title cut short,
  or with words glued at its end, keeps its start); where a title has a fourth,
  under each three of its first four in order, so a typo in one of them (a word no
  other atom holds) leaves a start in common. A pair of common words is rare
  where each alone is not. Blocks of at most ``MAX_POSTING`` atoms pair their
  members under the same share test as above; a pair's block is sized by every
  atom holding both words, filed under it or not (``pair_keys``), which a part of
  the set can count through the index. At most 10 keys per title: still
  linear. (Measured by capping postings as a large crawl would fill them:
  ``docs/resolution.md``.)

Deterministic: the pairs depend only on the atoms, each (i, j) is yielded once,
i < j, in increasing order.

**Rarity is coarse** (``rarity``: a word's count on a scale of ``RARITY_STEPS`` ranks
per doubling, ties by the word): a word's rank moves only when its count crosses a
step, about 19% apart, so atoms added to a large set change few other atoms' choices,
and an incremental pass can tell which words may have moved (``crossed``) rather than
re-reading every atom that shares a word with a change. A word's chance to cross
falls as its count grows while the atoms to re-read grow with it: the work per change
stays about the same at any size.

**A part of a larger set** (the incremental pass, ``scholarindex.indexing.resolution``):
``counts`` gives each word's number of atoms in the whole index and ``block_sizes`` each
block's (by ``block_name``), so the rarity, usability and caps above are read as over the
whole set while only the atoms given are paired. ``stored_keys`` are the keys that do not
depend on counts (words, whole titles, typo keys, title starts): the index stores them
on each work document, and the pass finds an atom's blocking neighbours by querying them.
The parts of a leave-one-out block past the cap are not stored: a holder of the block
holds its left-out word's key (``w:``) besides, so the index can tell them apart.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from scholarindex.core.identity import title_key
from scholarindex.core.resolution.decide import features
from scholarindex.core.resolution.model import Atom
from scholarindex.core.resolution.similarity import title_variants, title_words, variants
from scholarindex.core.titles import FUNCTION_WORDS

RARE_WORDS = 3
MIN_SHARED = 2
SHARED_SHARE = 0.5
MAX_POSTING = 50
PAIR_WORDS = 3
PREFIX_WORDS = 3
TYPO_KEY_WORDS = 2
LEAVE_ONE_OUT_WORDS = 4
LONG_TITLE_WORDS = 6
RARITY_STEPS = 4  # ranks per doubling of a word's count: 2 ** (1/4), about 19% apart


def words_needed(a: int, b: int) -> int:
    """Distinctive words two titles of ``a`` and ``b`` words must share to be paired
    through a word or a combined key (not through a block of whole titles or typos)."""
    shorter = min(a, b)
    return min(shorter, max(MIN_SHARED, math.ceil(SHARED_SHARE * shorter)))


def rarity(count: int) -> int:
    """How rare a word held by ``count`` atoms is when an atom picks its rarest words
    (smaller is rarer): ``floor(RARITY_STEPS * log2(count))``, in integers (see the
    module doc). Counts up to 6 keep ranks of their own."""
    return (count ** RARITY_STEPS).bit_length() - 1 if count > 0 else -1


def crossed(low: int, high: int, max_posting: int = MAX_POSTING) -> bool:
    """Whether blocking may read a word differently at some count from ``low`` to
    ``high``: its ``rarity``, whether another atom holds it, or whether it is under
    the posting cap."""
    return (rarity(low) != rarity(high) or (low > 1) != (high > 1)
            or (low <= max_posting) != (high <= max_posting))


def rare_words(words: Iterable[str], held: Mapping[str, int], limit: int = MAX_POSTING
               ) -> list[str]:
    """An atom's words that block (another atom holds each, at most ``limit`` do), rarest
    first (``rarity``, ties by the word): it looks up the first ``RARE_WORDS``."""
    return [w for _, w in sorted((rarity(held[w]), w) for w in words if 1 < held[w] <= limit)]


def pair_words(words: Iterable[str], held: Mapping[str, int]) -> list[str]:
    """The words an atom's combined keys pair: its ``PAIR_WORDS`` rarest that another atom
    holds too (a word of its own finds none), one more for a long title."""
    words = list(words)
    take = PAIR_WORDS + (len(words) >= LONG_TITLE_WORDS)
    return sorted((w for w in words if held[w] > 1), key=lambda w: (rarity(held[w]), w))[:take]


def lookups(words: Iterable[str], held: Mapping[str, int]
            ) -> tuple[frozenset[str], bool, frozenset[str]]:
    """What of an atom's blocking the counts decide (``held``: word -> atoms): the words
    it looks up, whether it blocks on its whole title instead, and the words its
    combined keys pair. Two counts that give the same lookups give the same pairs but
    for the blocks' caps."""
    words = list(words)
    usable = rare_words(words, held)
    return frozenset(usable[:RARE_WORDS]), len(usable) < 2, frozenset(pair_words(words, held))


def title_terms(titles: Sequence[str]) -> set[str]:
    """The distinctive words of cleaned titles (no function words, plurals singular)."""
    return {w for t in titles for w in title_words(t) if w not in FUNCTION_WORDS and len(w) > 1}


def word_key(word: str) -> str:
    """A word's name among the stored keys."""
    return "w:" + word


def block_name(key: str | tuple[str, ...]) -> str:
    """A block's name among the stored keys: a whole title (with a surname), a typo key,
    a title's start (``">"``) or a pair of rare words (``"&"``, never stored: which pairs
    an atom files under depends on counts)."""
    if isinstance(key, tuple):
        return f"{key[0]}:{' '.join(key[1:])}"
    return "x:" + key


def stored_keys(titles: Sequence[str], surnames: Iterable[str] = ()) -> set[str]:
    """The atom's keys that do not depend on any count (see the module doc): every block
    it may be filed under but the pairs of rare words, and each distinctive word."""
    filing = Filing.of_titles(titles, surnames)
    return {*map(word_key, filing.terms), *filing.titles, *filing.people, *filing.typos,
            *filing.starts}


class _Counted(dict[str, int]):
    """Counts over the whole set where known (``known``), else the atoms' own."""

    def __init__(self, local: Mapping[str, int], known: Mapping[str, int] | None):
        super().__init__(local)
        if known:
            self.update((k, v) for k, v in known.items() if k in local)


def candidate_pairs_from_titles(titles: Sequence[Sequence[str]],
                                surnames: Sequence[Iterable[str]] | None = None,
                                max_posting: int = MAX_POSTING,
                                counts: Mapping[str, int] | None = None,
                                block_sizes: Mapping[str, int] | None = None,
                                filings: Sequence[Filing] | None = None,
                                ) -> Iterator[tuple[int, int]]:
    """``candidate_pairs`` over each atom's cleaned titles (and its people's surnames).

    ``counts`` (word -> atoms holding it) and ``block_sizes`` (``block_name`` -> atoms filed
    under it): over a larger set than these atoms (see the module doc); by default
    these atoms' own. ``filings``: each atom's keys, where the caller holds them (the
    incremental pass keeps those of every document it read); else worked out here."""
    limit = max_posting
    if filings is None:
        filings = [Filing.of_titles(t, s) for t, s in zip(titles, surnames or [()] * len(titles),
                                                        strict=True)]
    terms = [f.terms for f in filings]
    postings: dict[str, list[int]] = defaultdict(list)
    for i, words in enumerate(terms):
        for word in words:
            postings[word].append(i)
    held = _Counted({w: len(p) for w, p in postings.items()}, counts)
    # Whole-title and typo blocks: most keys are one atom's own (40,000 atoms file some
    # 550,000), so a key's one member is kept as is, a list only from the second on.
    exact: dict[str, int | list[int]] = {}
    pairs: set[tuple[int, int]] = set()
    longest = max((len(t) for t in terms), default=0)
    needed = [words_needed(n, n) for n in range(longest + 1)]  # by the shorter title's size
    sizes = [len(t) for t in terms]
    for i, words in enumerate(terms):
        usable = rare_words(words, held, limit)
        for key in filings[i].titles:  # a title printed with its spaces lost still meets
            _file(exact, key, i)
        if len(usable) < 2:  # too little rare text to block on: with its people too
            for key in filings[i].people:
                _file(exact, key, i)
        for key in filings[i].typos:
            _file(exact, key, i)
        seen = {i}
        size = sizes[i]
        for word in usable[:RARE_WORDS]:
            for j in postings[word]:
                if j in seen:
                    continue
                seen.add(j)
                if len(words & terms[j]) >= needed[min(size, sizes[j])]:
                    pairs.add((i, j) if i < j else (j, i))
    for key, members in exact.items():  # a title's printings: as many in a crawl of any size
        if not isinstance(members, list):
            continue
        if _size(key, members, block_sizes) <= MAX_POSTING:
            _pair_all(members, pairs)
        elif is_left_out(key):  # past the cap: members whose left-out words are a typo apart
            for near, parts in _near_parts(key, members, titles).items():
                if len(parts) > 1 and _size(near, parts, block_sizes) <= MAX_POSTING:
                    _pair_all(parts, pairs)
    held_by: dict[str, set[int]] = {}
    for combined, members in _combined_keys(filings, held).items():
        if len(members) < 2 or _size(combined, members, block_sizes) > limit:
            continue
        # A pair's block is sized by every atom holding both words (``pair_keys``).
        if is_pair_key(combined) and _both_past(postings, pair_key_words(combined), limit,
                                                held_by):
            continue
        for x, i in enumerate(members):
            for j in members[x + 1:]:
                if i != j and len(terms[i] & terms[j]) >= needed[min(sizes[i], sizes[j])]:
                    pairs.add((i, j) if i < j else (j, i))
    yield from sorted(pairs)


class Filing(NamedTuple):
    """An atom's ``stored_keys`` by what blocking does with each."""

    terms: AbstractSet[str]  # its distinctive words (``w:``)
    titles: tuple[str, ...]  # its whole titles (``title_key``)
    people: tuple[str, ...]  # each with each surname: filed if it has few rare words
    typos: tuple[str, ...]  # its typo and leave-one-out keys
    starts: tuple[str, ...]  # its titles' starts (``>:``): combined keys

    @classmethod
    def of(cls, keys: Iterable[str], terms: AbstractSet[str] | None = None) -> Filing:
        """``terms``: the words of the ``w:`` keys, where the caller holds them."""
        keys = tuple(keys)
        if terms is None:
            terms = {k[2:] for k in keys if k.startswith("w:")}
        whole = [k for k in keys if k.startswith("x:") and not k.startswith(_TYPOS)]
        return cls(terms, tuple(k for k in whole if "|" not in k),
                   tuple(k for k in whole if "|" in k),
                   tuple(k for k in keys if k.startswith(_TYPOS)),
                   tuple(k for k in keys if k.startswith(">:")))

    @classmethod
    def of_titles(cls, titles: Sequence[str], surnames: Iterable[str] = ()) -> Filing:
        terms = title_terms(titles)
        keys = [title_key(title) for title in titles]
        names = list(surnames)
        return cls(terms, tuple(block_name(key) for key in keys),
                   tuple(block_name(f"{key}|{name}") for key in keys for name in names),
                   tuple(map(block_name, _typo_keys(titles))),
                   tuple(map(block_name, _start_keys(titles, terms))))


_TYPOS = ("x:~", "x:-")  # ``block_name``s of typo keys (``_typo_keys``)


def _pair_all(members: list[int], pairs: set[tuple[int, int]]) -> None:
    for x, i in enumerate(members):
        for j in members[x + 1:]:
            if i != j:
                pairs.add((i, j) if i < j else (j, i))


def _near_parts(key: str, members: list[int], titles: Sequence[Sequence[str]]
                ) -> dict[str, list[int]]:
    """A leave-one-out block's members by each spelling of their left-out words."""
    parts: dict[str, list[int]] = defaultdict(list)
    for i in members:
        for near in near_blocks(key, left_out_words(titles[i], key)):
            parts[near].append(i)
    return parts


def _file(blocks: dict[str, int | list[int]], key: str, member: int) -> None:
    found = blocks.get(key)
    if found is None:
        blocks[key] = member
    elif isinstance(found, int):
        blocks[key] = [found, member]
    else:
        found.append(member)


def _both_past(postings: Mapping[str, list[int]], words: Sequence[str], limit: int,
               held_by: dict[str, set[int]]) -> bool:
    """Whether more than ``limit`` atoms hold both words (``held_by``: a cache of sets)."""
    fewer, more = sorted(words, key=lambda w: len(postings[w]))
    if len(postings[fewer]) <= limit:
        return False
    if more not in held_by:
        held_by[more] = set(postings[more])
    larger = held_by[more]
    both = 0
    for i in postings[fewer]:
        if i in larger:
            both += 1
            if both > limit:
                return True
    return False


def _size(name: str, members: list[int], sizes: Mapping[str, int] | None) -> int:
    if sizes is None:
        return len(members)
    return max(len(members), sizes.get(name, 0))


def pair_keys(words: Iterable[str], held: Mapping[str, int]) -> set[str]:
    """The combined keys of pairs of rare words an atom files under (``block_name``s).

    Such a block is sized by the atoms holding both words, whether or not the pair is
    among their rarest: a number the index can count from the stored word keys, so a
    part of the set (the incremental pass, the judgment of new works) caps a block as
    the whole set does, where counting only the atoms filed under it would need every
    holder's words and counts."""
    return {pair_key(*pair) for pair in itertools.combinations(pair_words(words, held), 2)}


def pair_key(first: str, second: str) -> str:
    """The name of the block of a pair of words (``"&:a b"``)."""
    return block_name(("&", *sorted((first, second))))


def is_pair_key(key: str) -> bool:
    return key.startswith("&:")


def pair_key_words(key: str) -> list[str]:
    """The two words of a ``pair_keys`` key."""
    return key[2:].split(" ")


def _typo_keys(titles: Sequence[str]) -> set[str]:
    """Keys that survive one typo (see the module doc): in a short title each word in turn
    replaced by its spellings with at most one letter dropped, beside the other words;
    in a long one, the other words alone."""
    keys = set()
    for title in titles:
        words = sorted(title_terms([title]))
        if len(words) >= LEAVE_ONE_OUT_WORDS:  # one word misspelt or swapped: the rest
            keys |= {"-" + " ".join(words[:at] + words[at + 1:]) for at in range(len(words))}
        if not words or len(words) > TYPO_KEY_WORDS:
            continue
        for at, word in enumerate(words):
            rest = words[:at] + words[at + 1:]
            # Stored: ``variants``, as documents already written hold them.
            keys |= {"~" + " ".join(sorted([*rest, spelling]))
                     for spelling in variants(word) or (word,)}
    return keys


def is_left_out(key: str) -> bool:
    """Whether a typo key is a title with one word left out (``block_name``: ``"x:-..."``)."""
    return key.startswith(("-", "x:-"))


def left_out_blocks(titles: Sequence[str]) -> dict[str, set[str]]:
    """Each leave-one-out block the atom is filed under (its ``block_name``), with the
    words it leaves out there."""
    blocks: dict[str, set[str]] = {}
    for title in titles:
        words = sorted(title_terms([title]))
        if len(words) >= LEAVE_ONE_OUT_WORDS:
            for at, word in enumerate(words):
                blocks.setdefault(block_name("-" + " ".join(words[:at] + words[at + 1:])),
                                  set()).add(word)
    return blocks


def left_out_words(titles: Sequence[str], key: str) -> set[str]:
    """The atom's words that, left out of one of its titles, give the leave-one-out key
    ``key`` (with or without its ``"x:"``)."""
    rest = key[key.index("-") + 1:].split(" ")
    found: set[str] = set()
    for title in titles:
        words = title_terms([title])
        if len(words) == len(rest) + 1 and words.issuperset(rest):
            found |= words.difference(rest)
    return found


def spellings(word: str) -> frozenset[str]:
    """A word and its spellings with one letter dropped (a short word: as printed), and
    those of it printed with an "s" after it (``similarity.title_variants``): two words a
    typo apart share one."""
    return title_variants(word) or frozenset((word,))


def near_blocks(key: str, words: Iterable[str]) -> set[str]:
    """The parts of the leave-one-out block ``key`` an atom whose left-out words are
    ``words`` is in: one per spelling of each (``"-rest~spelling"``)."""
    return {f"{key}~{spelling}" for word in words for spelling in spellings(word)}


def near_block_key(near: str) -> str:
    """The leave-one-out key of a part (``near_blocks``)."""
    return near[:near.rindex("~")]


def _start_keys(titles: Sequence[str], words: set[str]) -> set[tuple[str, ...]]:
    """Each title's first ``PREFIX_WORDS`` distinctive words in order (each 3 of the first 4)."""
    keys: set[tuple[str, ...]] = set()
    for title in titles:
        start = [w for w in title_words(title) if w in words][:PREFIX_WORDS + 1]
        if len(start) > PREFIX_WORDS:  # one word left out in turn: it may hold a typo
            keys |= {(">", *start[:k], *start[k + 1:]) for k in range(len(start))}
        elif len(start) == PREFIX_WORDS:
            keys.add((">", *start))
    return keys


def _combined_keys(filings: Sequence[Filing], held: Mapping[str, int]
                   ) -> dict[str, list[int]]:
    """Keys that stay rare when every word of a title is common (see the module doc):
    each pair of the atom's ``PAIR_WORDS`` rarest words, and each title's first
    ``PREFIX_WORDS`` distinctive words in order (each 3 of the first 4), by name."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for i, filing in enumerate(filings):
        pairs = itertools.combinations(pair_words(filing.terms, held), 2)
        keys = {pair_key(*pair) for pair in pairs}
        keys.update(filing.starts)
        for key in keys:
            blocks[key].append(i)
    return blocks


def candidate_pairs(atoms: Sequence[Atom], max_posting: int = MAX_POSTING
                    ) -> Iterator[tuple[int, int]]:
    """Index pairs (i, j), i < j, of atoms worth comparing (see the module doc).
    ``max_posting``: the cap (a smaller one imitates a larger crawl's postings)."""
    feats = [features(a) for a in atoms]
    yield from candidate_pairs_from_titles([f.titles for f in feats],
                                           [f.surnames for f in feats], max_posting)
