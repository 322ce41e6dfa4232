"""``scholarindex enrich --pending``: finish the arXiv lookups crawls left "pending".

Works whose ``enrichment.status`` is ``pending`` (arXiv was down, or the crawl
ended before its answer came) are read from the works alias, turned into the same
evidence the crawl's arXiv stage builds (``scholarindex.enrichment.models.listing_from_item``,
merged over every listing of the work), resolved with
``scholarindex.enrichment.pending.enrich_pending`` (cache first, arXiv's 3-second rule shared
with any crawl on this machine), and written back as enrichment changes through
``BulkWriter``, exactly as the crawl's index pipeline writes them.

Works go in chunks, each written as soon as it is answered, so an interrupted run
keeps what it did; when arXiv is down the run stops at the first chunk that comes
back pending instead of asking again for every chunk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.enrichment_status import DONE, NONE, PENDING
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.models import Listing, listing_from_item
from scholarindex.enrichment.pending import enrich_pending
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import enrichment_change
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.scan import refresh, scan

CHUNK = 100  # works per enrich_pending call (about 5 arXiv requests of 20 titles)
PENDING_QUERY = {"term": {"enrichment.status": PENDING}}
_FIELDS = ["work_id", "title", "year", "authors", "listings.title", "listings.year",
           "listings.researcher_name", "listings.authors"]


@dataclass
class EnrichReport:
    """What one run did."""

    pending_before: int = 0
    attempted: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # done / none / pending
    written: int = 0
    dead_lettered: int = 0
    stopped_early: str | None = None  # arXiv was unavailable: why

    @property
    def still_pending(self) -> int:
        """Works attempted that are still pending (arXiv did not answer)."""
        return self.outcomes[PENDING]

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return {"pending_before": self.pending_before, "attempted": self.attempted,
                "matched": self.outcomes[DONE], "unmatched": self.outcomes[NONE],
                "still_pending": self.still_pending, "written": self.written,
                "dead_lettered": self.dead_lettered, "stopped_early": self.stopped_early}


def count_pending(client: OpenSearch, prefix: str) -> int:
    """Works marked pending, as of now (a crawl's last writes may not be searchable yet)."""
    alias = alias_name(prefix, "works")
    refresh(client, alias)
    with translate_errors(f"count pending {alias}"):
        return int(client.count(index=alias, body={"query": PENDING_QUERY})["count"])


def pending_works(client: OpenSearch, prefix: str) -> Iterator[dict[str, Any]]:
    """The pending works' evidence fields."""
    body = {"query": PENDING_QUERY, "_source": _FIELDS}
    for hit in scan(client, alias_name(prefix, "works"), body, page_size=500):
        yield hit["_source"] | {"work_id": hit["_id"]}


def evidence(doc: Mapping[str, Any]) -> Listing:
    """Everything the work's listings say, as one ``Listing`` (as the crawl would send it)."""
    work_id = str(doc["work_id"])
    merged: Listing | None = None
    for entry in doc.get("listings") or [doc]:
        item = {"work_id": work_id, "title": entry.get("title") or doc.get("title") or "",
                "year": entry.get("year"), "researcher_name": entry.get("researcher_name"),
                "authors": entry.get("authors") or []}
        listing = listing_from_item(item)
        merged = listing if merged is None else merged.merged(listing)
    assert merged is not None
    return merged


def enrich_pending_works(client: OpenSearch, prefix: str, config: EnrichmentConfig,
                         writer: BulkWriter, limit: int | None = None,
                         advance: Callable[[int], None] = lambda n: None) -> EnrichReport:
    """Resolve up to ``limit`` pending works and write the answers through ``writer``."""
    report = EnrichReport(pending_before=count_pending(client, prefix))
    # Read the ids first: the scan would otherwise walk an index we are rewriting.
    todo = []
    for doc in pending_works(client, prefix):
        todo.append(evidence(doc))
        if limit is not None and len(todo) >= limit:
            break
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start:start + CHUNK]
        outcomes = enrich_pending(chunk, config)
        report.attempted += len(chunk)
        report.outcomes.update(o.status for o in outcomes)
        changes = [enrichment_change(o.work_id, status=o.status, arxiv=o.arxiv, reason=o.reason,
                                     at=o.checked_at) for o in outcomes]
        written = writer.write(changes)
        report.written += written.enrichments_delivered
        report.dead_lettered += written.dead_lettered
        advance(len(chunk))
        still = [o for o in outcomes if o.status == PENDING]
        if still:
            report.stopped_early = still[0].reason
            break
    return report
