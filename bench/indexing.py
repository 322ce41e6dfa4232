"""Throughput of the bulk writer (scholarindex.indexing.bulk.BulkWriter) on synthetic listings.

    python -m bench.indexing                     # 20,000 listings, local osmem-server
    python -m bench.indexing --listings 2000     # smaller
    OPENSEARCH_URL=https://... python -m bench.indexing --use-env   # a real cluster

The listings (two per work, as when a paper is on two profiles) are written in
batches the size the index pipeline flushes, twice: a first crawl (documents
created, then merged) and a re-crawl (every document read, merged and rewritten).
Prints documents and listings per second, documents per bulk request and what was
dead-lettered, per pass. ``make bench-indexing`` runs the default size.

``synthetic_listings``, ``synthetic_researchers`` and ``batches`` are also the
synthetic data of the indexing tests; ``tests/test_bench_indexing.py`` runs a
small version of this benchmark.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.cluster import add_cluster_option, opensearch, writer_retry
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import Change, change_from_item
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import ensure_aliases

_WORDS = ("adaptive graph neural serving cache sparse attention federated robust "
          "quantum scalable retrieval diffusion kernel bayesian protein language").split()


def synthetic_listings(works: int, per_work: int = 2, researchers: int | None = None,
                       seed: int = 0) -> list[WorkItem]:
    """``works`` papers, each listed on ``per_work`` distinct profiles (deterministic)."""
    rnd = random.Random(seed)
    pool = researchers or max(per_work, works // 5)
    items = []
    for w in range(works):
        title = " ".join(rnd.choice(_WORDS) for _ in range(6)).capitalize()
        owners = rnd.sample(range(pool), per_work)
        authors = [f"Author {o}" for o in owners] + [f"Coauthor {rnd.randrange(999)}"]
        for position, owner in enumerate(owners, start=1):
            items.append(WorkItem(
                work_id=f"w{w:06d}", title=title, researcher_id=f"r{owner:05d}",
                researcher_name=f"Author {owner}", abstract=" ".join(rnd.choices(_WORDS, k=60)),
                type="preprint", year=2015 + w % 11, venue="arXiv", category="LG",
                score=round(rnd.uniform(0, 100), 1), authors=authors, authors_truncated=False,
                code=bool(w % 3), researcher_url=f"https://profiles.example/r{owner:05d}",
                source="bzpeer", position=position))
    return items


def synthetic_researchers(count: int) -> list[ResearcherItem]:
    """Researcher items matching ``synthetic_listings``' owners."""
    return [ResearcherItem(id=f"r{i:05d}", url=f"https://profiles.example/r{i:05d}",
                           name=f"Author {i}", source="bzpeer", works_count=i % 40)
            for i in range(count)]


def batches(items: list[Any], size: int, seen_at: str | None = None) -> Iterator[list[Change]]:
    """Items as Changes, ``size`` at a time (as the pipeline flushes them)."""
    for start in range(0, len(items), size):
        yield [change_from_item(item, seen_at) for item in items[start:start + size]]


def run(base: OpenSearchConfig, listings: int = 20000, batch_size: int = 500,
        deadletter: Path | None = None) -> dict[str, float]:
    """Write ``listings`` synthetic listings twice under a fresh prefix; return the figures.

    Dead letters go to ``deadletter`` (default: a file in a temporary folder).
    """
    config = replace(base, prefix=f"{base.prefix}bench{uuid.uuid4().hex[:6]}_")
    client = build_client(config)
    ensure_aliases(client, config.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        dead = DeadLetterFile(deadletter or Path(tmp) / "bench-deadletter.jsonl")
        writer = BulkWriter(client, config.prefix, dead, writer_retry())
        items = synthetic_listings(listings // 2)
        figures: dict[str, float] = {"listings": len(items), "batch_size": batch_size}
        for label in ("first", "recrawl"):
            report, started = WriteReport(), time.perf_counter()
            for batch in batches(items, batch_size):
                report.add(writer.write(batch))
            elapsed = time.perf_counter() - started
            figures[f"{label}_seconds"] = round(elapsed, 2)
            figures[f"{label}_docs_written"] = report.docs_written
            figures[f"{label}_docs_per_s"] = round(report.docs_written / elapsed, 1)
            figures[f"{label}_listings_per_s"] = round(report.listings_delivered / elapsed, 1)
            figures[f"{label}_docs_per_bulk"] = round(
                report.docs_written / max(report.bulk_requests, 1), 1)
            figures[f"{label}_dead_lettered"] = report.dead_lettered
    return figures


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.indexing``: print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.indexing",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--listings", type=int, default=20000,
                        help="listings to write, two per work (20000)")
    parser.add_argument("--batch-size", type=int, default=500,
                        help="listings per write, as INDEX_BATCH_SIZE (500)")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    quiet_transport_logs()
    with opensearch(args.use_env) as config:
        print(f"OpenSearch {config.safe_url}")
        figures = run(config, args.listings, args.batch_size)
    for name, value in figures.items():
        print(f"{name:28} {value}")
    dead = figures["first_dead_lettered"] + figures["recrawl_dead_lettered"]
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
