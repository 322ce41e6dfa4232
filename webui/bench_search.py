"""Search latency, p50/p95 over 200 queries, on the fixture index and a 100k-work index.

    python -m webui.bench_search                 # starts a local osmem-server
    python -m webui.bench_search --works 20000   # a smaller synthetic index
    OPENSEARCH_URL=https://... python -m webui.bench_search --use-env   # a real cluster

Each query is a full search-page request as the UI sends it (text query, facet
filters, every facet's counts, highlight), timed through ``SearchService`` (round
trip plus parsing) and through the app (``GET /``, HTML rendered in-process).
Not part of the test run; ``tests/test_webui_bench.py`` runs a 1k-work smoke version.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from fastapi.testclient import TestClient

from indexing.client import build_client
from indexing.config import OpenSearchConfig
from webui.app import create_app
from webui.bench_data import WORDS, bulk_load, index_fixtures, synthetic_works
from webui.params import SearchRequest
from webui.service import SearchService

FIXTUREWORDS = ("load balancing", "inference", "MoE", "variational", "graph", "storage",
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
        return (f"{self.label:<38} n={self.count:<4} p50={self.p50:7.1f} ms  "
                f"p95={self.p95:7.1f} ms  mean={self.mean:7.1f} ms  max={self.max:7.1f} ms")


def figures(label: str, samples: list[float]) -> Figures:
    """p50/p95 (nearest rank) of ``samples`` given in seconds."""
    ms = sorted(s * 1000 for s in samples)

    def rank(p: float) -> float:
        return ms[max(0, min(len(ms) - 1, round(p * len(ms) + 0.5) - 1))]

    return Figures(label, len(ms), rank(0.50), rank(0.95), statistics.fmean(ms), ms[-1])


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
            filters["category"] = tuple(rng.sample(categories, rng.randint(1, 2)))
        if rng.random() < 0.1:
            filters["has_code"] = (True,)
        out.append(SearchRequest(q=q, filters=filters,
                                 sort="newest" if rng.random() < 0.2 else "relevance",
                                 page=1 if rng.random() < 0.8 else rng.randint(2, 3)))
    return out


def measure(config: OpenSearchConfig, requests: list[SearchRequest], label: str,
            warmup: int = 10) -> list[Figures]:
    """Time every request through the service and through the HTML page."""
    service = SearchService(build_client(config), config.prefix)
    client = TestClient(create_app(service=service))
    for request in requests[:warmup]:
        service.search(request)
    by_service: list[float] = []
    by_page: list[float] = []
    for request in requests:
        by_service.append(_timed(lambda r=request: service.search(r)))
        by_page.append(_timed(lambda r=request: _ok(client.get(r.url()))))
    return [figures(f"{label}: SearchService.search", by_service),
            figures(f"{label}: GET / (HTML)", by_page)]


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _ok(response: object) -> None:
    status = getattr(response, "status_code", 0)
    if status != 200:
        raise RuntimeError(f"search page answered {status}")


@contextmanager
def cluster(use_env: bool) -> Iterator[str]:
    """A cluster URL: OPENSEARCH_URL with ``--use-env``, else a fresh local osmem-server."""
    if use_env:
        yield OpenSearchConfig.from_env().url
        return
    from osmem_server import OsmemServer

    with OsmemServer.start() as server:
        yield server.url


def run(works: int, count: int, use_env: bool) -> list[Figures]:
    """Build both indices, measure, and return every series."""
    results: list[Figures] = []
    with cluster(use_env) as url, tempfile.TemporaryDirectory() as tmp:
        base = OpenSearchConfig.from_env() if use_env else OpenSearchConfig(url=url)
        run_id = uuid.uuid4().hex[:6]
        fixtures = replace(base, prefix=f"bench{run_id}_fx_", timeout=120.0)
        client = build_client(fixtures)
        n = index_fixtures(client, fixtures.prefix, Path(tmp) / "dead.jsonl")
        print(f"fixture index: {n} works", file=sys.stderr)
        requests = queries(count, FIXTUREWORDS, (2012, 2026), ["CV", "LG", "CL", "DC", "AI"])
        results += measure(fixtures, requests, f"fixtures ({n} works)")
        if works:
            big = replace(fixtures, prefix=f"bench{run_id}_{works}_")
            start = time.perf_counter()
            loaded = bulk_load(build_client(big), big.prefix, synthetic_works(works))
            print(f"synthetic index: {loaded} works loaded in {time.perf_counter() - start:.0f} s",
                  file=sys.stderr)
            words = tuple(WORDS)
            requests = queries(count, words, (2000, 2026), ["LG", "CL", "CV", "DC", "AI", "IR"])
            results += measure(big, requests, f"synthetic ({loaded} works)")
    return results


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m webui.bench_search``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--works", type=int, default=100_000,
                        help="synthetic works to index (0: fixtures only)")
    parser.add_argument("--queries", type=int, default=200, help="queries per index")
    parser.add_argument("--use-env", action="store_true",
                        help="use OPENSEARCH_URL etc. instead of starting osmem-server")
    args = parser.parse_args(argv)
    for row in run(args.works, args.queries, args.use_env):
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
