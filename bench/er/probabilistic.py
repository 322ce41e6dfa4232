"""Probabilistic record linkage (Fellegi–Sunter, as Splink does it): an alternative to ``decide``.

No hand-set thresholds per field and no labels: each candidate pair of atoms becomes
a **comparison vector**, one level per field, and each level's weight is learnt from
the data set itself as log2(m / u), where m is the chance of that level for a pair of
listings of one paper and u for a pair of two papers. The same atoms and the same
blocking as the product (``blocking.candidate_pairs_from_titles``, on ``decide.features``)
are read; only the pairwise judgement and the clustering differ.

**Comparisons** (``COMPARISONS``; level 0 is the least alike, ``NULL`` says nothing):

* ``title``: the cleaned titles' folded words (``similarity.title_words``), the best
  pair of titles: exact; Jaro-Winkler ≥ 0.97; ≥ 0.92; token-set similarity ≥ 0.9
  (words moved, a subtitle dropped, a title cut short); Jaro-Winkler ≥ 0.85 or
  token-sort ≥ 0.8; else. **Generic front matter** (``generic.is_generic_title`` on
  either side) is a level of its own: titles at least ``TITLE_ALIKE`` (Jaro-Winkler
  0.92) alike, one of them generic ("Editor's Notes" / "Editor's notes"). As a
  separate comparison it got a positive weight (one editor's columns are alike in
  title, year and venue, and EM counts them as matches); as a title level its u is
  that of random pairs of generic titles, so it weighs less than an exact title.
* ``year``: exact (a year in common); one apart; further apart; ``NULL`` when either
  prints none.
* ``venue``: Jaro-Winkler ≥ 0.9 on the folded venues; token-set ≥ 0.6; else;
  ``NULL`` when either prints none (layout B prints no venue).
* ``authors``: surnames of the atoms' people (profile owners and printed authors)
  in common: two or more; one; none while some listing prints an author list (the
  owner missing from the other's list); ``NULL`` when neither prints a list and the
  owners differ (layout A prints only its owner: co-authors' profiles are the
  normal case for one paper).

**Estimation**, per data set, unsupervised, u fixed throughout (as Splink):

* u: from ``RANDOM_PAIRS`` pairs of atoms drawn at random (seeded), nearly all two
  papers (``estimate_u``);
* m by expectation maximisation (``em``, Splink's defaults: at most 25 iterations, a
  tolerance of 1e-4), over the aggregated comparison vectors, in sessions as Splink
  trains, each leaving out of the likelihood the comparison its pairs were blocked on:
  1. pairs blocked on a shared surname, the two atoms on no common profile
     (``surname_pairs``): title and year trained, authors left out. Venue is left out
     too: within one person's papers venue and year agree together more than at
     random, and EM took that for matches (title's m drifted onto "else");
  2. the product's candidate pairs: venue and authors trained, year in the
     likelihood with session 1's m, title left out (blocking chose them by title);
  3. the same candidates, every comparison, nothing but the share of matches λ_c.
  λ_c times the candidates over all pairs is the prior λ: the chance that two atoms
  drawn at random are one paper.

**Scoring**: match weight = log2(λ / (1 - λ)) + Σ log2(m / u) over the non-null
levels; match probability = 2^w / (1 + 2^w). (A level is never impossible: every m
and u is at least ``PROBABILITY_FLOOR``.) **Clustering** (``Linkage.resolve``):
pairs at a match probability ≥ the threshold; each atom links to its best such
partner (highest weight; ties by index), and the groups are those links' connected
components, so a weak pair that is no one's best match chains nothing.

**Hybrid** (``Linkage.hybrid``): the product's rule and clustering, with the FS
probability as one more piece of evidence: a pair ``decide`` calls apart without a
conflict becomes a weak match when its probability reaches the threshold (and,
with ``veto``, a weak match of the rule whose probability is below ``VETO_BELOW``
is called apart). The clustering is ``cluster``'s, run on these decisions
(``resolve_with``), so strong/weak, mutual best and cannot-links are the product's.

Pure and deterministic: the result depends only on the atoms (and the seed).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz
from rapidfuzz.distance import JaroWinkler

from scholarindex.core.resolution.cluster import (
    _Groups,
    _pool,
    _resolution,
    candidates,
    clustered,
)
from scholarindex.core.resolution.decide import Features, decide_features, features
from scholarindex.core.resolution.model import Atom, Decision, Resolution
from scholarindex.core.resolution.similarity import title_words
from scholarindex.core.text import words

NULL = -1

# Level names, least alike first (the index is the level).
TITLE_LEVELS = ("else", "jw>=0.85 or token-sort>=0.8", "token-set>=0.9", "jw>=0.92",
                "jw>=0.97", "exact", "generic, jw>=0.92")
YEAR_LEVELS = ("further apart", "one apart", "exact")
VENUE_LEVELS = ("else", "token-set>=0.6", "jw>=0.9")
AUTHOR_LEVELS = ("none shared, a list printed", "1 shared surname", "2+ shared surnames")
COMPARISONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("title", TITLE_LEVELS), ("year", YEAR_LEVELS), ("venue", VENUE_LEVELS),
    ("authors", AUTHOR_LEVELS))
TITLE, YEAR, VENUE, AUTHORS = range(len(COMPARISONS))
TITLE_EXACT = 5
TITLE_GENERIC = 6
TITLE_ALIKE = 3  # from this level up, a generic title's pair is "generic, alike"

TITLE_JW = (0.97, 0.92, 0.85)
TITLE_TOKEN_SET = 0.9
TITLE_TOKEN_SORT = 0.8
VENUE_JW = 0.9
VENUE_TOKEN_SET = 0.6

RANDOM_PAIRS = 1_000_000
SURNAME_BLOCK = 100  # surnames more atoms hold are too common to train on
TRAINING_PAIRS = 500_000
EM_ITERATIONS = 25
EM_TOLERANCE = 1e-4
PROBABILITY_FLOOR = 1e-9  # no level is impossible: a zero m or u would be an infinite weight
THRESHOLDS = (0.9, 0.99, 0.999)  # one grid for every data set
DEFAULT_THRESHOLD = 0.99
VETO_BELOW = 0.01
SEED = 1
INITIAL_SHARE = 0.1  # EM's first guess of the share of matches


# --- comparison vectors -------------------------------------------------------------

@dataclass(frozen=True)
class Fields:
    """What the comparisons read of one atom, computed once."""

    titles: tuple[str, ...]  # folded words of each cleaned title, joined by spaces
    years: frozenset[int]
    venues: tuple[str, ...]  # folded words of each printed venue
    surnames: frozenset[str]
    profiles: frozenset[str]
    printed: bool  # some listing prints an author list
    generic: bool


def fields_of(feature: Features) -> Fields:
    """The atom's comparison fields (see the module doc)."""
    atom = feature.atom
    titles = tuple(dict.fromkeys(" ".join(title_words(t)) for t in feature.titles)) or ("",)
    venues = tuple(dict.fromkeys(v for v in (" ".join(words(raw)) for raw in atom.venues) if v))
    return Fields(titles, frozenset(atom.years), venues, feature.surnames, feature.profiles,
                  bool(feature.people.printed), feature.generic)


def title_level(a: str, b: str) -> int:
    """The level of two folded titles (``TITLE_LEVELS``)."""
    if a == b:
        return TITLE_EXACT if a else 0
    jw = JaroWinkler.similarity(a, b)
    if jw >= TITLE_JW[0]:
        return 4
    if jw >= TITLE_JW[1]:
        return 3
    if fuzz.token_set_ratio(a, b) >= 100 * TITLE_TOKEN_SET:
        return 2
    if jw >= TITLE_JW[2] or fuzz.token_sort_ratio(a, b) >= 100 * TITLE_TOKEN_SORT:
        return 1
    return 0


def year_level(a: frozenset[int], b: frozenset[int]) -> int:
    """The level of two atoms' years (``YEAR_LEVELS``), ``NULL`` when either has none."""
    if not a or not b:
        return NULL
    gap = min(abs(x - y) for x in a for y in b)
    return 2 if gap == 0 else 1 if gap == 1 else 0


def venue_level(a: Sequence[str], b: Sequence[str]) -> int:
    """The best level of two atoms' folded venues (``VENUE_LEVELS``), ``NULL`` when either
    has none."""
    if not a or not b:
        return NULL
    best = 0
    for x in a:
        for y in b:
            if x == y or JaroWinkler.similarity(x, y) >= VENUE_JW:
                return 2
            if fuzz.token_set_ratio(x, y) >= 100 * VENUE_TOKEN_SET:
                best = 1
    return best


def author_level(a: Fields, b: Fields) -> int:
    """Shared surnames (``AUTHOR_LEVELS``); ``NULL`` when nothing is shared and neither
    atom prints an author list (only owners, who may well be co-authors)."""
    shared = len(a.surnames & b.surnames)
    if shared >= 2:
        return 2
    if shared == 1:
        return 1
    return 0 if a.printed or b.printed else NULL


def compare(a: Fields, b: Fields) -> tuple[int, ...]:
    """The comparison vector of two atoms (``COMPARISONS``)."""
    level = 0
    for x in a.titles:
        for y in b.titles:
            level = max(level, title_level(x, y))
    if (a.generic or b.generic) and level >= TITLE_ALIKE:
        level = TITLE_GENERIC
    return (level, year_level(a.years, b.years), venue_level(a.venues, b.venues),
            author_level(a, b))


# --- estimation ---------------------------------------------------------------------

Params = tuple[tuple[float, ...], ...]  # per comparison, per level


def _normalised(counts: Sequence[float]) -> tuple[float, ...]:
    floored = [max(c, 0.0) for c in counts]
    total = sum(floored)
    if total <= 0:
        return tuple(1.0 / len(counts) for _ in counts)
    probs = [max(c / total, PROBABILITY_FLOOR) for c in floored]
    norm = sum(probs)
    return tuple(p / norm for p in probs)


def level_distribution(vectors: Iterable[tuple[int, ...]]) -> Params:
    """Each comparison's share of pairs at each level (null levels left out), with half
    a pair added to every level so that none is impossible."""
    counts = [[0.5] * len(levels) for _, levels in COMPARISONS]
    for vector in vectors:
        for k, level in enumerate(vector):
            if level != NULL:
                counts[k][level] += 1
    return tuple(_normalised(c) for c in counts)


def estimate_u(fields: Sequence[Fields], pairs: int = RANDOM_PAIRS, seed: int = SEED
               ) -> Params:
    """u from random pairs of atoms (nearly all two papers), as Splink estimates it."""
    n = len(fields)
    if n < 2:
        return level_distribution(())
    rng = random.Random(seed)
    total = n * (n - 1) // 2
    vectors = []
    for _ in range(min(pairs, total)):
        i = rng.randrange(n)
        j = rng.randrange(n - 1)
        j += j >= i
        vectors.append(compare(fields[i], fields[j]))
    return level_distribution(vectors)


# Where EM starts (as Splink's defaults): a match's mass on the closest levels.
INITIAL_M: dict[int, tuple[float, ...]] = {
    TITLE: (0.05, 0.05, 0.1, 0.1, 0.2, 0.45, 0.05),
    YEAR: (0.05, 0.15, 0.8),
    VENUE: (0.2, 0.2, 0.6),
    AUTHORS: (0.05, 0.45, 0.5),
}


def initial_m() -> Params:
    """A starting point for EM (``INITIAL_M``)."""
    return tuple(_normalised(INITIAL_M[k]) for k in range(len(COMPARISONS)))


def em(patterns: Counter[tuple[int, ...]], m: Params, u: Params, prior: float,
       train: Iterable[int], use: Iterable[int] | None = None,
       iterations: int = EM_ITERATIONS, tolerance: float = EM_TOLERANCE
       ) -> tuple[Params, float, int]:
    """Expectation maximisation, u fixed, over ``patterns`` (comparison vector -> how many
    pairs): m of the comparisons in ``train`` and the share of matches. Only the
    comparisons in ``use`` (default: every one) enter the likelihood: as in Splink, a
    comparison the pairs were blocked on is left out, since blocking made it agree for
    matches and non-matches alike. Stops when no probability moves by ``tolerance`` or
    after ``iterations`` (Splink's defaults). Returns (m, share of matches, iterations)."""
    trained = set(train)
    used = set(range(len(m))) if use is None else set(use)
    current = [list(levels) for levels in m]
    lam = min(max(prior, 1e-6), 1 - 1e-6)
    total = sum(patterns.values())
    done = 0
    for done in range(1, iterations + 1):  # noqa: B007 - the count is returned
        sums = [[0.0] * len(levels) for levels in current]
        matched = 0.0
        for vector, count in patterns.items():
            lm, lu = lam, 1.0 - lam
            for k, level in enumerate(vector):
                if level != NULL and k in used:
                    lm *= current[k][level]
                    lu *= u[k][level]
            weight = count * lm / (lm + lu) if lm + lu > 0 else 0.0
            matched += weight
            for k, level in enumerate(vector):
                if level != NULL:
                    sums[k][level] += weight
        change = 0.0
        for k in trained:
            new = _normalised(sums[k])
            change = max(change, *(abs(x - y) for x, y in zip(new, current[k], strict=True)))
            current[k] = list(new)
        new_lam = min(max(matched / total, 1e-9), 1 - 1e-9) if total else lam
        change = max(change, abs(new_lam - lam))
        lam = new_lam
        if change < tolerance:
            break
    return tuple(tuple(levels) for levels in current), lam, done


def surname_pairs(fields: Sequence[Fields], cap: int = TRAINING_PAIRS, block: int = SURNAME_BLOCK,
                  seed: int = SEED) -> list[tuple[int, int]]:
    """Training pairs blocked on a shared surname (blocks of at most ``block`` atoms), the
    two atoms on no common profile (a profile lists a paper once: its own two listings
    are two papers, and would teach EM nothing but one person's habits), at most ``cap``
    of them drawn at random (seeded)."""
    holders: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(fields):
        for surname in f.surnames:
            holders[surname].append(i)
    pairs = {(a, b) for members in holders.values() if 1 < len(members) <= block
             for x, a in enumerate(members) for b in members[x + 1:]
             if fields[a].profiles.isdisjoint(fields[b].profiles)}
    ordered = sorted(pairs)
    if len(ordered) > cap:
        ordered = sorted(random.Random(seed).sample(ordered, cap))
    return ordered


@dataclass(frozen=True)
class Model:
    """Fitted m and u per comparison level, and the prior."""

    m: Params
    u: Params
    prior: float  # the chance that two atoms drawn at random are one paper
    candidate_share: float  # EM's share of matches among the candidate pairs
    iterations: tuple[int, int, int]  # EM iterations of the sessions

    def weights(self) -> dict[str, dict[str, float]]:
        """log2(m / u) per comparison and level, for reports."""
        return {name: {level: round(math.log2(self.m[k][x] / self.u[k][x]), 2)
                       for x, level in enumerate(levels)}
                for k, (name, levels) in enumerate(COMPARISONS)}

    def match_weight(self, vector: tuple[int, ...]) -> float:
        """log2 of the posterior odds that the pair is one paper."""
        weight = math.log2(self.prior / (1.0 - self.prior))
        for k, level in enumerate(vector):
            if level != NULL:
                weight += math.log2(self.m[k][level] / self.u[k][level])
        return weight


def probability(weight: float) -> float:
    """Match probability of a match weight (log2 odds)."""
    if weight > 60:
        return 1.0
    odds = 2.0 ** weight
    return odds / (1.0 + odds)


def fit(fields: Sequence[Fields], candidates: Sequence[tuple[int, int]],
        random_pairs: int = RANDOM_PAIRS, seed: int = SEED) -> Model:
    """The model of one data set (see the module doc): u from random pairs, m by EM."""
    n = len(fields)
    u = estimate_u(fields, random_pairs, seed)
    training = Counter(compare(fields[i], fields[j]) for i, j in surname_pairs(fields, seed=seed))
    surname_session = (TITLE, YEAR)  # blocked on a surname: authors left out
    m, _, first = em(training, initial_m(), u, INITIAL_SHARE, surname_session, surname_session)
    blocked = Counter(compare(fields[i], fields[j]) for i, j in candidates)
    title_session = (YEAR, VENUE, AUTHORS)  # blocked on title words: title left out
    m, _, second = em(blocked, m, u, INITIAL_SHARE, (VENUE, AUTHORS), title_session)
    _, share, third = em(blocked, m, u, INITIAL_SHARE, ())  # every comparison: the share
    all_pairs = n * (n - 1) // 2
    prior = min(max(share * len(candidates) / all_pairs, 1e-12), 0.5) if all_pairs else 0.5
    return Model(m, u, prior, share, (first, second, third))


# --- resolution ---------------------------------------------------------------------

@dataclass
class Linkage:
    """The model fitted on a set of atoms and its candidate pairs' match weights."""

    atoms: list[Atom]  # pooled: one per work_id, sorted
    features: list[Features]
    model: Model
    weights: dict[tuple[int, int], float]  # candidate pair (i < j) -> match weight

    def probability(self, i: int, j: int) -> float:
        return probability(self.weights.get((i, j) if i < j else (j, i), -math.inf))

    def resolve(self, threshold: float = DEFAULT_THRESHOLD) -> Resolution:
        """Link-to-best-match clustering of the pairs at ``threshold`` or above."""
        best: dict[int, tuple[float, int]] = {}
        for (i, j), weight in self.weights.items():
            if probability(weight) < threshold:
                continue
            for here, there in ((i, j), (j, i)):
                if here not in best or (weight, -there) > (best[here][0], -best[here][1]):
                    best[here] = (weight, there)
        groups = _Groups(len(self.atoms), {})
        tree: dict[int, list[tuple[int, Decision]]] = defaultdict(list)
        for here, (weight, there) in sorted(best.items()):
            if groups.join(here, there):
                decision = Decision(True, probability(weight), (f"fs weight {weight:.1f}",))
                tree[here].append((there, decision))
                tree[there].append((here, decision))
        return _resolution(self.atoms, groups, tree)

    def hybrid(self, threshold: float = DEFAULT_THRESHOLD, veto: bool = False) -> Resolution:
        """The product's rule and clustering, FS deciding what the rule leaves apart
        without a conflict (see the module doc)."""
        def judge(i: int, j: int) -> Decision:
            decision = decide_features(self.features[i], self.features[j])
            if decision.conflict:
                return decision
            p = self.probability(i, j)
            if not decision.match and p >= threshold:
                return replace(decision, match=True, reasons=(*decision.reasons, f"fs {p:.3f}"))
            if veto and decision.match and not decision.strength.chains and p < VETO_BELOW:
                return replace(decision, match=False,
                               reasons=(*decision.reasons, f"fs {p:.3f}"))
            return decision
        return resolve_with(self.atoms, self.features, judge)


def link(atoms: Iterable[Atom], random_pairs: int = RANDOM_PAIRS, seed: int = SEED) -> Linkage:
    """Fit the model on ``atoms`` and weigh the product's candidate pairs."""
    pooled = _pool(atoms)
    feats = [features(a) for a in pooled]
    fields = [fields_of(f) for f in feats]
    pairs = sorted(candidates(pooled, feats))
    model = fit(fields, pairs, random_pairs, seed)
    weights = {(i, j): model.match_weight(compare(fields[i], fields[j])) for i, j in pairs}
    return Linkage(pooled, feats, model, weights)


def resolve(atoms: Iterable[Atom], threshold: float = DEFAULT_THRESHOLD) -> Resolution:
    """The partition of ``atoms`` into works by probabilistic linkage alone."""
    return link(atoms).resolve(threshold)


def resolve_with(pooled: list[Atom], feats: list[Features],
                 judge: Callable[[int, int], Decision]) -> Resolution:
    """``cluster.resolve``'s steps 2-4 on decisions made by ``judge`` (atom indices into
    ``pooled``, which is pooled and sorted as ``cluster`` pools it): the product's
    clustering, any decision rule. No must-links or ops cannot-links."""
    return clustered(pooled, feats, {(i, j): judge(i, j) for i, j in candidates(pooled, feats)})


__all__ = ["COMPARISONS", "DEFAULT_THRESHOLD", "NULL", "THRESHOLDS", "Fields", "Linkage",
           "Model", "compare", "em", "estimate_u", "fields_of", "fit", "link", "probability",
           "resolve", "resolve_with"]
