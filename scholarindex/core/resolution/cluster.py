"""From pairwise decisions to works: a partition that does not chain weak links.

``resolve`` reads the whole set of atoms:

1. Atoms are taken in work_id order (atoms sharing a work_id are one atom, their
   evidence pooled); blocking (``blocking``) proposes pairs, ``decide`` judges them.
2. **Cannot-links**: the operators' ``cannot_link`` pairs and every candidate
   pair's decision with a ``conflict`` (different verified keys, years far apart,
   a note on a paper beside the paper, an owner missing from a complete author
   list). Two groups are never joined while any cannot-link runs between them,
   whatever links them otherwise.
3. Groups are joined by links in this order, each join guarded by step 2:
   a. ``must_link`` pairs (operators' decisions, verified shared arXiv id / DOI),
      in work_id order;
   b. **strong** matches (``decide``: a shared key, or a shared person with
      near-identical titles), best score first, then closest (``closeness``: a
      title printed the same on both sides before a title that is the same only
      once cleaned, "Tutorial: X" beside "X"; then the least gap between the two
      atoms' years, ``UNKNOWN_YEAR_GAP`` = 1 when either has none), ties by the
      pair's work_ids: these may chain, as each is good evidence on its own. A
      strong match is skipped when one of its atoms has another strong match just
      as good (same score, as close) to an atom
      that a cannot-link keeps from the first partner: a listing equally like
      both of one profile's two listings of a title (``decide``) is thin evidence
      for either, so it joins neither by this step;
   c. **weak** matches (the rest: other wording, cut-short titles, generic titles,
      titles with no author evidence) only when **mutual best** between the
      groups as they stand: each atom's best match outside its own group
      lies in the other's group, and uniquely so (best: a match with no two years
      apart, both known, before one across years, whatever its score, as a
      printing cut short is likelier the version of its own year; then the higher
      score, then the lesser ``year_gap``; equally good matches in two
      different groups link neither: ambiguous), unless those equally good
      partners are all judged one work with one another, not on a generic title
      (a paper and two printings of it cut short: no choice to make; one
      editor's columns of a year stay a choice). A weak match across two years
      never joins two groups that are each listed by two profiles or more: each
      group's year is corroborated, and a conference paper and its journal version
      a year later look just so ("PicoDMBS: ..." of 2000, "PicoDBMS: ..." of 2001);
      one printing's year is what Scholar gets wrong. This runs in rounds until a
      round joins nothing, so a third profile's listing of a paper joins the two
      a round joined; from the second round on, a group holds weak links, so two
      groups join only when no atom of one was judged apart from one of the other
      (``decide`` said no). A weak link never joins an atom to something merely
      similar to something similar to it. One exception (``_outvoted``): an atom
      still alone joins a group when every member judged apart from it was judged
      so on the titles' wording alone (``Decision.on_wording``) and more members
      were judged alike to it than apart: a site that prints one paper many ways
      prints some printings damaged one way (words glued, a citation's debris) and
      others another, each alike to the paper but not to one another. Members are
      counted by their printings: an atom pooling the listings of several profiles
      (one title printed the same by each) is that many printings alike or apart,
      not one. A verdict on the paper itself (another year, another kind of
      contribution, one word swapped for another, a generic title) still keeps it
      out, and two groups of several atoms never outvote one another.
4. Every group is one work: ``clusters`` lists them (each sorted, the list
   sorted); ``links`` says, for every atom but its group's smallest work_id, which
   atom it joined, towards that smallest one, and on what evidence.

Nothing depends on the order the atoms arrive in: every order above is by
score and work_id.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

from scholarindex.core.collector import cycle_collector_paused
from scholarindex.core.resolution.blocking import Filing, candidate_pairs_from_titles
from scholarindex.core.resolution.decide import (
    Features,
    decide_features,
    features,
    years_differ,
)
from scholarindex.core.resolution.model import Atom, Decision, Link, Resolution, Strength

MUST_LINK = Decision(True, 1.0, ("must-link",), strength=Strength.MANUAL)
UNKNOWN_YEAR_GAP = 1


def year_gap(a: Atom, b: Atom) -> int:
    """The least distance between a year of ``a`` and one of ``b``; ``UNKNOWN_YEAR_GAP``
    when either has none."""
    if not a.years or not b.years:
        return UNKNOWN_YEAR_GAP
    return min(abs(x - y) for x in a.years for y in b.years)


class Match(NamedTuple):
    """A pair judged one work, with what ranks it beside others of its score."""

    score: float
    apart: tuple[bool, int]  # ``_years_apart`` (step 3c) or ``closeness`` (step 3b)
    i: int
    j: int
    decision: Decision


def _years_apart(a: Atom, b: Atom) -> tuple[bool, int]:
    """``decide.years_differ`` and ``year_gap``: how step 3c ranks a match beside its score."""
    return years_differ(a, b), year_gap(a, b)


def closeness(a: Features, b: Features) -> tuple[bool, int]:
    """How close two atoms a score leaves tied are, smaller first: whether no printed
    title is the same on both sides (``title_key``), then ``year_gap``."""
    return a.title_keys.isdisjoint(b.title_keys), year_gap(a.atom, b.atom)


def _pool(atoms: Iterable[Atom]) -> list[Atom]:
    """One atom per work_id (evidence pooled), sorted by work_id."""
    by_id: dict[str, list[Atom]] = defaultdict(list)
    for atom in atoms:
        by_id[atom.work_id].append(atom)
    pooled = []
    for work_id in sorted(by_id):
        group = by_id[work_id]
        if len(group) == 1:
            pooled.append(group[0])
            continue
        def merged(field: str, group: list[Atom] = group) -> tuple:
            return tuple(dict.fromkeys(v for a in group for v in getattr(a, field)))
        pooled.append(Atom(work_id, merged("titles"), merged("authors"),
                           any(a.authors_truncated for a in group), merged("owners"),
                           merged("years"), merged("venues"), merged("types"),
                           merged("strong_keys"), merged("profiles")))
    return pooled


class _Groups:
    """Union-find with member lists and a cannot-link guard."""

    def __init__(self, n: int, cannot: dict[int, set[int]]):
        self.root = list(range(n))
        self.members = [[i] for i in range(n)]
        self.cannot = cannot

    def find(self, i: int) -> int:
        while self.root[i] != i:
            self.root[i] = self.root[self.root[i]]
            i = self.root[i]
        return i

    def join(self, i: int, j: int, apart: dict[int, set[int]] | None = None) -> bool:
        """Join the groups of i and j unless a cannot-link (or a pair in ``apart``) runs
        between them."""
        ri, rj = self.find(i), self.find(j)
        if ri == rj:
            return False
        if len(self.members[ri]) > len(self.members[rj]):
            ri, rj = rj, ri
        for pairs in (self.cannot, apart or {}):
            if any(self.find(k) == rj for m in self.members[ri] for k in pairs.get(m, ())):
                return False
        self.root[ri] = rj
        self.members[rj].extend(self.members[ri])
        self.members[ri] = []
        return True


def _sharing_a_key(atoms: Sequence[Atom]) -> set[tuple[int, int]]:
    """Pairs of atoms with a verified key in common, whatever their titles (a preprint
    under its first title and the paper under arXiv's later one): titles alone would
    not make them candidates."""
    holders: dict[str, list[int]] = defaultdict(list)
    for i, atom in enumerate(atoms):
        for key in set(atom.strong_keys):
            holders[key.strip().lower()].append(i)
    return {(a, b) for group in holders.values() for n, a in enumerate(group)
            for b in group[n + 1:]}


def resolve(atoms: Iterable[Atom], *, must_link: Iterable[tuple[str, str]] = (),
            cannot_link: Iterable[tuple[str, str]] = (),
            counts: Mapping[str, int] | None = None,
            sizes: Mapping[str, int] | None = None,
            judge: Callable[[Features, Features], Decision] = decide_features,
            features_of: Callable[[Atom], Features] = features,
            filing_of: Callable[[Atom], Filing] | None = None) -> Resolution:
    """The partition of ``atoms`` into works (see the module doc). ``counts`` and
    ``sizes``: blocking's counts over a larger set these atoms are part of
    (``blocking.candidate_pairs_from_titles``). ``judge``: ``decide_features`` or a stand-in.
    ``features_of``: ``features``, or the same kept by a caller that resolves more
    atoms than its cache holds, again and again; ``filing_of`` likewise, blocking's keys."""
    with cycle_collector_paused():
        return _resolve(atoms, must_link, cannot_link, counts, sizes, judge, features_of,
                        filing_of)


def _resolve(atoms: Iterable[Atom], must_link: Iterable[tuple[str, str]],
             cannot_link: Iterable[tuple[str, str]],
             counts: Mapping[str, int] | None,
             sizes: Mapping[str, int] | None,
             judge: Callable[[Features, Features], Decision],
             features_of: Callable[[Atom], Features],
             filing_of: Callable[[Atom], Filing] | None) -> Resolution:
    pooled = _pool(atoms)
    feats = [features_of(a) for a in pooled]
    filings = None if filing_of is None else [filing_of(a) for a in pooled]
    # In order, so that one atom's pairs are decided one after another: what is kept
    # of its titles (``similarity``'s caches) is still at hand, which halves the misses.
    decisions = {(i, j): judge(feats[i], feats[j])
                 for i, j in sorted(candidates(pooled, feats, counts, sizes, filings))}
    return clustered(pooled, feats, decisions, must_link, cannot_link)


def resolve_new(atoms: Iterable[Atom], settled: Mapping[str, str],
                pairs: Iterable[tuple[str, str]], *,
                judge: Callable[[Features, Features], Decision] = decide_features,
                features_of: Callable[[Atom], Features] = features) -> Resolution:
    """Where new atoms go among works already resolved: ``resolve`` deciding only what
    a new atom can change. ``settled`` maps each resolved atom's work_id to its work
    (any name); ``pairs`` (work_ids) are the pairs with a new atom worth a decision
    (the caller's blocking; pairs sharing a verified key are added). A work is taken as
    it stands (its atoms held together, as by must-links), two works stay apart unless
    a new atom joins them, and of the pairs between two works only those whose atoms a
    new atom matches both of are decided, for the ambiguity rules of steps 3b and 3c.

    A resolved neighbourhood is mostly pairs of settled atoms: deciding them again
    for each handful of new atoms is what this saves. ``features_of``: as ``resolve``'s."""
    with cycle_collector_paused():
        pooled = _pool(atoms)
        feats = [features_of(a) for a in pooled]
        index = {a.work_id: i for i, a in enumerate(pooled)}
        work = [settled.get(a.work_id) for a in pooled]
        wanted = {(i, j) if i < j else (j, i) for a, b in pairs
                  if (i := index.get(a)) is not None and (j := index.get(b)) is not None
                  and i != j}
        wanted |= _sharing_a_key(pooled)
        decisions = {(i, j): judge(feats[i], feats[j]) for i, j in sorted(wanted)
                     if work[i] is None or work[j] is None}
        partners: dict[int, set[int]] = defaultdict(set)  # new atom -> settled ones matched
        for (i, j), decision in decisions.items():
            if decision.match and (work[i] is None) != (work[j] is None):
                new, old = (i, j) if work[i] is None else (j, i)
                partners[new].add(old)
        for found in partners.values():
            for i, j in combinations(sorted(found), 2):
                if work[i] != work[j] and (i, j) not in decisions:
                    decisions[(i, j)] = judge(feats[i], feats[j])
        held: dict[str, list[str]] = defaultdict(list)
        for atom, name in zip(pooled, work, strict=True):
            if name is not None:
                held[name].append(atom.work_id)
        together = [(ids[0], other) for ids in held.values() for other in ids[1:]]
        return clustered(pooled, feats, decisions, must_link=together)


def candidates(pooled: Sequence[Atom], feats: Sequence[Features],
               counts: Mapping[str, int] | None = None,
               sizes: Mapping[str, int] | None = None,
               filings: Sequence[Filing] | None = None) -> set[tuple[int, int]]:
    """The pairs (indices into ``pooled``) blocking proposes and those sharing a key."""
    return {*candidate_pairs_from_titles([f.titles for f in feats], [f.surnames for f in feats],
                                         counts=counts, block_sizes=sizes, filings=filings),
            *_sharing_a_key(pooled)}


def clustered(pooled: Sequence[Atom], feats: Sequence[Features],
              decisions: Mapping[tuple[int, int], Decision],
              must_link: Iterable[tuple[str, str]] = (),
              cannot_link: Iterable[tuple[str, str]] = ()) -> Resolution:
    """Steps 2-4 (the module doc) on decisions already made, whatever made them
    (``pooled`` pooled and sorted by ``_pool``, ``decisions`` keyed by index pairs)."""
    index = {a.work_id: i for i, a in enumerate(pooled)}
    cannot: dict[int, set[int]] = defaultdict(set)
    for a, b in cannot_link:
        if a in index and b in index and a != b:
            cannot[index[a]].add(index[b])
            cannot[index[b]].add(index[a])
    apart: dict[int, set[int]] = defaultdict(set)  # judged not one work (step 3c)
    for (i, j), decision in decisions.items():
        if decision.conflict:
            cannot[i].add(j)
            cannot[j].add(i)
        if not decision.match:
            apart[i].add(j)
            apart[j].add(i)

    groups = _Groups(len(pooled), cannot)
    tree: dict[int, list[tuple[int, Decision]]] = defaultdict(list)

    def link(i: int, j: int, decision: Decision,
             apart: dict[int, set[int]] | None = None) -> bool:
        if not groups.join(i, j, apart):
            return False
        tree[i].append((j, decision))
        tree[j].append((i, decision))
        return True

    musts = sorted({tuple(sorted((index[a], index[b])))
                    for a, b in must_link if a in index and b in index and a != b})
    for i, j in musts:
        link(i, j, MUST_LINK)

    matches = sorted((Match(d.score, _years_apart(pooled[i], pooled[j]), i, j, d)
                      for (i, j), d in decisions.items() if d.match),
                     key=lambda m: (m.apart[0], -m.score, m.apart[1], m.i, m.j))
    strong = sorted((Match(m.score, closeness(feats[m.i], feats[m.j]), m.i, m.j, m.decision)
                     for m in matches if m.decision.strength.chains),
                    key=lambda m: (-m.score, m.apart, m.i, m.j))
    for m in _unambiguous(strong, cannot):
        link(m.i, m.j, m.decision)

    def alike(i: int, j: int) -> bool:
        decision = decisions.get((i, j) if i < j else (j, i))
        return (decision is not None and decision.match
                and decision.strength is not Strength.GENERIC)

    weak = [m for m in matches if not m.decision.strength.chains]

    def corroborated(root: int) -> bool:  # the group's listings on two profiles or more
        return len({p for k in groups.members[root] for p in pooled[k].profiles}) > 1

    # An atom pools one listing a profile (``_pool``): its profiles are its printings.
    printings = [max(1, len(a.profiles)) for a in pooled]

    def later(i: int, j: int, decision: Decision) -> bool:
        outvoted = _outvoted(i, j, groups, decisions, printings)
        return link(i, j, decision, None if outvoted else apart)

    joined = _mutual_best_round(matches, weak, groups, link, alike, corroborated)
    while joined:  # later rounds meet groups weak links made: no chaining through them
        joined = _mutual_best_round(matches, weak, groups, later, alike, corroborated)
    return _resolution(pooled, groups, tree)


def _outvoted(i: int, j: int, groups: _Groups,
              decisions: Mapping[tuple[int, int], Decision],
              printings: Sequence[int]) -> bool:
    """Step 3c from the second round on: whether the atom alone in its group, of ``i``
    and ``j``, joins the other's group though some member was judged apart from it:
    every such verdict rests on the titles' wording alone (``Decision.on_wording``) and
    more printings of the group were judged alike to it than apart (``printings``: each
    atom's listings; one title printed the same by three profiles is three votes, as
    three atoms of it would be)."""
    ri, rj = groups.find(i), groups.find(j)
    if len(groups.members[ri]) > 1 and len(groups.members[rj]) > 1:
        return False
    lone, group = (ri, rj) if len(groups.members[ri]) == 1 else (rj, ri)
    alike = apart = 0
    for k in groups.members[group]:
        decision = decisions.get((lone, k) if lone < k else (k, lone))
        if decision is None:
            continue
        if decision.match:
            alike += printings[k]
        elif not decision.on_wording:
            return False
        else:
            apart += printings[k]
    return alike > apart


def _mutual_best_round(matches: list[Match], weak: list[Match],
                       groups: _Groups,
                       link: Callable[[int, int, Decision], bool],
                       alike: Callable[[int, int], bool],
                       corroborated: Callable[[int], bool]) -> bool:
    """One round of step 3c on the groups as they stand; True when it joined any."""
    # An atom's best partner counts by its group, so two equally good partners in one
    # group are no tie.
    group = [groups.find(k) for k in range(len(groups.root))]
    best: dict[int, tuple[float, tuple[bool, int]]] = {}  # atom -> its best match outside
    partners: dict[int, list[int]] = defaultdict(list)  # atom -> its partners at that best
    for m in matches:  # best first; partners in one's group do not count
        if group[m.i] == group[m.j]:
            continue
        for here, there in ((m.i, m.j), (m.j, m.i)):
            if best.setdefault(here, (m.score, m.apart)) == (m.score, m.apart):
                partners[here].append(there)
    best_groups = {here: {group[p] for p in found} for here, found in partners.items()}
    tied = {here for here, found in partners.items()
            if len(best_groups[here]) > 1 and not _one_work(found, group, alike)}
    joined = False
    for m in weak:
        i, j = m.i, m.j
        if (group[j] in best_groups.get(i, ()) and group[i] in best_groups.get(j, ())
                and i not in tied and j not in tied
                and not (m.apart[0] and corroborated(group[i]) and corroborated(group[j]))):
            joined = link(i, j, m.decision) or joined
    return joined


def _one_work(partners: list[int], group: list[int], alike: Callable[[int, int], bool]
              ) -> bool:
    """Whether an atom's equally good partners in several groups are all alike to one
    another (each pair across groups judged one work, not on a generic title): printings
    of one paper, no choice to make."""
    return all(alike(p, q) for n, p in enumerate(partners) for q in partners[n + 1:]
               if group[p] != group[q])


def _unambiguous(strong: list[Match], cannot: dict[int, set[int]]) -> list[Match]:
    """The strong matches in order, without those an equally good match to a
    cannot-linked rival makes ambiguous (see the module doc, step 3b)."""
    rivals: dict[tuple[int, float, tuple[bool, int]], set[int]] = defaultdict(set)
    for m in strong:
        rivals[(m.i, m.score, m.apart)].add(m.j)
        rivals[(m.j, m.score, m.apart)].add(m.i)
    return [m for m in strong
            if not any(cannot.get(partner, set()) & rivals[(here, m.score, m.apart)]
                       for here, partner in ((m.i, m.j), (m.j, m.i)))]


def _resolution(pooled: Sequence[Atom], groups: _Groups,
                tree: dict[int, list[tuple[int, Decision]]]) -> Resolution:
    clusters = []
    links: dict[str, Link] = {}
    for members in groups.members:
        if not members:
            continue
        ordered = sorted(members)
        clusters.append(tuple(pooled[i].work_id for i in ordered))
        seen = {ordered[0]}
        queue = deque([ordered[0]])
        while queue:  # the tree of joins, walked from the smallest work_id
            here = queue.popleft()
            for there, decision in sorted(tree[here], key=lambda e: e[0]):
                if there not in seen:
                    seen.add(there)
                    queue.append(there)
                    links[pooled[there].work_id] = Link(pooled[here].work_id, decision.score,
                                                       decision.evidence, decision.strength)
    clusters.sort()
    return Resolution(clusters, links)
