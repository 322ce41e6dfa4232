"""``resolve`` again and again over a set of atoms that only grows.

An incremental pass widens its region in rounds and resolves it after each: a few
hundred atoms more out of tens of thousands. Three facts make most of a round the
round before's:

* **Blocking is pairwise.** Given the whole set's numbers (``counts``: word -> atoms;
  ``sizes``: block -> atoms), whether two atoms are a candidate pair depends on their
  own keys and those numbers alone (``blocking``'s module doc). A pair of two atoms
  that are not new, and hold no word or key whose number moved, is proposed as
  before; the pairs of the others are found by blocking them with every atom they
  share a key with.
* **A decision reads its two atoms alone**, so it is kept while both are.
* **Clustering is local to what matches connect** (``cluster``'s steps): atoms no chain
  of matches or must-links connects are never joined, and what happens inside such a
  component reads nothing outside it. A component none of whose atoms or matches
  changed is clustered as before.

``GrowingResolution.resolve`` gives what ``cluster.resolve`` gives on the same atoms
(a property test holds it to that); its first call is ``cluster.resolve``'s work.

Given ``live`` (an incremental pass: the atoms a change may concern), a call decides
only what those can reach: the pairs of the atoms ``live`` reaches through matches and
must-links. Every other atom is grouped as ``held`` says, which is what deciding its
pairs would give where, as the caller vouches, each pair of two such atoms is decided
as at the caller's last resolution and the groups are that resolution's.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from scholarindex.core.collector import cycle_collector_paused
from scholarindex.core.resolution.blocking import (
    MAX_POSTING,
    Filing,
    candidate_pairs_from_titles,
    crossed,
    is_left_out,
    is_pair_key,
    near_block_key,
    pair_key,
    pair_key_words,
    pair_words,
)
from scholarindex.core.resolution.cluster import _pool, _sharing_a_key, clustered
from scholarindex.core.resolution.decide import Features, decide_features, features
from scholarindex.core.resolution.model import Atom, Decision, Link, Resolution

_LOW = (1 << 32) - 1


def _key(a: int, b: int) -> int:
    """Two atoms' numbers as one int, the smaller first."""
    return a << 32 | b if a < b else b << 32 | a


class GrowingResolution:
    """``cluster.resolve`` over the atoms of each call, each a superset of the last,
    redoing only what the atoms added (or whose numbers moved) can change.

    ``counts`` and ``sizes`` (blocking's, over a whole the atoms are part of) must
    cover every word and key of the atoms, as an incremental pass's do; where they do
    not, or the operators' links changed, a call blocks and clusters everything (keeping
    the decisions still valid). ``counts`` is kept until the next call, which compares
    its own with it: give each call a mapping of its own, not the last one changed; so is
    ``sizes``, unless the call is told which of its blocks moved (``sizes_moved``)."""

    def __init__(self, *, judge: Callable[[Features, Features], Decision] = decide_features,
                 features_of: Callable[[Atom], Features] = features,
                 filing_of: Callable[[Atom], Filing] | None = None):
        self._judge = judge
        self._features_of = features_of
        self._filing_of = filing_of or (lambda a: Filing.of_titles(
            features_of(a).titles, features_of(a).surnames))
        self._number: dict[str, int] = {}  # work_id -> its number, for good
        self._atoms: dict[int, Atom] = {}  # number -> its atom at the last call
        self._work_ids: list[str] = []  # number -> work_id
        self._decided: dict[int, Decision] = {}  # the last call's decided pairs (``_key``)
        self._pairs: set[int] | None = None  # its candidate pairs, where it left some undecided
        self._counts: Mapping[str, int] | None = None
        self._sizes: Mapping[str, int] = {}
        self._links_given: tuple[frozenset[tuple[str, str]], ...] | None = None
        self._cluster_of: dict[int, tuple[str, ...]] = {}  # number -> its work
        self._links: dict[str, Link] = {}
        # What the last call did, for the log: its atoms, how many it blocked and
        # clustered again (all of them where it could not tell), how many were new.
        self.redone = ""
        self.reached: frozenset[str] | None = None  # with ``live``: whose pairs it decided

    def resolve(self, atoms: Iterable[Atom], *, must_link: Iterable[tuple[str, str]] = (),
                cannot_link: Iterable[tuple[str, str]] = (),
                counts: Mapping[str, int] | None = None,
                sizes: Mapping[str, int] | None = None,
                sizes_moved: AbstractSet[str] | None = None,
                live: AbstractSet[str] | None = None,
                held: Iterable[Iterable[str]] = ()) -> Resolution:
        """``sizes_moved``: where the caller keeps one ``sizes`` up to date in place (a
        region's blocks run to hundreds of thousands: a copy a round costs memory), the
        blocks it held at the last call whose size crossed a cap since (``crossed_cap``);
        else ``sizes`` is compared with the last call's.

        ``live`` and ``held`` (work_ids): decide only what ``live`` reaches and group the
        rest as ``held`` (the module doc); ``reached`` says which atoms that was."""
        with cycle_collector_paused():
            return self._resolve(atoms, frozenset(must_link), frozenset(cannot_link),
                                 counts, sizes, sizes_moved, live, held)

    def _resolve(self, atoms: Iterable[Atom], must: frozenset[tuple[str, str]],
                 cannot: frozenset[tuple[str, str]], counts: Mapping[str, int] | None,
                 sizes: Mapping[str, int] | None,
                 sizes_moved: AbstractSet[str] | None, live: AbstractSet[str] | None,
                 held: Iterable[Iterable[str]]) -> Resolution:
        pooled = _pool(atoms)
        feats = [self._features_of(a) for a in pooled]
        filings = [self._filing_of(a) for a in pooled]
        numbers = [self._numbered(a.work_id) for a in pooled]
        fresh = {i for i, n in enumerate(numbers)
                 if (old := self._atoms.get(n)) is not pooled[i] and old != pooled[i]}
        grown = len(numbers) - len(fresh) == len(self._atoms)  # every atom before still here
        again = None
        if grown and counts is not None and sizes is not None and self._counts is not None:
            again = self._pairs_again(pooled, feats, filings, numbers, fresh, counts, sizes,
                                      sizes_moved)
        if again is None:
            pairs, blocked = set(candidate_pairs_from_titles(
                [f.titles for f in feats], [f.surnames for f in feats],
                counts=counts, block_sizes=sizes,
                filings=filings)), len(pooled)
        else:
            pairs, blocked = again
        pairs |= _sharing_a_key(pooled)
        fresh_numbers = {numbers[i] for i in fresh}
        if live is not None:
            return self._reach(pooled, feats, numbers, pairs, fresh_numbers, must, cannot,
                               live, held, counts, sizes, sizes_moved,
                               f"{len(pooled)} atoms, {len(fresh)} new, {blocked} blocked")
        before = self._decided
        decided: dict[int, Decision] = {}
        # In order, so that one atom's pairs are decided one after another (``resolve``).
        for i, j in sorted(pairs):
            key = _key(numbers[i], numbers[j])
            found = before.get(key)
            if found is None or numbers[i] in fresh_numbers or numbers[j] in fresh_numbers:
                found = self._judge(feats[i], feats[j])
            decided[key] = found
        del pairs  # hundreds of thousands of tuples: not held while clustering
        links_given = (must, cannot)
        redone = None
        if grown and self._links_given == links_given and self._cluster_of:
            touched = fresh_numbers | {n for key in before.keys() ^ decided.keys()
                                       if (before.get(key) or decided[key]).match
                                       for n in (key >> 32, key & _LOW)}
            redone = self._recluster(pooled, feats, numbers, decided, touched, must, cannot)
        if redone is not None:
            resolution, reclustered = redone
        else:
            reclustered = len(pooled)
            index = {n: i for i, n in enumerate(numbers)}
            resolution = clustered(pooled, feats, {
                (index[k >> 32], index[k & _LOW]) if index[k >> 32] < index[k & _LOW]
                else (index[k & _LOW], index[k >> 32]): d for k, d in decided.items()},
                must, cannot)
            self._cluster_of = {self._number[w]: c for c in resolution.clusters for w in c}
            self._links = dict(resolution.links)
        self._atoms = dict(zip(numbers, pooled, strict=True))
        self.redone = (f"{len(pooled)} atoms, {len(fresh)} new, {blocked} blocked and "
                       f"{reclustered} clustered again")
        self._decided, self._pairs, self.reached = decided, None, None
        self._counts, self._sizes = counts, {} if sizes_moved is not None else sizes or {}
        self._links_given = links_given
        return resolution

    def _reach(self, pooled: Sequence[Atom], feats: Sequence[Features], numbers: Sequence[int],
               pairs: set[tuple[int, int]], fresh: set[int], must: frozenset[tuple[str, str]],
               cannot: frozenset[tuple[str, str]], live: AbstractSet[str],
               held: Iterable[Iterable[str]], counts: Mapping[str, int] | None,
               sizes: Mapping[str, int] | None, sizes_moved: AbstractSet[str] | None,
               redone: str) -> Resolution:
        """``resolve`` given ``live``: decide the pairs of the atoms it reaches through
        matches and must-links (keeping the last call's decisions of atoms not new),
        cluster those atoms, and group the others as ``held``."""
        partners: dict[int, list[int]] = defaultdict(list)
        keys = set()
        for i, j in pairs:
            a, b = numbers[i], numbers[j]
            keys.add(_key(a, b))
            partners[a].append(b)
            partners[b].append(a)
        del pairs
        index = {n: i for i, n in enumerate(numbers)}
        forced: dict[int, list[int]] = defaultdict(list)
        for x, y in must:
            if x in self._number and y in self._number:
                forced[self._number[x]].append(self._number[y])
                forced[self._number[y]].append(self._number[x])
        decided = {k: d for k, d in self._decided.items()
                   if k in keys and k >> 32 not in fresh and k & _LOW not in fresh}
        kept = len(decided)
        reached = {self._number[w] for w in live if self._number.get(w, -1) in index}
        queue = sorted(reached, reverse=True)
        while queue:  # the smallest first, each atom's pairs one after another
            a = queue.pop()
            for b in sorted(partners.get(a, ())):
                key = _key(a, b)
                found = decided.get(key)
                if found is None:
                    found = decided[key] = self._judge(feats[index[a]], feats[index[b]])
                if found.match and b not in reached:
                    reached.add(b)
                    queue.append(b)
            for b in forced.get(a, ()):
                if b in index and b not in reached:
                    reached.add(b)
                    queue.append(b)
        del partners
        resolution = _clustered_part(pooled, feats, numbers, index, reached, decided,
                                     must, cannot)
        ids = self._work_ids
        present = {ids[n] for n in numbers} - {ids[n] for n in reached}
        rest = []
        for group in held:
            members = sorted(present.intersection(group))
            present.difference_update(members)
            if members:
                rest.append(tuple(members))
        rest.extend((w,) for w in present)
        self._atoms = dict(zip(numbers, pooled, strict=True))
        self._decided, self._pairs = decided, keys
        self._counts, self._sizes = counts, {} if sizes_moved is not None else sizes or {}
        self._cluster_of, self._links_given = {}, None  # a call without ``live`` does all
        self.reached = frozenset(ids[n] for n in reached)
        self.redone = (f"{redone}, {len(reached)} reached and clustered, "
                       f"{len(decided) - kept} of {len(keys)} pairs decided")
        return Resolution(sorted(resolution.clusters + rest), resolution.links)

    def candidate_pairs(self) -> set[tuple[str, str]]:
        """The last call's candidate pairs (work_ids, the smaller first)."""
        ids = self._work_ids
        return {_two(sorted((ids[key >> 32], ids[key & _LOW]))) for key in self._candidates()}

    def _candidates(self) -> Iterable[int]:
        return self._decided if self._pairs is None else self._pairs

    def _numbered(self, work_id: str) -> int:
        found = self._number.get(work_id)
        if found is None:
            found = self._number[work_id] = len(self._work_ids)
            self._work_ids.append(work_id)
        return found

    def _pairs_again(self, pooled: Sequence[Atom], feats: Sequence[Features],
                     filings: Sequence[Filing], numbers: Sequence[int], fresh: set[int],
                     counts: Mapping[str, int], sizes: Mapping[str, int],
                     sizes_moved: AbstractSet[str] | None
                     ) -> tuple[set[tuple[int, int]], int] | None:
        """The candidate pairs (indices), the last call's kept where neither atom is new
        nor holds a word or key whose number moved, and how many atoms were blocked again;
        None where blocking must see all."""
        assert self._counts is not None
        # Blocking reads a number only by where it stands against its steps: a word's
        # rarity, whether another atom holds it, whether it is within the cap (``crossed``);
        # a block's size, whether it is within the cap.
        moved_words = {w for w, _ in counts.items() ^ self._counts.items()
                       if crossed(self._counts.get(w, 0), counts.get(w, 0))}
        # A block new to ``sizes`` held at most one atom before (``sizes`` holds every key
        # of the atoms, and the pairs of words and parts of leave-one-out blocks that two
        # of them are filed under): it paired none of them, and pairs only the new now.
        moved_keys = set(sizes_moved) if sizes_moved is not None else {
            k for k, _ in sizes.items() ^ self._sizes.items()
            if k in self._sizes and (k not in sizes or crossed_cap(self._sizes[k], sizes[k]))}
        moved_pairs = _by_word(_two(pair_key_words(k)) for k in moved_keys if is_pair_key(k))
        moved_keys |= {near_block_key(k) for k in moved_keys if is_left_out(k) and "~" in k}
        dirty = set(fresh)
        if moved_words or moved_keys:
            dirty |= {i for i, f in enumerate(filings)
                      if holds(f, moved_words, moved_keys, moved_pairs)}
        # The atoms a dirty one may pair with: through a word one of them may look up
        # (held by at most the cap), a block, or a pair of words it is filed under. A
        # block ``sizes`` puts past the cap pairs none of its members (blocking's
        # ``_size``; a leave-one-out block's parts still may), so its holders are left
        # out: those of a pair of common words can be most of the set.
        def pairs_some(key: str) -> bool:
            return sizes.get(key, 0) <= MAX_POSTING or is_left_out(key)

        words: set[str] = set()
        keys: set[str] = set()
        word_pairs: list[tuple[str, str]] = []
        for i in dirty:
            f = filings[i]
            if any(w not in counts for w in f.terms):
                return None  # blocking would count the word among the atoms given
            words |= {w for w in f.terms if counts[w] <= MAX_POSTING}
            keys.update(filter(pairs_some, itertools.chain(f.titles, f.people, f.typos,
                                                           f.starts)))
            word_pairs.extend(pair for pair in itertools.combinations(
                pair_words(f.terms, counts), 2) if pairs_some(pair_key(*pair)))
        paired = _by_word(word_pairs)
        near = dirty | {i for i, f in enumerate(filings) if holds(f, words, keys, paired)}
        if any(w not in counts for i in near for w in filings[i].terms):
            return None
        part = sorted(near)
        found = candidate_pairs_from_titles(
            [feats[i].titles for i in part], [feats[i].surnames for i in part],
            counts=counts, block_sizes=sizes,
            filings=[filings[i] for i in part])
        pairs = {(part[x], part[y]) for x, y in found if part[x] in dirty or part[y] in dirty}
        dirty_numbers = {numbers[i] for i in dirty}
        index = {n: i for i, n in enumerate(numbers)}
        for key in self._candidates():
            a, b = key >> 32, key & _LOW
            if a not in dirty_numbers and b not in dirty_numbers:
                i, j = index[a], index[b]
                pairs.add((i, j) if i < j else (j, i))
        return pairs, len(part)

    def _recluster(self, pooled: Sequence[Atom], feats: Sequence[Features],
                   numbers: Sequence[int], decided: Mapping[int, Decision], touched: set[int],
                   must: frozenset[tuple[str, str]], cannot: frozenset[tuple[str, str]]
                   ) -> tuple[Resolution, int] | None:
        """Cluster again the components (matches and must-links) holding a touched atom,
        and say how many atoms they hold; None if a work of the last call would straddle
        them (never, by the module doc)."""
        number_of = self._number  # every atom of the last call is here (``grown``)
        linked: dict[int, list[int]] = defaultdict(list)
        for key, decision in decided.items():
            if decision.match:
                linked[key >> 32].append(key & _LOW)
                linked[key & _LOW].append(key >> 32)
        for a, b in must:
            if a in number_of and b in number_of:
                linked[number_of[a]].append(number_of[b])
                linked[number_of[b]].append(number_of[a])
        again, queue = set(touched), list(touched)
        while queue:
            for other in linked.get(queue.pop(), ()):
                if other not in again:
                    again.add(other)
                    queue.append(other)
        kept = {c for n, c in self._cluster_of.items() if n not in again}
        if any(number_of[w] in again for c in kept for w in c):
            return None
        index = {n: i for i, n in enumerate(numbers)}
        redone = _clustered_part(pooled, feats, numbers, index, again, decided, must, cannot)
        for c in redone.clusters:
            for w in c:
                self._cluster_of[number_of[w]] = c
        redone_ids = {self._work_ids[n] for n in again}
        self._links = {w: link for w, link in self._links.items() if w not in redone_ids}
        self._links.update(redone.links)
        return Resolution(sorted(kept | set(redone.clusters)), dict(self._links)), len(again)


def _clustered_part(pooled: Sequence[Atom], feats: Sequence[Features], numbers: Sequence[int],
                    index: Mapping[int, int], members: AbstractSet[int],
                    decided: Mapping[int, Decision], must: frozenset[tuple[str, str]],
                    cannot: frozenset[tuple[str, str]]) -> Resolution:
    """``clustered`` over the atoms numbered ``members`` (``index``: number -> position in
    ``pooled``), with the decisions between two of them."""
    part = sorted(index[n] for n in members)
    at = {numbers[i]: x for x, i in enumerate(part)}
    inside = {(at[k >> 32], at[k & _LOW]) if at[k >> 32] < at[k & _LOW]
              else (at[k & _LOW], at[k >> 32]): d
              for k, d in decided.items() if k >> 32 in at and k & _LOW in at}
    return clustered([pooled[i] for i in part], [feats[i] for i in part], inside, must, cannot)


def holds(filing: Filing, words: set[str], keys: set[str],
          word_pairs: Mapping[str, set[str]]) -> bool:
    """Whether the atom holds one of ``words``, is filed under one of ``keys``, or holds
    both words of a pair (``word_pairs``: each word -> the other word of its pairs)."""
    if not words.isdisjoint(filing.terms):
        return True
    if keys and not (keys.isdisjoint(filing.titles) and keys.isdisjoint(filing.people)
                     and keys.isdisjoint(filing.typos) and keys.isdisjoint(filing.starts)):
        return True
    return any(not word_pairs[w].isdisjoint(filing.terms)
               for w in word_pairs.keys() & filing.terms)


def crossed_cap(before: int, now: int) -> bool:
    """Whether a block's size moved across blocking's cap, the one number of it blocking
    reads (``_size`` against ``MAX_POSTING``)."""
    return (before <= MAX_POSTING) != (now <= MAX_POSTING)


def _two(words: Sequence[str]) -> tuple[str, str]:
    first, second = words
    return first, second


def _by_word(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """Each word of ``pairs`` -> the other word of each pair it is in."""
    found: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        found[a].add(b)
        found[b].add(a)
    return found
