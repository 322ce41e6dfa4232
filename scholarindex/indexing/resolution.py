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

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.resolution import Atom, Resolution, resolve
from scholarindex.core.resolution.cluster import MUST_LINK as OPS_JOINED
from scholarindex.core.resolution.decide import SHARED_KEY
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.decisions import APART, JOIN, Decision, DecisionStore
from scholarindex.indexing.documents import doc_work_ids, resolution_link
from scholarindex.indexing.identity import WorkJoiner, identity_keys
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.scan import refresh, scan
from scholarindex.indexing.shapes import ResolutionLink

logger = logging.getLogger(__name__)

# What the pass reads of each work document.
SOURCE_FIELDS = ["work_id", "work_ids", "listings", "arxiv_id", "arxiv", "enrichment",
                 "resolution"]
PLAN_ROUNDS = 3  # plan and apply again while crawls keep changing what the pass read
# A work of this many work_ids (spellings of one title) is logged as a warning: one paper
# is rarely printed so many ways, and a title rule gone wrong (a generic title joining
# unrelated listings) shows first as one work that keeps growing.
LARGE_WORK = 50


@dataclass
class ResolutionReport:
    """What one pass found and did."""

    documents: int = 0  # work documents read
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


def atoms_of(docs: Iterable[Mapping[str, Any]]) -> list[Atom]:
    """One atom per ``work_id`` with listings: its listings' evidence, sorted by id.

    An id holds the verified arXiv id and DOI of its document when it is the
    document's own id or joined it by that identity; ids the pass joined by matching
    do not, so a later pass can still take them out again.
    """
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for doc in docs:
        doc_id = str(doc["work_id"])
        matched = {link["work_id"] for link in doc.get("resolution") or ()
                   if link.get("by") != "identity"}
        strong = tuple(identity_keys(doc))
        for entry in doc.get("listings") or ():
            wid = str(entry.get("work_id") or doc_id)
            grouped.setdefault(wid, []).append(entry)
            keys[wid] = () if wid in matched else strong
    return [_atom(wid, grouped[wid], keys[wid]) for wid in sorted(grouped)]


def _atom(work_id: str, listings: list[Mapping[str, Any]], strong: tuple[str, ...]) -> Atom:
    def values(name: str) -> tuple[Any, ...]:
        return tuple(sorted({e[name] for e in listings if e.get(name) not in (None, "")}))

    return Atom(
        work_id=work_id,
        titles=values("title"),
        authors=tuple(sorted({a for e in listings for a in e.get("authors") or ()
                              if isinstance(a, str)})),
        authors_truncated=any(e.get("authors_truncated") for e in listings),
        owners=values("researcher_name"),
        years=tuple(y for y in values("year") if isinstance(y, int)),
        venues=values("venue"),
        types=values("type"),
        strong_keys=strong,
        profiles=values("researcher_id"),
    )


def plan(held: Mapping[str, Iterable[str]], clusters: Iterable[Iterable[str]]
         ) -> list[tuple[dict[str, set[str]], list[list[str]]]]:
    """The changes that make each cluster one document. Pure.

    ``held``: document id -> the work_ids it holds. Documents that share a cluster,
    transitively, form a component; each component whose documents are not already
    its clusters is returned with its clusters (sorted), in a stable order.
    """
    sets = {doc_id: set(ids) for doc_id, ids in held.items()}
    doc_of = {wid: doc_id for doc_id, ids in sets.items() for wid in ids}
    parent = {doc_id: doc_id for doc_id in sets}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    placed = []
    for cluster in sorted(sorted(c) for c in clusters):
        docs = sorted({doc_of[w] for w in cluster if w in doc_of})
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
        self.joiner = WorkJoiner(client, prefix, policy, layout=layout)
        self.decisions = DecisionStore(client, prefix, layout)

    def run(self, dry_run: bool = False) -> ResolutionReport:
        """One pass; ``dry_run`` plans without writing. Raises ``IndexUnavailable``."""
        started = time.monotonic()
        report = ResolutionReport()
        decisions = self.decisions.all()
        report.decisions = len(decisions)
        for round_number in range(1, PLAN_ROUNDS + 1):
            docs = self._read()
            report.documents = len(docs)
            resolution = self._resolve(docs.values(), decisions)
            report.atoms = sum(len(c) for c in resolution.clusters)
            report.works = len(resolution.clusters)
            largest = max(resolution.clusters, key=len, default=())
            report.largest_work, report.largest_work_id = len(largest), min(largest, default=None)
            held = {doc_id: doc_work_ids(doc) for doc_id, doc in docs.items()}
            changes = plan(held, resolution.clusters)
            if dry_run:
                report.changes = [{"documents": sorted(h), "works": g} for h, g in changes]
                report.groups_changed = len(changes)
                break
            conflicts = self._apply(changes, resolution, report)
            report.conflicts = conflicts
            if not conflicts:
                break
            logger.info("resolution pass: %d group(s) changed while planned, round %d of %d",
                        conflicts, round_number, PLAN_ROUNDS)
        if report.groups_changed and not dry_run:
            # Searches show the regrouped works now rather than at the next refresh: ops
            # look at the UI right after `works resolve`, and a crawl's pass runs once.
            refresh(self.client, alias_name(self.prefix, "works"))
        if report.largest_work >= LARGE_WORK:
            logger.warning("resolution pass: work %s holds %d work ids (a generic title joining "
                           "unrelated listings?); `scholarindex works explain %s` shows them",
                           report.largest_work_id, report.largest_work, report.largest_work_id)
        report.seconds = round(time.monotonic() - started, 3)
        return report

    def _read(self) -> dict[str, dict[str, Any]]:
        works = alias_name(self.prefix, "works")
        refresh(self.client, works)  # the crawl's last writes, searchable
        body = {"query": {"match_all": {}}, "_source": SOURCE_FIELDS}
        return {hit["_id"]: hit["_source"] for hit in scan(self.client, works, body)}

    @staticmethod
    def _resolve(docs: Iterable[Mapping[str, Any]], decisions: list[Decision]) -> Resolution:
        return resolve(atoms_of(docs),
                       must_link=[d.pair for d in decisions if d.kind == JOIN],
                       cannot_link=[d.pair for d in decisions if d.kind == APART])

    def _apply(self, changes: list[tuple[dict[str, set[str]], list[list[str]]]],
               resolution: Resolution, report: ResolutionReport) -> int:
        conflicts = 0
        for held, groups in changes:
            links = [why_joined(wid, group, resolution)
                     for group in groups for wid in group if wid != min(group)]
            done = self.joiner.regroup(held, groups, links)
            if done.conflict:
                conflicts += 1
                continue
            if done.written or done.deleted:
                report.groups_changed += 1
                report.written += len(done.written)
                report.deleted += len(done.deleted)
                logger.info("works regrouped: %s -> %s", ", ".join(sorted(held)),
                            "; ".join(",".join(g) for g in groups))
        return conflicts


def why_joined(work_id: str, group: list[str], resolution: Resolution) -> ResolutionLink:
    """The link that records why ``work_id`` is in ``group``'s document."""
    canonical = min(group)
    link = resolution.links.get(work_id)
    if link is None:
        return resolution_link(work_id, canonical, "match")
    if set(OPS_JOINED.evidence) <= set(link.evidence):  # the pass's only must-links: ops'
        return resolution_link(work_id, canonical, "manual", evidence=["joined by hand"])
    by = "identity" if any(e.startswith(SHARED_KEY) for e in link.evidence) else "match"
    return resolution_link(work_id, canonical, by, link.score, link.evidence)
