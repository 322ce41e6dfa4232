"""Zero-downtime reindex of a synthetic works index, timed phase by phase under searches.

    python -m bench.reindex                   # 100k works, a local OpenSearch node
    python -m bench.reindex --works 20000     # smaller
    OPENSEARCH_URL=https://... python -m bench.reindex --use-env   # a real cluster

Loads ``--works`` synthetic works (``bench.search_data``: the index's real document
shape, one in five on two profiles), then times, phase by phase, a server-side
``reindex`` and a ``reindex --rebuild`` of the works alias, each while a thread
keeps searching the alias (counting failed or empty answers and the slowest one).
Exits 1 if a reindex failed or a search failed during one. ``make bench-reindex``
runs the default size; ``tests/test_bench_reindex.py`` runs a 2k-work version.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bench.cluster import add_cluster_option, describe, opensearch
from bench.search_data import bulk_load, synthetic_works
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import MAPPINGS_DIR, alias_name
from scholarindex.ops.reindex import ReindexOptions, ReindexResult, reindex
from scholarindex.search.query import text_query


@dataclass
class Row:
    """One timed reindex."""

    label: str
    docs: int
    result: ReindexResult
    searches: int = 0
    failed_searches: int = 0
    empty_searches: int = 0
    slowest_search: float = 0.0

    def lines(self) -> list[str]:
        """Printed figures."""
        secs = self.result.seconds
        total = secs.get("total", 0.0)
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in secs.items() if k != "total")
        return [
            f"{self.label:<28} {self.docs} works in {total:7.1f} s "
            f"({self.docs / total if total else 0:,.0f} docs/s); writes paused "
            f"{self.result.frozen_ms} ms",
            f"{'':<28} {phases}",
            f"{'':<28} searches during it: {self.searches}, failed {self.failed_searches}, "
            f"empty {self.empty_searches}, slowest {self.slowest_search * 1000:.0f} ms",
        ]


@dataclass
class _Searcher:
    config: OpenSearchConfig
    alias: str
    row: Row
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        client = build_client(replace(self.config, timeout=600.0))
        body = {"query": text_query("graph neural"), "size": 10}
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                hits = client.search(index=self.alias, body=body)["hits"]["hits"]
            except Exception:  # counted and reported: the figure is how many
                self.row.failed_searches += 1
                continue
            self.row.slowest_search = max(self.row.slowest_search, time.monotonic() - began)
            self.row.searches += 1
            self.row.empty_searches += not hits
            time.sleep(0.05)


def timed_reindex(config: OpenSearchConfig, label: str, docs: int, rebuild: bool,
                  batch_size: int) -> Row:
    """One reindex of the works alias under a search loop."""
    client = build_client(replace(config, timeout=600.0))
    options = ReindexOptions(mappings_dir=MAPPINGS_DIR, keep=1, rebuild=rebuild,
                             batch_size=batch_size)
    row = Row(label, docs, ReindexResult("works", alias_name(config.prefix, "works")))
    searcher = _Searcher(config, alias_name(config.prefix, "works"), row)
    thread = threading.Thread(target=searcher.run, daemon=True)
    thread.start()
    try:
        row.result = reindex(client, config.prefix, "works", options)
    finally:
        searcher.stop.set()
        thread.join(600)
    return row


def run(base: OpenSearchConfig, works: int, batch_size: int = 2000,
        log: Callable[[str], None] = print) -> list[Row]:
    """Load ``works`` synthetic works under a fresh prefix, then time both kinds of reindex."""
    config = replace(base, prefix=f"{base.prefix}bench{uuid.uuid4().hex[:6]}_")
    client = build_client(replace(config, timeout=600.0))
    log(f"loading {works} synthetic works into {config.prefix}works ...")
    began = time.monotonic()
    bulk_load(client, config.prefix, synthetic_works(works))
    log(f"  loaded in {time.monotonic() - began:.1f} s")
    rows = []
    for label, rebuild in (("reindex (server-side copy)", False), ("reindex --rebuild", True)):
        log(f"{label} ...")
        rows.append(timed_reindex(config, label, works, rebuild, batch_size))
        for line in rows[-1].lines():
            log(line)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.reindex``: print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.reindex",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--works", type=int, default=100_000, help="works to load (100000)")
    parser.add_argument("--batch-size", type=int, default=2000,
                        help="documents per copy request, as `reindex --batch-size` (2000)")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    quiet_transport_logs()
    with opensearch(args.use_env) as config:
        print(f"{describe(config)} at {config.safe_url}; python {sys.version.split()[0]}; "
              f"{os.cpu_count()} CPUs")
        rows = run(config, args.works, args.batch_size)
    return 0 if all(r.result.ok and not r.failed_searches for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
