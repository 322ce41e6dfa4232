"""``scholarindex works``: see why listings are one work, and overrule the matcher.

- ``resolve [--dry-run] [--full]``: run the resolution pass now (a finished crawl runs it
  too): incremental (what changed since the last pass), or over every document;
- ``explain ID``: the work document holding a work_id, its listings, and why each
  work_id joined it;
- ``compare A B``: what the matcher reads of two work_ids' listings and its verdict on
  them, for "why are these two works?" as much as "why one?";
- ``review [--limit N]``: the matcher's joins on the thinnest evidence first (weak
  before strong, then the lowest score), for ops to check and keep apart where wrong;
- ``keep-apart A B`` / ``join A B``: record a decision (``scholarindex.indexing.decisions``) and run
  the pass, so the index follows at once; every later pass keeps to it;
- ``forget A B``: drop the decisions on a pair; ``decisions``: list them.
"""

from __future__ import annotations

import heapq
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.resolution import Atom
from scholarindex.core.resolution import decide as judge
from scholarindex.core.resolution.model import Strength
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.decisions import Decision, DecisionStore
from scholarindex.indexing.identity import WorkJoiner
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.resolution import ResolutionPass, ResolutionReport, atoms_of
from scholarindex.indexing.scan import refresh, scan
from scholarindex.indexing.shapes import WorkDoc, work_of
from scholarindex.ops.settings import OpsSettings


def resolve(settings: OpsSettings, dry_run: bool = False, full: bool = False,
            seeds: tuple[str, ...] = ()) -> ResolutionReport:
    """The resolution pass: ``full``, or for what crawls changed (``run_pending``)."""
    resolver = ResolutionPass(settings.client(), settings.prefix, settings.writer_retry,
                              settings.opensearch.layout)
    if full:
        return resolver.run(dry_run, full=True, seeds=seeds)
    return resolver.run_pending(dry_run, seeds=seeds)


def decide(settings: OpsSettings, decision: Decision) -> ResolutionReport:
    """Record ``decision``, then resolve the pair's works so the index follows it."""
    DecisionStore(settings.client(), settings.prefix,
                  settings.opensearch.layout).record(decision)
    return resolve(settings, seeds=(decision.a, decision.b))


def forget(settings: OpsSettings, first: str, second: str) -> int:
    return DecisionStore(settings.client(), settings.prefix,
                         settings.opensearch.layout).forget(first, second)


def decisions(settings: OpsSettings) -> list[Decision]:
    return DecisionStore(settings.client(), settings.prefix,
                         settings.opensearch.layout).all()


def explain(settings: OpsSettings, work_id: str) -> dict[str, Any] | None:
    """The document holding ``work_id`` (directly or through a redirect), summarised."""
    client = settings.client()
    doc = _holder(client, settings, work_id)
    if doc is None:
        return None
    why = {link["work_id"]: link for link in doc.get("resolution") or ()}
    listings: list[dict[str, Any]] = [
        {"work_id": e.get("work_id") or doc["work_id"], "title": e.get("title"),
         "researcher": e.get("researcher_name"), "researcher_url": e.get("researcher_url"),
         "year": e.get("year"), "venue": e.get("venue"), "authors": e.get("authors")}
        for e in doc.get("listings") or ()]
    return {"work_id": doc["work_id"], "title": doc.get("title"), "asked": work_id,
            "work_ids": doc.get("work_ids") or [doc["work_id"]], "arxiv_id": doc.get("arxiv_id"),
            "listings": listings,
            "joined": [why.get(wid) or {"work_id": wid, "by": "title",
                                        "evidence": ["the same title"]}
                       for wid in sorted({item["work_id"] for item in listings})
                       if wid != doc["work_id"]]}


def compare(settings: OpsSettings, first: str, second: str) -> dict[str, Any]:
    """Two work_ids side by side: the work holding each, the evidence the matcher reads
    of each one's listings, its verdict on the pair and ops' decisions on it.

    Raises ``LookupError`` naming a work_id no work holds (or whose listings are gone).
    """
    client = settings.client()
    holder_of: dict[str, str] = {}
    docs: dict[str, WorkDoc] = {}
    for wid in (first, second):
        if (doc := _holder(client, settings, wid)) is not None:
            holder_of[wid] = doc["work_id"]
            docs[doc["work_id"]] = doc
    atoms = {atom.work_id: atom for atom in atoms_of(docs.values())}
    if missing := [wid for wid in (first, second) if wid not in atoms]:
        raise LookupError(missing[0])
    verdict = judge(atoms[first], atoms[second])
    pair = {first, second}
    return {"first": _evidence(atoms[first], holder_of[first]),
            "second": _evidence(atoms[second], holder_of[second]),
            "one_work": len(docs) == 1,
            "verdict": {"match": verdict.match, "score": round(verdict.score, 3),
                        "evidence": list(verdict.evidence), "conflict": verdict.conflict},
            "decisions": [d.__dict__ for d in decisions(settings) if {d.a, d.b} == pair]}


def review(settings: OpsSettings, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` joins the resolution pass made on the thinnest evidence: weak matches
    before strong ones, then the lowest score (ops' and identity joins are not listed)."""
    works = alias_name(settings.prefix, "works")
    body = {"query": {"match_all": {}},
            "_source": ["work_id", "title", "listings.work_id", "listings.title", "resolution"]}
    client = settings.client()
    refresh(client, works)
    with translate_errors(f"scan {works}"):  # one pass, holding only the ``limit`` thinnest
        joins = (row for hit in scan(client, works, body)
                 for row in _joins(hit["_source"]))
        return heapq.nsmallest(limit, joins,
                               key=lambda r: (r["strong"], r["score"], r["work_id"]))


def _joins(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's joins made by the matcher, with the titles of each joined id."""
    titles: dict[str, set[str]] = {}
    for entry in doc.get("listings") or ():
        titles.setdefault(entry.get("work_id") or doc["work_id"], set()).add(entry.get("title"))
    joins = []
    for link in doc.get("resolution") or ():
        if link.get("by") != "match":
            continue
        evidence = link.get("evidence") or []
        joins.append({"work": doc["work_id"], "title": doc.get("title"),
                      "work_id": link["work_id"],
                      "titles": sorted(t for t in titles.get(link["work_id"], ()) if t),
                      "joined_to": link["joined_to"], "score": link.get("score") or 0.0,
                      "strong": tuple(evidence[:1]) == Strength.STRONG.tag, "evidence": evidence})
    return joins


def _evidence(atom: Atom, work: str) -> dict[str, Any]:
    return {"work_id": atom.work_id, "work": work,
            "titles": list(atom.titles), "years": list(atom.years), "venues": list(atom.venues),
            "owners": list(atom.owners), "authors": list(atom.authors),
            "verified": list(atom.strong_keys)}


def _holder(client: OpenSearch, settings: OpsSettings, work_id: str) -> WorkDoc | None:
    works = alias_name(settings.prefix, "works")
    with translate_errors(f"get {works}"):
        found = client.get(index=works, id=work_id, ignore=404)
    if found.get("found"):
        return work_of(found["_source"])
    target = WorkJoiner(client, settings.prefix, settings.writer_retry,
                        layout=settings.opensearch.layout).redirects([work_id])
    if work_id not in target:
        return None
    with translate_errors(f"get {works}"):
        found = client.get(index=works, id=target[work_id], ignore=404)
    return work_of(found["_source"] if found.get("found") else None)
