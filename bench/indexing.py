"""Throughput of the bulk writer (scholarindex.indexing.bulk.BulkWriter) on synthetic listings.

    python -m bench.indexing                     # 20,000 listings, a local OpenSearch node
    python -m bench.indexing --listings 2000     # smaller
    OPENSEARCH_URL=https://... python -m bench.indexing --use-env   # a real cluster

The listings (two per work, as when a paper is on two profiles) are written in
batches the size the index pipeline flushes, twice: a first crawl (documents
created, then merged) and a re-crawl (every document read, merged and rewritten).
Prints documents and listings per second, documents per bulk request and what was
dead-lettered, per pass. ``make bench-indexing`` runs the default size.

``synthetic_listings``, ``synthetic_researchers`` and ``batches`` are also the
synthetic data of the indexing tests; ``tests/test_bench_indexing.py`` runs a
small version of this benchmark. ``bulk_paths`` (run by ``bench.run``) writes the
same documents by the writer's hand-built bulk bodies and by opensearch-py's helpers.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch, helpers

from bench.cluster import add_cluster_option, delete_indices, describe, opensearch, writer_retry
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter, RequestLimits, WriteReport
from scholarindex.indexing.bulkbody import BulkAction, requests
from scholarindex.indexing.changes import Change, change_from_item, fold_change
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import (
    TOMBSTONES_INDEX,
    alias_name,
    ensure_aliases,
    ensure_plain_index,
)

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


# --- bulk paths: the same documents, written four ways ------------------------------------

BULK_PATHS = ("bulkbody", "streaming_bulk", "bulkbody_parallel", "parallel_bulk", "BulkWriter")
Docs = dict[tuple[str, str], Mapping[str, Any]]


def _by_bulkbody(client: OpenSearch, prefix: str, docs: Docs, limits: RequestLimits,
                 threads: int) -> int:
    """The writer's own bodies (``scholarindex.indexing.bulkbody``), sent as it sends them:
    one request at a time, each document serialised once. Returns the failed items."""
    return sum(_failed_items(client.bulk(body=body)) for body in _bodies(prefix, docs, limits))


def _bodies(prefix: str, docs: Docs, limits: RequestLimits) -> Iterator[bytes]:
    """The writer's bulk bodies creating ``docs``, cut to its limits."""
    actions = ((n, BulkAction("create", alias_name(prefix, index), doc_id, doc))
               for n, ((index, doc_id), doc) in enumerate(docs.items()))
    return (body for _, body in requests(actions, limits.max_docs, limits.max_bytes))


def _by_bulkbody_parallel(client: OpenSearch, prefix: str, docs: Docs, limits: RequestLimits,
                          threads: int) -> int:
    """The writer's bodies with ``threads`` requests in flight, as ``parallel_bulk`` sends
    its own: whether the hand-built body still wins once the node is kept busy."""
    failed = 0
    in_flight: deque[Future[dict[str, Any]]] = deque()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for body in _bodies(prefix, docs, limits):
            if len(in_flight) >= threads:
                failed += _failed_items(in_flight.popleft().result())
            in_flight.append(pool.submit(client.bulk, body=body))
        while in_flight:
            failed += _failed_items(in_flight.popleft().result())
    return failed


def _failed_items(answer: dict[str, Any]) -> int:
    return sum(next(iter(item.values())).get("status", 500) >= 300 for item in answer["items"])


def _helper_actions(prefix: str, docs: Docs) -> Iterator[dict[str, Any]]:
    for (index, doc_id), doc in docs.items():
        yield {"_op_type": "create", "_index": alias_name(prefix, index), "_id": doc_id,
               "_source": doc}


def _by_streaming_bulk(client: OpenSearch, prefix: str, docs: Docs, limits: RequestLimits,
                       threads: int) -> int:
    """opensearch-py's ``helpers.streaming_bulk``, cut to the same limits, one at a time."""
    failed = 0
    for ok, _ in helpers.streaming_bulk(client, _helper_actions(prefix, docs),
                                        chunk_size=limits.max_docs,
                                        max_chunk_bytes=limits.max_bytes,
                                        raise_on_error=False, raise_on_exception=False):
        failed += not ok
    return failed


def _by_parallel_bulk(client: OpenSearch, prefix: str, docs: Docs, limits: RequestLimits,
                      threads: int) -> int:
    """``helpers.parallel_bulk``: ``threads`` requests in flight (the node's own limit)."""
    failed = 0
    for ok, _ in helpers.parallel_bulk(client, _helper_actions(prefix, docs),
                                       thread_count=threads, chunk_size=limits.max_docs,
                                       max_chunk_bytes=limits.max_bytes,
                                       raise_on_error=False, raise_on_exception=False):
        failed += not ok
    return failed


def bulk_paths(cluster: OpenSearchConfig, changes: list[Change], *, repeats: int = 3,
               pid: int | None = None, threads: int | None = None,
               log: Callable[[str], None] = print) -> dict[str, Any]:
    """The same documents written into the same cluster five ways, ``repeats`` times each
    after one uncounted round (the order rotated each round, so drift on a shared machine
    hits every path alike):

    - ``bulkbody``: the final documents in the writer's hand-built bodies
      (``scholarindex.indexing.bulkbody.requests``, the writer's ``RequestLimits``);
    - ``streaming_bulk``: the same documents through opensearch-py's helper, the same
      limits and the same client (its orjson serializer included);
    - ``bulkbody_parallel`` and ``parallel_bulk``: the two above with ``threads`` requests
      in flight (default: the cores), what the node takes at most from one client;
    - ``BulkWriter``: the whole writer on the changes that fold into those documents,
      in one ``write`` (it reads, merges and creates each document once).

    Each run writes into indices of its own (the works mapping), created before the clock
    starts, checked (every document there) and deleted after. Per path the median run's
    documents/s, and the CPU per document of this process (the client) and of ``pid`` (the
    node's JVM, when local).
    """
    docs: dict[tuple[str, str], Any] = {}
    for change in changes:
        key = (change.index, change.doc_id)
        docs[key] = fold_change(docs.get(key), change)
    limits = RequestLimits()
    threads = threads or os.cpu_count() or 2
    writers: dict[str, Callable[[OpenSearch, str, Docs, RequestLimits, int], int]] = {
        "bulkbody": _by_bulkbody, "streaming_bulk": _by_streaming_bulk,
        "bulkbody_parallel": _by_bulkbody_parallel, "parallel_bulk": _by_parallel_bulk}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in BULK_PATHS}
    problems: list[str] = []
    for round_ in range(-1, repeats):  # round -1 warms the node's JIT up, not counted
        order = (BULK_PATHS[:-1] if round_ < 0 else
                 BULK_PATHS[round_ % len(BULK_PATHS):] + BULK_PATHS[:round_ % len(BULK_PATHS)])
        for name in order:
            config = replace(cluster, prefix=f"{cluster.prefix}paths{uuid.uuid4().hex[:6]}_",
                             timeout=max(cluster.timeout, 120))
            client = build_client(config)
            ensure_aliases(client, config.prefix)
            # The writer makes it on first use; made here, no path pays an index creation.
            ensure_plain_index(client, config.prefix, TOMBSTONES_INDEX, config.layout)
            try:
                node_before = _cpu(pid)
                cpu_before, started = time.process_time(), time.perf_counter()
                if name == "BulkWriter":
                    with tempfile.TemporaryDirectory() as tmp:
                        writer = BulkWriter(client, config.prefix,
                                            DeadLetterFile(Path(tmp) / "dead.jsonl"),
                                            writer_retry(), limits=limits)
                        report = writer.write(changes)
                    failed = report.dead_lettered
                else:
                    failed = writers[name](client, config.prefix, docs, limits, threads)
                seconds = time.perf_counter() - started
                client_cpu = time.process_time() - cpu_before
                node_cpu = _cpu(pid) - node_before if pid is not None else None
                stored = _stored(client, config.prefix)
            finally:
                delete_indices(config)
            if failed or stored != len(docs):
                problems.append(f"{name}: {failed} failed, {stored} of {len(docs)} stored")
            if round_ < 0:
                continue
            runs[name].append({"seconds": seconds, "client_cpu": client_cpu,
                               "node_cpu": -1.0 if node_cpu is None else node_cpu})
            log(f"  {name:15} {len(docs) / seconds:8.0f} docs/s ({seconds:.2f} s)")
    figures: dict[str, dict[str, Any]] = {}
    for name, measured in runs.items():
        median = statistics.median(run["seconds"] for run in measured)
        row = {"docs_per_s": round(len(docs) / median, 1),
               "seconds": [round(run["seconds"], 2) for run in measured],
               "client_cpu_ms_per_doc": round(1000 * statistics.median(
                   run["client_cpu"] for run in measured) / len(docs), 4)}
        if pid is not None:
            row["node_cpu_ms_per_doc"] = round(1000 * statistics.median(
                run["node_cpu"] for run in measured) / len(docs), 4)
        figures[name] = row
    return {
        "documents": len(docs), "changes": len(changes), "repeats": repeats,
        "threads_parallel_bulk": threads,
        "limits": {"max_docs": limits.max_docs, "max_bytes": limits.max_bytes},
        "paths": figures,
        "bulkbody_to_streaming_bulk": round(figures["bulkbody"]["docs_per_s"]
                                            / figures["streaming_bulk"]["docs_per_s"], 3),
        "bulkbody_to_parallel_bulk": round(figures["bulkbody_parallel"]["docs_per_s"]
                                           / figures["parallel_bulk"]["docs_per_s"], 3),
        "problems": problems,
    }


def _cpu(pid: int | None) -> float:
    """utime + stime of a live process, in seconds (0 without one)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stored(client: OpenSearch, prefix: str) -> int:
    """Documents in the works and researchers aliases once refreshed."""
    names = f"{alias_name(prefix, 'works')},{alias_name(prefix, 'researchers')}"
    client.indices.refresh(index=names)
    return int(client.count(index=names)["count"])


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
        print(f"OpenSearch {config.safe_url}: {describe(config)}")
        figures = run(config, args.listings, args.batch_size)
    for name, value in figures.items():
        print(f"{name:28} {value}")
    dead = figures["first_dead_lettered"] + figures["recrawl_dead_lettered"]
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
