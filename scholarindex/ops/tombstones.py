"""``scholarindex tombstones prune``: drop tombstone records older than the retention.

Reads every tombstone holding a record unlisted before the cutoff
(``scholarindex.indexing.tombstones.retention_cutoff``), folds it with the pure
``prune_tombstone`` and writes the result back conditionally (``index`` or, with no
record left, ``delete``, both with ``if_seq_no``/``if_primary_term``): a crawl that
changed the tombstone meanwhile makes the write conflict, and the tombstone is read
and pruned again (up to ``ATTEMPTS`` times; then it is left, counted, for the next
run), so the crawl's write is never lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import TOMBSTONES_INDEX, alias_name
from scholarindex.indexing.scan import scan
from scholarindex.indexing.shapes import TombstoneDoc, tombstone_of
from scholarindex.indexing.tombstones import prune_tombstone, pruned_records

ATTEMPTS = 5  # conditional writes per tombstone before it is left for the next run


@dataclass
class PruneReport:
    """What a prune read and changed (with ``dry_run``: what it would change)."""

    index: str
    cutoff: str
    dry_run: bool
    read: int = 0  # tombstones holding at least one record older than the cutoff
    records_pruned: int = 0
    updated: int = 0  # tombstones kept with fewer records
    deleted: int = 0  # tombstones left with no record
    conflicts: int = 0  # conditional writes that lost to a concurrent write (then re-read)
    left: int = 0  # still conflicting after ATTEMPTS: left for the next run

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return asdict(self)


def prune(client: OpenSearch, prefix: str, cutoff: str, dry_run: bool = False,
          page_size: int = 1000) -> PruneReport:
    """Prune the records unlisted before ``cutoff`` from ``{prefix}tombstones``."""
    index = alias_name(prefix, TOMBSTONES_INDEX)
    report = PruneReport(index=index, cutoff=cutoff, dry_run=dry_run)
    with translate_errors(f"exists {index}"):
        if not client.indices.exists(index=index):
            return report
    body = {"seq_no_primary_term": True,
            "query": {"range": {"unlisted.unlisted_at": {"lt": cutoff}}}}
    for hit in scan(client, index, body, page_size=page_size):
        report.read += 1
        _prune_one(client, index, hit, cutoff, dry_run, report)
    if not dry_run and (report.updated or report.deleted):
        with translate_errors(f"refresh {index}"):
            client.indices.refresh(index=index)
    return report


def _prune_one(client: OpenSearch, index: str, hit: Mapping[str, Any], cutoff: str,
               dry_run: bool, report: PruneReport) -> None:
    found: Mapping[str, Any] | None = hit
    for _ in range(ATTEMPTS):
        if found is None:
            return  # deleted meanwhile: nothing left to prune
        source = tombstone_of(found["_source"])
        pruned = prune_tombstone(source, cutoff)
        dropped = pruned_records(source, cutoff)
        if dropped == 0:
            return  # a crawl unlisted again meanwhile: every record is young now
        if dry_run:
            _count(report, dropped, pruned)
            return
        try:
            _write(client, index, found, pruned)
        except IndexUnavailable as exc:
            if exc.status == 404:
                return  # deleted meanwhile
            if exc.status != 409:
                raise
            report.conflicts += 1
            found = _read(client, index, str(found["_id"]))
            continue
        _count(report, dropped, pruned)
        return
    report.left += 1


def _count(report: PruneReport, dropped: int, pruned: TombstoneDoc | None) -> None:
    report.records_pruned += dropped
    if pruned is None:
        report.deleted += 1
    else:
        report.updated += 1


def _write(client: OpenSearch, index: str, found: Mapping[str, Any],
           pruned: TombstoneDoc | None) -> None:
    version = {"if_seq_no": found["_seq_no"], "if_primary_term": found["_primary_term"]}
    doc_id = str(found["_id"])
    if pruned is None:
        with translate_errors(f"delete {index}/{doc_id}"):
            client.delete(index=index, id=doc_id, **version)
    else:
        with translate_errors(f"index {index}/{doc_id}"):
            client.index(index=index, id=doc_id, body=dict(pruned), **version)


def _read(client: OpenSearch, index: str, doc_id: str) -> Mapping[str, Any] | None:
    with translate_errors(f"get {index}/{doc_id}"):
        answer = client.get(index=index, id=doc_id, ignore=404)
    return answer if answer.get("found") else None
