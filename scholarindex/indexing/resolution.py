"""The resolution pass: one work document per paper, decided over the whole index.

The crawl writes each listing under its ``work_id`` (its folded title; a generic title's
is salted with the listing's own evidence, ``scholarindex.core.identity``), so the listings of one
paper printed differently (a typo, a title cut short, mojibake, the venue glued to it)
arrive as separate documents. After the crawl, this pass reads every work document,
gives ``scholarindex.core.resolution.resolve`` one *atom* per ``work_id`` (the evidence of the
listings under it) with ops' decisions (``scholarindex.indexing.decisions``) and the verified arXiv
ids and DOIs as hard links, and regroups the documents so that each resulting cluster
is one document (``WorkJoiner.regroup``: joins and splits, with redirects so later
listings of an absorbed id find their document).

Why a pass over the whole index rather than joins as listings arrive: the clusters are
a function of the set of atoms only (``resolve`` is deterministic, ties broken by id),
so the result does not depend on the order in which pages, workers, re-crawls or
replays delivered them; a listing crawled today meets works indexed months ago; a
changed title, an unlist or a new decision can undo a join as well as make one. The
crawl's own writes stay simple, cheap and conflict-free. The price is a read of every
work document per pass (measured in ``make bench-dedupe``).

Each moved ``work_id`` carries why it joined (``resolution`` on the document: ``by``
``match`` with the score and evidence, ``manual``, or ``identity``). A document a crawl
changes while the pass works on it is left as the crawl wrote it and counted in
``conflicts``; the pass plans those again from a fresh read, and the next pass
settles what is left.
"""

from __future__ import annotations

import functools
import itertools
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.collector import cycle_collector_paused
from scholarindex.core.resolution import Atom, Resolution, resolve
from scholarindex.core.resolution.blocking import (
    MAX_POSTING,
    Filing,
    crossed,
    is_left_out,
    is_pair_key,
    left_out_blocks,
    left_out_words,
    lookups,
    near_block_key,
    near_blocks,
    pair_key,
    pair_key_words,
    pair_keys,
    spellings,
    word_key,
    words_needed,
)
from scholarindex.core.resolution.decide import Features, decide_features, features
from scholarindex.core.resolution.growing import GrowingResolution, crossed_cap, holds
from scholarindex.core.resolution.model import Decision as MatchDecision
from scholarindex.core.resolution.model import Strength
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing import neighbourhood
from scholarindex.indexing.atoms import (
    atom_keys,
    atom_words,
    atoms_of,
    doc_keys,
    filed_pairs,
    holding_both,
)
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.decisions import APART, JOIN, Decision, DecisionStore
from scholarindex.indexing.documents import doc_work_ids, resolution_link
from scholarindex.indexing.identity import READ_PART, JoinReport, WorkJoiner
from scholarindex.indexing.indices import TOMBSTONES_INDEX, alias_name
from scholarindex.indexing.passlock import PassLock
from scholarindex.indexing.scan import refresh, scan
from scholarindex.indexing.shapes import ResolutionLink
from scholarindex.indexing.unresolved import HIDDEN

logger = logging.getLogger(__name__)

# What the pass reads of each work document.
SOURCE_FIELDS = ["work_id", "work_ids", "listings", "arxiv_id", "arxiv", "enrichment",
                 "resolution", "blocking_keys", "hidden_by"]
# What it reads first of a neighbour, to tell whether it can pair with the change.
KEY_FIELDS = ["work_id", "work_ids", neighbourhood.KEYS]
# Blocks whose members pair only when they pass blocking's share test: a word's, a
# title's start's (and a pair of words', sized apart: ``pair_keys``).
SHARED_BLOCKS = ("w:", ">:")
FULL, INCREMENTAL = "full", "incremental"
# Rounds of widening an incremental pass's region: it grows while a work that changes
# has neighbours not yet read (changes spread along matches, rarely far).
WIDEN_ROUNDS = 8
PLAN_ROUNDS = 3  # plan and apply again while crawls keep changing what the pass read
# Regroups whose every step goes in one request (``WorkJoiner.regroup_many``): each
# hiding forces a refresh, once for these rather than once each.
REGROUP_BATCH = 100
# A work of this many work_ids (spellings of one title) is logged as a warning: one paper
# is rarely printed so many ways, and a title rule gone wrong (a generic title joining
# unrelated listings) shows first as one work that keeps growing.
LARGE_WORK = 50
# ``run_pending`` reads everything once this share of the work documents is marked: an
# incremental pass reads its region key by key and counts each key through the index,
# which costs several times a full pass's one scan per document (a first crawl of 63,073
# works into an empty index: 280 s incremental, 34 s full, the same clusters).
FULL_WHEN_MARKED = 0.5
# ``plan``'s answer: each set of documents to regroup (id -> its work_ids) with its works.
Plan = list[tuple[dict[str, set[str]], list[list[str]]]]


@dataclass
class ResolutionReport:
    """What one pass found and did."""

    mode: str = FULL
    documents: int = 0  # work documents read
    pending: int = 0  # documents and tombstones marked changed since the last pass
    marks_cleared: int = 0  # of them, settled by this pass
    atoms: int = 0  # distinct work_ids with listings
    works: int = 0  # works (documents) the resolution makes
    groups_changed: int = 0  # sets of documents joined or split
    written: int = 0
    deleted: int = 0
    conflicts: int = 0  # groups a crawl changed meanwhile, left for the next pass
    decisions: int = 0
    largest_work: int = 0  # work_ids in the largest work
    largest_work_id: str | None = None
    seconds: float = 0.0
    changes: list[dict[str, Any]] = field(default_factory=list)  # the plan, for --dry-run

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "changes"}


def plan(held: Mapping[str, Iterable[str]], clusters: Iterable[Iterable[str]]) -> Plan:
    """The changes that make each cluster one document. Pure.

    ``held``: document id -> the work_ids it holds. Documents that share a cluster,
    transitively, form a component; each component whose documents are not already
    its clusters is returned with its clusters (sorted), in a stable order.
    """
    sets = {doc_id: set(ids) for doc_id, ids in held.items()}
    docs_of: dict[str, set[str]] = {}  # several when a work_id's listings sit in two
    for doc_id, ids in sets.items():  # documents (a regroup's delete lost to a crawl)
        for wid in ids:
            docs_of.setdefault(wid, set()).add(doc_id)
    parent = {doc_id: doc_id for doc_id in sets}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    placed = []
    for cluster in sorted(sorted(c) for c in clusters):
        docs = sorted({d for w in cluster for d in docs_of.get(w, ())})
        if not docs:
            continue
        for other in docs[1:]:
            parent[root(other)] = root(docs[0])
        placed.append((docs[0], cluster))
    components: dict[str, tuple[list[str], list[list[str]]]] = {}
    for doc_id in sorted(sets):
        components.setdefault(root(doc_id), ([], []))[0].append(doc_id)
    for doc_id, cluster in placed:
        components[root(doc_id)][1].append(cluster)
    changes = []
    for doc_ids, groups in components.values():
        settled = len(doc_ids) == 1 and len(groups) == 1 and set(groups[0]) <= sets[doc_ids[0]]
        if not settled and groups:
            changes.append(({d: sets[d] for d in doc_ids}, groups))
    return sorted(changes, key=lambda change: min(change[0]))


class ResolutionPass:
    """Reads every work document, resolves, and regroups what changed."""

    def __init__(self, client: OpenSearch, prefix: str, policy: RetryPolicy,
                 layout: IndexLayout = DEFAULT_LAYOUT):
        self.client = client
        self.prefix = prefix
        self.layout = layout
        self.joiner = WorkJoiner(client, prefix, policy, layout=layout)
        self.decisions = DecisionStore(client, prefix, layout)

    def run(self, dry_run: bool = False, full: bool = True,
            seeds: Iterable[str] = ()) -> ResolutionReport:
        """One pass; ``dry_run`` plans without writing. Raises ``IndexUnavailable``.

        ``full``: over every work document. Otherwise incremental: over the documents
        marked changed since the last pass, the work_ids in ``seeds`` (ops' decisions)
        and their neighbours (``_region``), with the same clusters there as a full pass.

        One pass at a time per index (``scholarindex.indexing.passlock``): a pass waits
        for the one another process runs, then reads what that one left. A dry run
        writes nothing and does not wait.
        """
        # A pass keeps its region's evidence alive while it makes millions of short-lived
        # objects: the collector's full passes would walk the first again and again.
        with cycle_collector_paused():
            if dry_run:
                return self._run(dry_run, full, seeds)
            with PassLock(self.client, self.prefix, self.layout):
                return self._run(dry_run, full, seeds)

    def run_pending(self, dry_run: bool = False, seeds: Iterable[str] = ()
                    ) -> ResolutionReport:
        """The pass for what crawls changed: incremental, or full when at least
        ``FULL_WHEN_MARKED`` of the work documents are marked (a first crawl). The same
        clusters either way; the report's ``mode`` says which ran."""
        return self.run(dry_run, full=self._mostly_marked(), seeds=seeds)

    def _mostly_marked(self) -> bool:
        works = alias_name(self.prefix, "works")
        with translate_errors(f"count {works}"):
            if not self.client.indices.exists(index=works):
                return False
        refresh(self.client, works)
        with translate_errors(f"count {works}"):
            total = self.client.count(index=works)["count"]
            marked = self.client.count(index=works,
                                       body={"query": neighbourhood.MARKED})["count"]
        return total > 0 and marked >= FULL_WHEN_MARKED * total

    def _run(self, dry_run: bool, full: bool, seeds: Iterable[str]) -> ResolutionReport:
        started = time.monotonic()
        report = ResolutionReport(mode=FULL if full else INCREMENTAL)
        decisions = self.decisions.all()
        report.decisions = len(decisions)
        seeds = sorted(set(seeds))
        works = alias_name(self.prefix, "works")
        refresh(self.client, works)  # the crawl's last writes, searchable
        region = _Region()
        for round_number in range(1, PLAN_ROUNDS + 1):
            if round_number > 1:  # what the last round and the crawl wrote, searchable
                refresh(self.client, works)
            if full:
                region = self._read_all()
                resolution = self._resolve(region.all_atoms(), decisions)
                changes = plan(region.held(), resolution.clusters)
            else:  # a round after a conflict reads again what the last one did
                region, resolution, changes = self._region(decisions, seeds, set(region.docs))
            report.documents = max(report.documents, len(region.docs))
            report.pending = len(region.marked) + len(region.tombstones)
            report.atoms = sum(len(c) for c in resolution.clusters)
            report.works = len(resolution.clusters)
            largest = max(resolution.clusters, key=len, default=())
            report.largest_work, report.largest_work_id = len(largest), min(largest, default=None)
            if dry_run:
                report.changes = [{"documents": sorted(h), "works": g} for h, g in changes]
                report.groups_changed = len(changes)
                break
            written: set[str] = set()
            conflicts = self._apply(changes, resolution, report, written)
            report.conflicts = conflicts
            cleared, unsettled = self._settle(region, resolution, written, full)
            report.marks_cleared += cleared
            if not conflicts and not unsettled:  # else a crawl wrote meanwhile: plan again
                break
            logger.info("resolution pass: %d group(s) changed while planned, round %d of %d",
                        conflicts, round_number, PLAN_ROUNDS)
        if report.groups_changed and not dry_run:
            # Searches show the regrouped works now rather than at the next refresh: ops
            # look at the UI right after `works resolve`, and a crawl's pass runs once.
            refresh(self.client, works)
        if report.largest_work >= LARGE_WORK:
            logger.warning("resolution pass: work %s holds %d work ids (a generic title joining "
                           "unrelated listings?); `scholarindex works explain %s` shows them",
                           report.largest_work_id, report.largest_work, report.largest_work_id)
        report.seconds = round(time.monotonic() - started, 3)
        return report

    def _read_all(self) -> _Region:
        works = alias_name(self.prefix, "works")
        body = {"query": {"match_all": {}}, "_source": [*SOURCE_FIELDS, neighbourhood.PENDING],
                "seq_no_primary_term": True}
        region = _Region()
        for hit in scan(self.client, works, body):
            region.add([(hit["_id"], hit["_source"])])
            if hit["_source"].get(neighbourhood.PENDING):
                region.marked[hit["_id"]] = set(hit["_source"][neighbourhood.PENDING])
        self._read_tombstones(region)
        return region

    def _read_tombstones(self, region: _Region) -> None:
        """The marked tombstones into ``region``: each work gone, its keys and a bound on
        its atoms (one per profile it was unlisted from)."""
        index = alias_name(self.prefix, TOMBSTONES_INDEX)
        with translate_errors(f"exists {index}"):
            if not self.client.indices.exists(index=index):
                return
        refresh(self.client, index)
        for doc_id, source, _ in neighbourhood.pending(self.client, index, ["unlisted"]):
            region.tombstones[doc_id] = set(source.get(neighbourhood.PENDING) or ())
            region.tombstone_atoms[doc_id] = max(1, len(source.get("unlisted") or ()))

    def _region(self, decisions: list[Decision], seeds: list[str],
                again: set[str] | None = None) -> tuple[_Region, Resolution, Plan]:
        """The documents an incremental pass resolves, their resolution and its plan.

        Start: the marked documents (their keys), the tombstones' keys, the documents
        holding ``seeds``, and ``again`` (the documents a round that met a conflict read).
        Widen: (1) the documents holding one of those keys that blocking can pair with
        an atom here (``_keeps``; a key past blocking's cap pairs nothing and is not
        read, but for the part of a leave-one-out block a typo apart, ``_widen_near``);
        (2) the neighbours of those holding a word whose count may have crossed a
        boundary of blocking's reading of it (``_Region.moved_words``), where that may
        change the words they look up (``_Region.rechosen``), and the pairs of rare words
        of the change and of those (``_Region.pair_keys``); (3) until every document whose
        grouping the resolution changes has its own neighbours read, so no work outside
        decides differently. Counts of documents the region does not hold come from the
        index (``neighbourhood.counts``).
        """
        works = alias_name(self.prefix, "works")
        region = _Region(trust_stored=True)
        for doc_id, source, _ in neighbourhood.pending(self.client, works, SOURCE_FIELDS):
            region.add([(doc_id, source)])
            region.marked[doc_id] = set(source.get(neighbourhood.PENDING) or ())
        self._read_tombstones(region)
        if again:  # another pass may have settled their marks meanwhile
            body = {"query": {"ids": {"values": sorted(again)}}, "_source": SOURCE_FIELDS}
            region.add((hit["_id"], hit["_source"]) for hit in scan(self.client, works, body))
        if seeds:
            body = {"query": {"terms": {"work_ids": seeds}}, "_source": SOURCE_FIELDS}
            region.add((hit["_id"], hit["_source"]) for hit in scan(self.client, works, body))
        seed_keys = region.handled()
        first = set(region.docs)
        self._widen(region, first, seed_keys | {k for d in first for k in region.keys(d)})
        sizes = [len(first), len(region.docs)]
        counts = region.counted(self, pairs=False)[0]  # the pairs are sized once, below
        if region.moved is None:  # nothing was read
            region.moved = region.moved_words(counts)
        moved = region.moved
        rechosen = region.rechosen(set(region.docs) - first, moved, counts)
        region.reopen(rechosen, counts)
        self._widen(region, rechosen, {k for d in rechosen for k in region.keys(d)})
        sizes.append(len(region.docs))
        self._widen(region, first | rechosen, *region.pair_keys(first | rechosen, counts),
                    counts=counts)
        sizes.append(len(region.docs))
        resolution, changes = Resolution([]), []
        rounds = []
        region.live = {a.work_id for d in first | rechosen for a in region.atoms(d)}
        for _ in range(WIDEN_ROUNDS):
            counted = region.counted(self)
            region.live |= region.unsettled(*counted)
            resolution = self._resolve(region.all_atoms(), decisions, counted, region)
            rounds.append(region.resolution.redone)
            changes = plan(region.held(), resolution.clusters)
            moving = {d for docs, _ in changes for d in docs}
            filed, near = region.pair_keys(moving, counted[0])
            region.reopen(moving, counted[0])
            unread = ({k for d in moving for k in region.keys(d)} | filed) - region.widened
            # A document that moves has every pair of its atoms decided before the end.
            unreached = {a.work_id for d in moving for a in region.atoms(d)} - (
                region.resolution.reached or frozenset())
            region.live |= unreached
            if (not unread and not near - region.widened and not region.near_unread(moving)
                    and not unreached):
                break
            self._widen(region, moving, unread, near, counted[0])
            sizes.append(len(region.docs))
        logger.info("incremental region: %d changed, %s with their neighbours (%d words "
                    "may have moved); resolved in %d round(s): %s", sizes[0],
                    " -> ".join(map(str, sizes[1:])), len(moved), len(rounds), "; ".join(rounds))
        return region, resolution, changes

    def _widen(self, region: _Region, around: AbstractSet[str], keys: set[str],
               near: AbstractSet[str] = frozenset(),
               counts: Mapping[str, int] | None = None) -> None:
        """Read the documents holding ``keys`` within blocking's cap (and its slack: a
        block that was under the cap still pairs its members), and those holding a pair
        key of ``near`` whose count is within the slack of the cap on either side: only
        crossing it changes what such a block pairs. Counts of documents outside the
        region stand for their atoms, as in ``_Region.counted``.

        Of those, only the documents that can pair with an atom of ``around`` (the
        documents here whose every pair the pass must see: the change, and later those
        the resolution moves) are kept (``_keeps``), judged by their stored keys before
        their sources are read: most holders of a word or a title's start share that
        and no more with the change. A pair of two other documents was decided at the
        last pass and matters only if one of them moves, which widens around it.
        ``counts`` (blocking's: word -> atoms) is needed to judge pair keys; without it
        every holder of one is kept."""
        works = alias_name(self.prefix, "works")
        self._widen_near(region, around)
        new = (keys | near) - region.widened
        if not new:
            return
        region.widened |= new
        region.count(self.client, works, new)
        slack = region.slack()

        def moved_by(key: str) -> int:
            return region.pair_slack(key) if is_pair_key(key) else slack.get(key, 0)

        def wanted(key: str) -> bool:
            floor = MAX_POSTING - moved_by(key) if key in near and key not in keys else 0
            return floor < region.doc_counts[key] <= MAX_POSTING + moved_by(key)

        ask = {k for k in new if wanted(k)}
        # Each holder's keys among those asked and its words: all ``_keeps`` reads of it
        # (a pair widening finds tens of thousands, of some 40 stored keys each).
        found: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        whole = set()
        asked = {k: region.doc_counts[k] for k in ask}
        for doc_id, source in neighbourhood.holders(self.client, works, asked, KEY_FIELDS):
            if doc_id in region.docs:
                continue
            stored = source.get(neighbourhood.KEYS)
            if len(doc_work_ids(source)) > 1 or not stored:
                # A document of several atoms counts them one by one (``counted``), and
                # one without stored keys cannot be judged by them: both are read whole.
                whole.add(doc_id)
            else:
                found[doc_id] = (frozenset(k for k in stored if k in ask),
                                 frozenset(k[2:] for k in stored if k.startswith("w:")))
        region.add(neighbourhood.sources(self.client, works, whole, SOURCE_FIELDS))
        if region.moved is None:  # the first widening: blocking's counts of the change
            region.moved = region.moved_words(region.counted(self, pairs=False)[0])
        kept = self._keeps(region, frozenset(around), found, ask, keys, slack, counts)
        region.add(neighbourhood.sources(self.client, works, kept, SOURCE_FIELDS))

    def _widen_near(self, region: _Region, around: AbstractSet[str]) -> None:
        """Read, of each leave-one-out block past the cap (and its slack) an atom of
        ``around`` or a change is filed under, the holders whose left-out word is a typo
        apart from the atom's, where that part of the block is within the cap (blocking
        pairs them: ``blocking.near_blocks``). A block within the cap is read whole by
        ``_widen``. The words the holders leave out come from the index
        (``neighbourhood.left_out``), the parts' sizes from those words' counts: a holder
        of one title leaves out one word."""
        wanted = region.near_unread(around)
        if not wanted:
            return
        region.near_read |= wanted
        works = alias_name(self.prefix, "works")
        keys = {key for key, _ in wanted}
        region.count(self.client, works, keys)
        slack = region.slack()
        past = {k for k in keys if region.doc_counts[k] > MAX_POSTING + slack.get(k, 0)}
        region.read_left_out(self.client, works, past)
        near: dict[str, set[str]] = {}
        for key, word in wanted:
            if key in past:
                near.setdefault(key, set()).update(
                    _near_words(region.left_out[key], spellings(word),
                                MAX_POSTING + slack.get(key, 0)))
        near = {key: words for key, words in near.items() if words}
        if near:
            region.add((doc_id, source) for doc_id, source in neighbourhood.near_holders(
                self.client, works, near, SOURCE_FIELDS) if doc_id not in region.docs)

    def _keeps(self, region: _Region, around: frozenset[str],
               found: Mapping[str, tuple[frozenset[str], frozenset[str]]], ask: AbstractSet[str],
               keys: AbstractSet[str], slack: Mapping[str, int],
               counts: Mapping[str, int] | None) -> set[str]:
        """Of ``found`` (single atoms: id -> the keys of ``ask`` stored on it, its words),
        the ids that can pair with an atom of ``around`` through a key of ``ask``, or
        whose block may pair otherwise than at the last pass.

        Every holder is kept of a whole-title or typo block (its members pair whatever
        they share), of a moved word (its holders may look up other words,
        ``rechosen``), of a block the change may have taken across the cap, and of a
        key no atom of ``around`` holds (one the change took away). A block within the
        cap before the change and after it (settled) pairs only atoms that pass
        blocking's share test, so of its holders only those sharing enough words with an
        atom of ``around`` filed under it are kept: the others pair as at the last pass,
        with none of those. ``_Region.filtered`` remembers which documents that was
        checked against (``_Region.reopen``). A pair key's block holds only the atoms
        filed under it (each one's rarest words), so of an unsettled one the holders
        filed under it."""
        moved = {word_key(w) for w in region.moved or ()}
        here, extra = region.holding({k for k in ask if k.startswith(SHARED_BLOCKS)} - moved,
                                     around)
        # The block's atoms: the documents holding the key, and the atoms here beyond one
        # per document (every document of several atoms holding it is here).
        share_keys = {k for k in here
                      if region.doc_counts[k] + extra.get(k, 0) + slack.get(k, 0) <= MAX_POSTING}
        pairs = {k for k in ask if is_pair_key(k)} if counts is not None else set()
        settled_pairs = {k for k in pairs & keys
                         if region.doc_counts[k] + region.pair_slack(k) <= MAX_POSTING}
        held_of = functools.partial(self._held, region, counts=counts or {})
        if settled_pairs:
            here |= region.filed_under(settled_pairs, around, held_of)
        for key in share_keys | settled_pairs:  # one set shared by the keys of a widening
            checked = region.filtered.get(key)
            region.filtered[key] = around if checked is None else checked | around
        every = ask - share_keys - pairs

        def shares(mine: frozenset[str], blocks: Iterable[str]) -> bool:
            return any(_shares(mine, other) for key in blocks for other in here.get(key, ()))

        partners: dict[str, set[str]] = {}  # word -> the other word of each pair key
        for key in pairs:
            first, second = pair_key_words(key)
            partners.setdefault(first, set()).add(second)
            partners.setdefault(second, set()).add(first)
        kept, by_pairs = set(), {}
        for doc_id, (stored, mine) in found.items():
            if stored & every or shares(mine, stored & share_keys):
                kept.add(doc_id)
            elif any(partners.get(w, set()) & mine for w in mine):
                by_pairs[doc_id] = mine
        if by_pairs:
            held = held_of({w for mine in by_pairs.values() for w in mine})
            for doc_id, mine in by_pairs.items():
                filed = pair_keys(mine, held) & pairs
                if filed - settled_pairs or shares(mine, filed):
                    kept.add(doc_id)
        return kept

    def _held(self, region: _Region, words: Iterable[str], counts: Mapping[str, int]
              ) -> dict[str, int]:
        """Blocking's count of each word: from ``counts``, else through the index."""
        words = set(words)
        missing = {word_key(w) for w in words if w not in counts} - set(region.doc_counts)
        if missing:
            works = alias_name(self.prefix, "works")
            region.doc_counts.update(neighbourhood.counts(self.client, works, missing))
        return {w: counts[w] if w in counts else region.doc_counts[word_key(w)] for w in words}

    @staticmethod
    def _resolve(atoms: list[Atom], decisions: list[Decision],
                 counted: tuple[dict[str, int], dict[str, int]] | None = None,
                 region: _Region | None = None) -> Resolution:
        counts, sizes = counted or (None, None)
        must_link = [d.pair for d in decisions if d.kind == JOIN]
        cannot_link = [d.pair for d in decisions if d.kind == APART]
        if region is not None:  # widened round after round: redo what the round added
            return region.resolution.resolve(atoms, must_link=must_link,
                                             cannot_link=cannot_link, counts=counts,
                                             sizes=sizes, sizes_moved=region.sizes_moved(),
                                             live=region.live, held=region.held().values())
        return resolve(atoms, must_link=must_link, cannot_link=cannot_link, counts=counts,
                       sizes=sizes)

    def _settle(self, region: _Region, resolution: Resolution, written: set[str],
                full: bool) -> tuple[int, int]:
        """Clear the marks this pass dealt with, conditionally: a document a crawl
        changed since (evidence the pass did not read, keys it did not handle, or a
        grouping that is not the resolution's) keeps its mark for the next round or
        pass. Returns (documents written, marked documents left unsettled). A full
        pass also stores the blocking keys of every document whose stored keys are
        missing or not what this version computes (written before keys were stored,
        or before blocking's keys changed): an incremental pass finds neighbours by
        them."""
        handled = region.handled()
        seen = {_plain(a) for a in region.all_atoms()}
        clusters = {frozenset(c) for c in resolution.clusters}
        ids = set(region.marked) | written | {
            d for d, read in region.docs.items() if read.hidden}
        if full:
            ids |= {d for d, read in region.docs.items() if read.keys_stale}
        works = alias_name(self.prefix, "works")
        actions = []
        unsettled = 0
        for doc_id, read in self.joiner._mget(works, ids).items():
            doc = read.doc
            if doc is None:
                continue
            marks = set(doc.get(neighbourhood.PENDING) or ())
            atoms = atoms_of([doc])
            settled = (marks <= handled and all(_plain(a) in seen for a in atoms)
                       and (doc_id in region.docs or doc_id in written)
                       and frozenset(a.work_id for a in atoms) in clusters)
            keys = doc_keys(atoms)
            unsettled += bool(marks) and not settled
            if ((marks or doc.get(HIDDEN)) and settled) or doc.get("blocking_keys") != keys:
                new = {k: v for k, v in doc.items()  # the pass decided: shown, unmarked
                       if not (k in (neighbourhood.PENDING, HIDDEN) and settled)}
                new["blocking_keys"] = keys
                actions.append({"_op_type": "index", "_index": read.index or works,
                                "_id": doc_id, "_source": new, "if_seq_no": read.seq[0],
                                "if_primary_term": read.seq[1]})
        tombstones = alias_name(self.prefix, TOMBSTONES_INDEX)
        for doc_id, read in self.joiner._mget(tombstones, region.tombstones).items():
            if read.doc is not None and set(read.doc.get(neighbourhood.PENDING) or ()) <= handled:
                new = {k: v for k, v in read.doc.items() if k != neighbourhood.PENDING}
                actions.append({"_op_type": "index", "_index": tombstones, "_id": doc_id,
                                "_source": new, "if_seq_no": read.seq[0],
                                "if_primary_term": read.seq[1]})
        # In parts, each document on its own: a full pass over an index whose every
        # document is marked (a bulk load) settles them all. A conflict: marked still.
        for start in range(0, len(actions), READ_PART):
            self.joiner._bulk(actions[start:start + READ_PART], JoinReport())
        return len(actions), unsettled

    def _apply(self, changes: Plan,
               resolution: Resolution, report: ResolutionReport, written: set[str]) -> int:
        conflicts = 0
        regroups = [(held, groups, [why_joined(wid, group, resolution)
                                    for group in groups for wid in group if wid != min(group)])
                    for held, groups in changes]
        done_all = [done for start in range(0, len(regroups), REGROUP_BATCH)
                    for done in self.joiner.regroup_many(regroups[start:start + REGROUP_BATCH])]
        for (held, groups), done in zip(changes, done_all, strict=True):
            if done.conflict:
                conflicts += 1
                continue
            written |= done.written
            if done.written or done.deleted:
                report.groups_changed += 1
                report.written += len(done.written)
                report.deleted += len(done.deleted)
                logger.info("works regrouped: %s -> %s", ", ".join(sorted(held)),
                            "; ".join(",".join(g) for g in groups))
        return conflicts


_APART = MatchDecision(False, 0.0, ("judged apart",))
_APART_ON_WORDING = MatchDecision(False, 0.0, ("judged apart",), on_wording=True)
_CONFLICT = MatchDecision(False, 0.0, ("judged apart",), conflict=True)


def _judge(a: Features, b: Features) -> MatchDecision:
    """``decide_features``, of a pair judged apart keeping only whether that is a
    conflict or rests on the wording alone: all that clustering reads of it (a work's
    links are its matches), and a region keeps hundreds of thousands."""
    found = decide_features(a, b)
    if found.match:
        return found
    return _CONFLICT if found.conflict else _APART_ON_WORDING if found.on_wording else _APART


@dataclass(frozen=True)
class _Read:
    """What a pass keeps of a work document it read (``_Region.add``): not its source."""

    atoms: list[Atom]
    # Each atom's keys, and every key of the document: tuples, as a region holds tens of
    # thousands of documents of some 40 keys each (a set's table is six times the size).
    atom_keys: list[tuple[str, ...]]
    keys: tuple[str, ...]
    work_ids: list[str]
    hidden: bool  # written hidden (``unresolved.HIDDEN``): the pass decides to show it
    keys_stale: bool  # its stored blocking keys are not those computed

    @classmethod
    def of(cls, source: Mapping[str, Any], trust_stored: bool = False) -> _Read:
        """``trust_stored``: a document of one atom keeps the keys stored on it, one
        string per key for the whole pass, rather than computing them (an incremental
        pass found it by them; a full pass computes them and rewrites those stale)."""
        atoms = atoms_of([source])
        stored = source.get(neighbourhood.KEYS)
        if trust_stored and stored and len(atoms) == 1:
            every = tuple(map(sys.intern, stored))
            return cls(atoms, [every], every, doc_work_ids(source), bool(source.get(HIDDEN)),
                       False)
        keys = [tuple(atom_keys(atom)) for atom in atoms]
        every = keys[0] if len(keys) == 1 else tuple(frozenset().union(*keys))
        return cls(atoms, keys, every, doc_work_ids(source), bool(source.get(HIDDEN)),
                   stored != sorted(every))


class _Counts(dict[str, int]):
    """``_Region.doc_counts``: it remembers the keys counted since ``counted`` last read
    them (``update`` is how every count is stored)."""

    def __init__(self) -> None:
        super().__init__()
        self.updated: set[str] = set()

    def update(self, other: Mapping[str, int]) -> None:  # type: ignore[override]
        self.updated.update(other)
        super().update(other)


@dataclass
class _Region:
    """The documents a pass reads, and what an incremental pass knows of the rest."""

    docs: dict[str, _Read] = field(default_factory=dict)  # in the order read
    trust_stored: bool = False  # ``_Read.of``'s: an incremental pass's region
    marked: dict[str, set[str]] = field(default_factory=dict)  # doc id -> its pending keys
    tombstones: dict[str, set[str]] = field(default_factory=dict)  # work gone: its keys
    tombstone_atoms: dict[str, int] = field(default_factory=dict)  # at most, per work gone
    widened: set[str] = field(default_factory=set)  # keys whose holders were read
    # A settled block whose holders were kept only where they pair with an atom of some
    # documents -> those documents (the others were not asked).
    filtered: dict[str, frozenset[str]] = field(default_factory=dict)
    # The change's words whose count may have crossed a boundary of blocking's reading
    # of it (``moved_words``), from the first widening on.
    moved: dict[str, tuple[int, int]] | None = None
    # Documents holding a key; a pair key's counted only up to ``enough``.
    doc_counts: _Counts = field(default_factory=_Counts)
    # Each atom's features and words, built once: the widening rounds read them again,
    # and a region outgrows ``features``' cache.
    _features: dict[Atom, Features] = field(default_factory=dict)
    _words: dict[Atom, frozenset[str]] = field(default_factory=dict)
    _filings: dict[Atom, Filing] = field(default_factory=dict)  # its keys, as blocking reads them
    # Each widening round resolves the region again, a few hundred atoms larger: what the
    # round before found is kept where the atoms added cannot change it.
    _resolution: GrowingResolution | None = None
    # ``counted``'s tallies of the keys of the documents here, and how many it has read;
    # each word's total, and the words whose total crossed a step of blocking's reading
    # since the pairs of words were filed.
    _local_atoms: dict[str, int] = field(default_factory=dict)
    _local_docs: dict[str, int] = field(default_factory=dict)
    _counted: int = 0
    _word_totals: dict[str, int] = field(default_factory=dict)
    _crossed_words: set[str] = field(default_factory=set)
    # Blocking's sizes of the blocks here (``counted``'s), one mapping kept up to date:
    # the resolution reads which crossed the cap from ``sizes_moved``.
    _sizes: dict[str, int] = field(default_factory=dict)
    _sizes_moved: set[str] = field(default_factory=set)
    # The pairs of words each atom (by id: the region keeps them) is filed under, how many
    # atoms each pair files, and the documents filed so far; the atoms and documents
    # holding both words of each pair sized, and the documents tallied so far.
    _filed_of: dict[int, tuple[str, ...]] = field(default_factory=dict)
    _filed: dict[str, int] = field(default_factory=dict)
    _filed_docs: int = 0
    _both: dict[str, list[int]] = field(default_factory=dict)
    _both_docs: int = 0
    _changes_by_word: dict[str, list[tuple[int, set[str]]]] | None = None  # ``pair_slack``'s
    # Of leave-one-out keys past the cap: the words their holders leave out, with the
    # documents holding each (``neighbourhood.left_out``), and the (key, left-out word)
    # whose holders a typo apart were read (``ResolutionPass._widen_near``).
    left_out: dict[str, dict[str, int]] = field(default_factory=dict)
    near_read: set[tuple[str, str]] = field(default_factory=set)
    _marks_near: bool = False  # the changes' own left-out words were asked for
    # The work_ids whose every pair an incremental pass decides (``GrowingResolution``'s
    # ``live``): the change's, those whose pairs may differ from the last pass's
    # (``unsettled``), and those of documents the resolution moves. Any other pair of
    # two atoms here is as the last pass decided it, and their documents its groups.
    live: set[str] = field(default_factory=set)

    def features(self, atom: Atom) -> Features:
        found = self._features.get(atom)
        if found is None:
            found = self._features[atom] = features(atom)
        return found

    @property
    def resolution(self) -> GrowingResolution:
        """The region's resolution, round after round (its caches are this region's)."""
        if self._resolution is None:
            self._resolution = GrowingResolution(judge=_judge, features_of=self.features,
                                                 filing_of=self.filing)
        return self._resolution

    def words(self, atom: Atom) -> frozenset[str]:
        """``atoms.atom_words``, kept."""
        found = self._words.get(atom)
        if found is None:
            found = self._words[atom] = atom_words(atom, self.features)
        return found

    def filing(self, atom: Atom) -> Filing:
        """The atom's blocking keys: those its document was read with (``add``), or for an
        atom pooled from two documents, its own."""
        found = self._filings.get(atom)
        if found is None:
            feats = self.features(atom)
            found = self._filings[atom] = Filing.of_titles(feats.titles, feats.surnames)
        return found

    def near_unread(self, doc_ids: Iterable[str]) -> set[tuple[str, str]]:
        """Each leave-one-out key and left-out word of the documents' atoms (and, the
        first time, of the changes' marks: a key the change took away) whose holders a
        typo apart were not read yet."""
        wanted = {(key, word) for doc_id in doc_ids for atom in self.atoms(doc_id)
                  for key, words in left_out_blocks(self.features(atom).titles).items()
                  for word in words}
        if not self._marks_near:
            self._marks_near = True
            for _, marks in self.changes():
                held = {m[2:] for m in marks if m.startswith("w:")}
                for key in (m for m in marks if is_left_out(m)):
                    wanted |= {(key, w) for w in held.difference(key[3:].split(" "))}
        slack = self.slack()  # a block known within the cap is read whole (``_widen``)
        return {(key, word) for key, word in wanted - self.near_read
                if self.doc_counts.get(key, MAX_POSTING + 1) > MAX_POSTING + slack.get(key, 0)}

    def read_left_out(self, client: OpenSearch, index: str, keys: Iterable[str]) -> None:
        """``left_out`` of the keys not read yet."""
        missing = set(keys) - self.left_out.keys()
        if missing:  # each counted by now (``count``, ``counted``)
            self.left_out.update(neighbourhood.left_out(
                client, index, {key: self.doc_counts.get(key, 0) for key in missing}))

    def near_sizes(self, resolver: ResolutionPass, sizes: Mapping[str, int]) -> dict[str, int]:
        """The size of each part of a leave-one-out block past the cap
        (``blocking.near_blocks``) that two atoms here are in, sized as other blocks are:
        the atoms here, and each other document of the index in it as one atom."""
        past = {k for k, size in sizes.items() if size > MAX_POSTING and is_left_out(k)}
        if not past:
            return {}
        atoms_in: dict[str, int] = {}
        docs_in: dict[str, int] = {}
        for read in self.docs.values():
            names: set[str] = set()
            for atom, keys in zip(read.atoms, read.atom_keys, strict=True):
                for key in past.intersection(keys):
                    for name in near_blocks(key, left_out_words(self.features(atom).titles, key)):
                        atoms_in[name] = atoms_in.get(name, 0) + 1
                        names.add(name)
            for name in names:
                docs_in[name] = docs_in.get(name, 0) + 1
        shared = {name for name, atoms in atoms_in.items() if atoms > 1}
        missing = shared - self.doc_counts.keys()
        if missing:
            works = alias_name(resolver.prefix, "works")
            self.read_left_out(resolver.client, works, {near_block_key(n) for n in missing})
            parts = {}
            for name in missing:
                key = near_block_key(name)
                spelling = name[len(key) + 1:]
                parts[name] = (key, [w for w in self.left_out[key] if spelling in spellings(w)])
            self.doc_counts.update(neighbourhood.near_counts(resolver.client, works, parts))
        return {name: atoms_in[name] + max(0, self.doc_counts[name] - docs_in[name])
                for name in shared}

    def add(self, hits: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Documents read (id, source): what the pass needs of each is kept, its atoms'
        features, words and blocking keys built now, while the engine reads the next answer
        (``scan.fetch_each``): the resolution needs them all."""
        for doc_id, source in hits:
            read = self.docs[doc_id] = _Read.of(source, self.trust_stored)
            for atom, keys in zip(read.atoms, read.atom_keys, strict=True):
                self._filings[atom] = Filing.of(keys, self.words(atom))

    def all_atoms(self) -> list[Atom]:
        """The atoms of every document here, the same objects round after round (the
        caches above are keyed by them). A work_id in two documents (a regroup's delete
        lost to a crawl) gives two atoms, which ``resolve`` pools."""
        return [atom for read in self.docs.values() for atom in read.atoms]

    def atom_lists(self) -> Iterator[list[Atom]]:
        """Each document's atoms."""
        return (read.atoms for read in self.docs.values())

    def atoms(self, doc_id: str) -> list[Atom]:
        return self.docs[doc_id].atoms

    def keys(self, doc_id: str) -> tuple[str, ...]:
        """The document's blocking keys (``_Read.of``: as stored, or computed)."""
        return self.docs[doc_id].keys

    def slack(self) -> dict[str, int]:
        """Key -> how far its count may have moved since the last pass: the atoms of the
        changed documents and works gone whose marks carry it (a document's ``work_ids``
        keeps every id it held, so it bounds the atoms it gained or lost; a work gone
        held at most one per profile it was unlisted from)."""
        slack: dict[str, int] = {}
        for atoms, marks in self.changes():
            for key in marks:
                slack[key] = slack.get(key, 0) + atoms
        return slack

    def changes(self) -> Iterator[tuple[int, set[str]]]:
        """Each changed document and work gone: the atoms it may have gained or lost
        (``slack``), and its marks."""
        for doc_id, marks in self.marked.items():
            yield max(1, len(self.docs[doc_id].work_ids)) if doc_id in self.docs else 1, marks
        for doc_id, marks in self.tombstones.items():
            yield self.tombstone_atoms.get(doc_id, 1), marks

    def pair_slack(self, key: str) -> int:
        """How far the count of documents holding both words of a pair key may have
        moved: the atoms of the changes whose marks carry both words."""
        if self._changes_by_word is None:  # every mark is read before the first widening
            self._changes_by_word = {}
            for atoms, marks in self.changes():
                for mark in marks:
                    if mark.startswith("w:"):
                        self._changes_by_word.setdefault(mark, []).append((atoms, marks))
        first, second = map(word_key, pair_key_words(key))
        return sum(atoms for atoms, marks in self._changes_by_word.get(first, ())
                   if second in marks)

    def enough(self, key: str) -> int:
        """A pair key's count at which its reading stops changing: past the cap by more
        than the change may have moved it (``pair_slack``), every test of it is "past"."""
        return MAX_POSTING + self.pair_slack(key) + 1

    def count(self, client: OpenSearch, index: str, keys: AbstractSet[str]) -> None:
        """Count the ``keys`` not counted yet through the index into ``doc_counts``, each
        pair key only as far as ``enough``: a pair of common words is held by thousands of
        documents."""
        keys = keys - self.doc_counts.keys()
        if keys:
            enough = {k: self.enough(k) for k in keys if is_pair_key(k)}
            self.doc_counts.update(neighbourhood.counts(client, index, keys, enough))

    def moved_words(self, counts: Mapping[str, int]) -> dict[str, tuple[int, int]]:
        """The words of the change whose count may have crossed a boundary of
        ``blocking.crossed`` since the last pass, each with the range its count was in
        then and is in now. ``counts``: blocking's counts now (word -> atoms,
        ``counted``; a word no document here holds yet, as a change of works gone alone
        leaves it, is as many atoms as the index's documents holding it)."""
        ranges = {}
        for key, moved in self.slack().items():
            if key.startswith("w:"):
                now = counts.get(key[2:], self.doc_counts.get(key, 0))
                ranges[key[2:]] = (max(0, now - moved), now + moved)
        return {word: span for word, span in ranges.items() if crossed(*span)}

    def rechosen(self, doc_ids: Iterable[str], moved: Mapping[str, tuple[int, int]],
                 counts: Mapping[str, int]) -> set[str]:
        """The documents whose atoms may block otherwise than at the last pass
        (``looks_up_otherwise``)."""
        return {doc_id for doc_id in doc_ids if any(
            self.looks_up_otherwise(atom, moved, counts) for atom in self.atoms(doc_id))}

    def looks_up_otherwise(self, atom: Atom, moved: Mapping[str, tuple[int, int]],
                           counts: Mapping[str, int]) -> bool:
        """Whether the atom holds a moved word whose ``blocking.lookups`` differ between
        the ends of its range. A word's rank only rises with its count, so an atom that
        looks up the same words at both ends does so throughout; an atom holding two
        moved words, or one that crosses whether blocking may use it at all, is taken
        as changed."""
        words = self.words(atom)
        held = [w for w in words if w in moved]
        if len(held) != 1:
            return bool(held)
        low, high = moved[held[0]]
        if low <= 1 < high or low <= MAX_POSTING < high:
            return True
        now = {w: counts.get(w, 0) for w in words}
        return lookups(words, {**now, held[0]: low}) != lookups(words, {**now, held[0]: high})

    def unsettled(self, counts: Mapping[str, int], sizes: Mapping[str, int]) -> set[str]:
        """The work_ids of the atoms here that blocking may pair otherwise than at the
        last pass, whatever they are paired with: filed under a block whose size the
        change may have taken across the cap (``slack``), holding a word whose count it
        may have moved where that may change what the atom looks up
        (``looks_up_otherwise``), or held by two documents (``plan`` merges them)."""
        slack = self.slack()

        def across(number: int, moved: int) -> bool:
            return crossed_cap(max(0, number - moved), number + moved)

        moved_words = self.moved_words(counts)
        keys = {key for key, moved in slack.items() if key in sizes and across(sizes[key], moved)}
        changed_words = {key[2:] for key in slack if key.startswith("w:")}
        pairs = set()
        for key, size in sizes.items():
            if is_left_out(key) and "~" in key:  # a part moves with its block's holders
                base = near_block_key(key)
                if across(size, slack.get(base, 0)):
                    keys.add(base)
            elif (is_pair_key(key) and changed_words.issuperset(pair_key_words(key))
                  and across(size, self.pair_slack(key))):
                pairs.add(key)
        found = {atom.work_id for atom in self.all_atoms()
                 if holds(self.filing(atom), set(), keys, {})
                 or not pairs.isdisjoint(self._filed_of.get(id(atom), ()))
                 or (not moved_words.keys().isdisjoint(self.words(atom))
                     and self.looks_up_otherwise(atom, moved_words, counts))}
        seen: set[str] = set()
        for read in self.docs.values():
            ids = {atom.work_id for atom in read.atoms}
            found |= seen & ids
            seen |= ids
        return found

    def filed_under(self, keys: AbstractSet[str], doc_ids: AbstractSet[str],
                    held_of: Callable[[Iterable[str]], Mapping[str, int]]
                    ) -> dict[str, list[frozenset[str]]]:
        """Pair key of ``keys`` -> the words of each atom of ``doc_ids`` filed under it."""
        wanted = {w for key in keys for w in pair_key_words(key)}
        holding = [atom for doc_id in doc_ids for atom in self.docs[doc_id].atoms
                   if len(self.words(atom) & wanted) > 1]
        held = held_of({w for atom in holding for w in self.words(atom)})
        here: dict[str, list[frozenset[str]]] = {}
        for atom in holding:
            for key in pair_keys(self.words(atom), held) & keys:
                here.setdefault(key, []).append(self.words(atom))
        return here

    def reopen(self, doc_ids: Iterable[str], counts: Mapping[str, int]) -> None:
        """Mark unread the settled blocks the documents' atoms file under whose holders
        were kept without checking against them (``filtered``), so that the next
        widening reads them for these too."""
        late = set()
        for doc_id in doc_ids:
            keys = {*self.keys(doc_id), *(key for atom in self.atoms(doc_id)
                                          for key in pair_keys(self.words(atom), counts))}
            late |= {key for key in keys if doc_id not in self.filtered.get(key, (doc_id,))}
        self.widened -= late

    def holding(self, keys: AbstractSet[str], doc_ids: AbstractSet[str]
                ) -> tuple[dict[str, list[frozenset[str]]], dict[str, int]]:
        """Key of ``keys`` -> the words of each atom of ``doc_ids`` holding it, and the
        number of atoms here holding it beyond one per document."""
        words: dict[str, list[frozenset[str]]] = {}
        extra: dict[str, int] = {}
        if not keys:
            return words, extra
        for doc_id, read in self.docs.items():
            if len(read.atoms) > 1:
                for key in [k for k in read.keys if k in keys]:
                    extra[key] = extra.get(key, 0) + sum(key in held for held in read.atom_keys) - 1
            if doc_id in doc_ids:
                for atom, held in zip(read.atoms, read.atom_keys, strict=True):
                    for key in [k for k in held if k in keys]:
                        words.setdefault(key, []).append(self.words(atom))
        return words, extra

    def held(self) -> dict[str, list[str]]:
        """Document id -> the work_ids it holds (``plan``'s input)."""
        return {doc_id: read.work_ids for doc_id, read in self.docs.items()}

    def handled(self) -> set[str]:
        return {k for keys in (*self.marked.values(), *self.tombstones.values()) for k in keys}

    def counted(self, resolver: ResolutionPass, pairs: bool = True
                ) -> tuple[dict[str, int], dict[str, int]]:
        """Blocking's counts over the whole index: atoms here counted one by one, each
        other document holding a key as one atom (as almost all are). Without ``pairs``,
        the blocks of pairs of words are not sized. Each call gives new mappings."""
        # Documents are only ever added to the region: tally those added since, and work
        # out again the totals of their keys and of those counted through the index since.
        local_atoms, local_docs = self._local_atoms, self._local_docs
        touched: set[str] = set()
        for read in itertools.islice(self.docs.values(), self._counted, None):
            touched.update(read.keys)
            for key in read.keys:
                local_docs[key] = local_docs.get(key, 0) + 1
            for keys in read.atom_keys:
                for key in keys:
                    local_atoms[key] = local_atoms.get(key, 0) + 1
        self._counted = len(self.docs)
        # A block pairs only atoms filed under it, so a key one atom here holds pairs
        # nothing here, whatever its size: only words (their rarity decides what an
        # atom looks up) and keys two atoms share are counted through the index.
        missing = {k for k in touched
                   if local_atoms[k] > 1 or k.startswith("w:")} - self.doc_counts.keys()
        if missing:
            works = alias_name(resolver.prefix, "works")
            self.doc_counts.update(neighbourhood.counts(resolver.client, works, missing))
        touched |= self.doc_counts.updated & local_atoms.keys()
        self.doc_counts.updated.clear()
        words = self._word_totals
        for key in touched:
            total = local_atoms[key] + max(0, self.doc_counts.get(key, 0) - local_docs.get(key, 0))
            if key.startswith("w:"):
                before = words.get(key[2:], 0)
                words[key[2:]] = total
                if crossed(before, total):
                    self._crossed_words.add(key[2:])
            else:
                self._size(key, total)
        sizes = self._sizes
        for name, part in self.near_sizes(resolver, sizes).items():
            self._size(name, part)
        counts = dict(words)  # a few thousand words: the resolution compares them with the last
        if not pairs:
            return counts, sizes
        # A pair of rare words pairs the atoms filed under it (two at least) when the
        # documents holding both words are within the cap.
        shared = self._filed_pairs(counts)
        works = alias_name(resolver.prefix, "works")
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="count-pairs") as pool:
            counting = pool.submit(self.count, resolver.client, works, shared)
            both = self._holding_both(shared)  # while the engine counts
            counting.result()

        def size(key: str) -> int:
            atoms, docs = both[key]
            return atoms + max(0, self.doc_counts[key] - docs)

        # A count that stopped at ``enough`` is a floor: where that floor leaves the block
        # within the cap (atoms here sharing documents), it is counted to the end.
        floors = {k for k in shared
                  if self.doc_counts[k] >= self.enough(k) and size(k) <= MAX_POSTING}
        if floors:
            self.doc_counts.update(neighbourhood.counts(resolver.client, works, floors))
        for key in shared:
            self._size(key, size(key))
        return counts, sizes

    def _size(self, key: str, size: int) -> None:
        """Store a block's size in ``_sizes``, noting one that crossed the cap
        (``GrowingResolution``'s ``sizes_moved``)."""
        before = self._sizes.get(key)
        self._sizes[key] = size
        if before is not None and crossed_cap(before, size):
            self._sizes_moved.add(key)

    def sizes_moved(self) -> set[str]:
        """The blocks whose size crossed the cap since this was last asked."""
        moved, self._sizes_moved = self._sizes_moved, set()
        return moved

    def _filed_pairs(self, counts: Mapping[str, int]) -> set[str]:
        """The pairs of rare words two atoms here or more are filed under
        (``atoms.filed_pairs``), kept up to date: an atom added, or holding a word whose
        count crossed a step of blocking's reading since, is filed again."""
        added = [atom for read in itertools.islice(self.docs.values(), self._filed_docs, None)
                 for atom in read.atoms]
        self._filed_docs = len(self.docs)
        again = self._crossed_words
        if again:
            added += [atom for atom in self.all_atoms()
                      if id(atom) in self._filed_of and not again.isdisjoint(self.words(atom))]
            self._crossed_words = set()
        filed = self._filed
        for atom in added:
            for key in self._filed_of.get(id(atom), ()):
                filed[key] -= 1
            keys = self._filed_of[id(atom)] = tuple(pair_keys(self.words(atom), counts))
            for key in keys:
                filed[key] = filed.get(key, 0) + 1
        return {key for key, atoms in filed.items() if atoms > 1}

    def _holding_both(self, keys: AbstractSet[str]) -> dict[str, list[int]]:
        """For each pair key of ``keys`` (and each asked before), the atoms and documents
        here holding both its words (``atoms.holding_both``), kept up to date."""
        both = self._both
        for read in itertools.islice(self.docs.values(), self._both_docs, None):
            held: set[str] = set()
            for atom in read.atoms:
                for first, second in itertools.combinations(sorted(self.words(atom)), 2):
                    key = pair_key(first, second)
                    if key in both:
                        both[key][0] += 1
                        held.add(key)
            for key in held:
                both[key][1] += 1
        self._both_docs = len(self.docs)
        new = keys - both.keys()
        if new:
            atoms_both, docs_both = holding_both(self.atom_lists(), new, self.words)
            both.update((key, [atoms_both[key], docs_both[key]]) for key in new)
        return both

    def pair_keys(self, doc_ids: Iterable[str], counts: Mapping[str, int]
                  ) -> tuple[set[str], set[str]]:
        """The pairs of rare words the documents' atoms file under, and (apart) every
        other pair of their words whose block a change may have taken across the cap
        (each word held by as many atoms as the cap less the change's slack at least):
        ``_widen`` reads the second only when its count is that near the cap."""
        docs = [self.docs[d] for d in doc_ids]
        filed = set(filed_pairs((read.atoms for read in docs), counts, self.words))
        near: set[str] = set()
        slack = self.slack()
        for atom in (atom for read in docs for atom in read.atoms):
            words = sorted(w for w in self.words(atom)
                           if counts.get(w, 0) + slack.get(word_key(w), 0) > MAX_POSTING)
            near |= {k for a, b in itertools.combinations(words, 2)
                     if self.pair_slack(k := pair_key(a, b))}
        return filed, near - filed


def _near_words(left_out: Mapping[str, int], mine: frozenset[str], limit: int) -> set[str]:
    """Of the words a leave-one-out block's holders leave out (word -> documents), those
    sharing a spelling of ``mine`` where that part of the block holds at most ``limit``."""
    near = {word: spellings(word) & mine for word in left_out}
    near = {word: shared for word, shared in near.items() if shared}
    size = {spelling: sum(left_out[w] for w, shared in near.items() if spelling in shared)
            for spelling in mine}
    return {word for word, shared in near.items() if any(size[s] <= limit for s in shared)}


def _shares(a: frozenset[str], b: frozenset[str]) -> bool:
    """Blocking's share test: enough distinctive words in common to be paired."""
    return len(a & b) >= words_needed(len(a), len(b))


def _plain(atom: Atom) -> Atom:
    """The atom without its verified keys, which follow the document it is in."""
    return replace(atom, strong_keys=())


def why_joined(work_id: str, group: list[str], resolution: Resolution) -> ResolutionLink:
    """The link that records why ``work_id`` is in ``group``'s document."""
    canonical = min(group)
    link = resolution.links.get(work_id)
    if link is None:
        return resolution_link(work_id, canonical, "match")
    if link.strength is Strength.MANUAL:  # the pass's only must-links: ops'
        return resolution_link(work_id, canonical, "manual", evidence=["joined by hand"])
    by = "identity" if link.strength is Strength.KEY else "match"
    return resolution_link(work_id, canonical, by, link.score, link.evidence)
