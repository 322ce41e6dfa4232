"""Search latency, p50/p95 over 200 queries, on the fixture index and a 100k-work index.

    python -m bench.search                 # 100k works, local osmem-server
    python -m bench.search --works 20000   # a smaller synthetic index
    python -m bench.search --works 0 --queries 20   # the fixture index only, quick
    OPENSEARCH_URL=https://... python -m bench.search --use-env   # a real cluster

Each query is a full search-page request as the UI sends it (text query, facet
filters, every facet's counts, highlight), timed through ``SearchService`` (round
trip plus parsing). On the fixture index the same queries are also timed through
the app (``GET /``, HTML rendered in-process) to show what rendering adds; that
overhead does not grow with the index, so the big index is timed at the service.
``make bench-search`` runs the default size; ``tests/test_bench_search.py`` runs a
1k-work version.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from fastapi.testclient import TestClient

from bench.cluster import add_cluster_option, opensearch
from bench.search_data import WORDS, bulk_load, index_fixtures, synthetic_works
from indexing.client import build_client, quiet_transport_logs
from indexing.connection import OpenSearchConfig
from webui.app import create_app
from webui.params import SearchRequest
from webui.service import SearchService

FIXTURE_WORDS = ("load balancing", "inference", "MoE", "variational", "graph", "storage",
                 "learning", "neural", "training", "depth", "routing", "uncertainty",
                 "Chao Jin", "encrypted", "speech", "attention", "privacy", "time series")


@dataclass(frozen=True)
class Figures:
    """Latency of one series, in milliseconds."""

    label: str
    count: int
    p50: float
    p95: float
    mean: float
    max: float

    def line(self) -> str:
        """One printed row."""
        return (f"{self.label:<44} n={self.count:<4} p50={self.p50:7.1f} ms  "
                f"p95={self.p95:7.1f} ms  mean={self.mean:7.1f} ms  max={self.max:7.1f} ms")


def nearest_rank(ordered: list[float], p: float) -> float:
    """The ``p`` percentile (0-1) of sorted ``ordered``: the smallest value >= p of them."""
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


def figures(label: str, samples: list[float]) -> Figures:
    """p50/p95 (nearest rank) of ``samples`` given in seconds."""
    ms = sorted(s * 1000 for s in samples)
    return Figures(label, len(ms), nearest_rank(ms, 0.50), nearest_rank(ms, 0.95),
                   statistics.fmean(ms), ms[-1])


def queries(count: int, words: tuple[str, ...], years: tuple[int, int], categories: list[str],
            seed: int = 1) -> list[SearchRequest]:
    """A reproducible mix: words, phrases, exclusions, OR, filters, newest-first, pages 1-3."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.35:
            q = rng.choice(words)
        elif kind < 0.55:
            q = f"{rng.choice(words)} {rng.choice(words)}"
        elif kind < 0.7:
            q = f'"{rng.choice(words)} {rng.choice(words)}"'
        elif kind < 0.8:
            q = f"{rng.choice(words)} -{rng.choice(words)}"
        elif kind < 0.9:
            q = f"{rng.choice(words)} OR {rng.choice(words)}"
        else:
            q = ""  # browsing by facets only
        filters: dict[str, tuple[object, ...]] = {}
        if rng.random() < 0.3:
            filters["year"] = (rng.randint(*years),)
        if categories and rng.random() < 0.2:
            picks = rng.randint(1, min(len(categories), 2))
            filters["category"] = tuple(rng.sample(categories, picks))
        if rng.random() < 0.1:
            filters["has_code"] = (True,)
        out.append(SearchRequest(q=q, filters=filters,
                                 sort="newest" if rng.random() < 0.2 else "relevance",
                                 page=1 if rng.random() < 0.8 else rng.randint(2, 3)))
    return out


def measure(config: OpenSearchConfig, requests: list[SearchRequest], label: str, *,
            html: bool = True, warmup: int = 10) -> list[Figures]:
    """Time every request through the service (and through the HTML page if ``html``)."""
    service = SearchService(build_client(config), config.prefix)
    client = TestClient(create_app(service=service))
    for request in requests[:warmup]:
        service.search(request)
    by_service: list[float] = []
    by_page: list[float] = []
    for request in requests:
        by_service.append(_timed(lambda r=request: service.search(r)))
        if html:
            by_page.append(_timed(lambda r=request: _ok(client.get(r.url()))))
    rows = [figures(f"{label}: SearchService.search", by_service)]
    if html:
        rows.append(figures(f"{label}: GET / (HTML)", by_page))
    return rows


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _ok(response: object) -> None:
    status = getattr(response, "status_code", 0)
    if status != 200:
        raise RuntimeError(f"search page answered {status}")


def run(base: OpenSearchConfig, works: int, count: int, log: Callable[[str], None] = print
         ) -> list[Figures]:
    """Index the fixtures and ``works`` synthetic works next to each other, and measure."""
    results: list[Figures] = []
    run_id = uuid.uuid4().hex[:6]
    with tempfile.TemporaryDirectory() as tmp:
        fixtures = replace(base, prefix=f"{base.prefix}bench{run_id}_fx_", timeout=120.0)
        n = index_fixtures(build_client(fixtures), fixtures.prefix, Path(tmp) / "dead.jsonl")
        log(f"fixture index: {n} works")
        requests = queries(count, FIXTURE_WORDS, (2012, 2026), ["CV", "LG", "CL", "DC", "AI"])
        results += measure(fixtures, requests, f"fixtures ({n} works)")
    if works:
        big = replace(fixtures, prefix=f"{base.prefix}bench{run_id}_{works}_")
        start = time.perf_counter()
        loaded = bulk_load(build_client(big), big.prefix, synthetic_works(works))
        log(f"synthetic index: {loaded} works loaded in {time.perf_counter() - start:.0f} s")
        requests = queries(count, WORDS, (2000, 2026), ["LG", "CL", "CV", "DC", "AI", "IR"])
        results += measure(big, requests, f"synthetic ({loaded} works)", html=False)
    return results


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.search``: print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.search",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--works", type=int, default=100_000,
                        help="synthetic works to index (100000; 0: the fixture index only)")
    parser.add_argument("--queries", type=int, default=200, help="queries per index (200)")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    quiet_transport_logs()
    with opensearch(args.use_env) as config:
        rows = run(config, args.works, args.queries,
                   log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"search latency, {args.queries} queries per index (OpenSearch {config.safe_url}):")
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
