"""Search quality on real noisy queries and search latency, on a real OpenSearch node.

    python -m bench.search                 # fixtures; DBLP-ACM crawled, then filled to 10k
    python -m bench.search --works 100000  # also the mixed-query latency at 100k works
    python -m bench.search --noisy-total 0 --queries 20   # the fixture index only, quick
    OPENSEARCH_URL=https://... python -m bench.search --use-env   # a real cluster

Noisy queries (``bench.search_quality``): the DBLP side of DBLP-ACM is crawled as
profile pages into the index, and the ACM side's titles are asked (three sets:
exact, one typo, owner's surname plus three words). Each set prints MRR@10,
recall@1, which match level answered, and its latency through ``SearchService``.
Then synthetic works fill the same index up to ``--noisy-total`` (10,000) works,
and the sets are asked again beside the browse latency there: browsing (no query:
every facet over every work) is timed cold (the first ask after the index changed)
and as a visitor meets it (a mix of pages, sorts and facet clicks, asked again and
again while the index does not change, so the browse cache answers most).
Without the data (``ER_DATA_DIR``) the quality sets are skipped, said so, and the
index is filled with synthetic works only.

Each query is a full search-page request as the UI sends it (text query, facet
filters, every facet's counts, highlight), timed through ``SearchService`` (round
trip plus parsing). On the fixture index the same queries are also timed through
the app (``GET /``, HTML rendered in-process) to show what rendering adds; that
overhead does not grow with the index, so the big index is timed at the service.
``make bench-search`` runs the defaults; ``tests/test_bench_search.py`` runs small
versions.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from fastapi.testclient import TestClient

from bench.cluster import add_cluster_option, describe, opensearch
from bench.er.data import available, data_dir, load
from bench.search_data import WORDS, bulk_load, index_fixtures, synthetic_works
from bench.search_quality import (
    DBLP_ACM,
    SetScore,
    crawl_dblp,
    pairs_of,
    query_sets,
    score,
    work_of,
)
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.search.params import MAX_QUERY_CHARS, SearchRequest
from scholarindex.webui.app import create_app
from scholarindex.webui.service import SearchService

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


def queries(count: int, words: Sequence[str], years: tuple[int, int], categories: list[str],
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
        by_service.append(_timed(partial(service.search, request)))
        if html:
            by_page.append(_timed(partial(_get_ok, client, request.url())))
    rows = [figures(f"{label}: SearchService.search", by_service)]
    if html:
        rows.append(figures(f"{label}: GET / (HTML)", by_page))
    return rows


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _get_ok(client: TestClient, url: str) -> None:
    status = client.get(url).status_code
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


BROWSE_MIX = 200  # browse requests timed as a visitor meets them


def browse_requests(count: int, years: tuple[int, int], seed: int = 3) -> list[SearchRequest]:
    """Browsing without text: the first page mostly, newest first, pages 2-3, a facet."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        filters: dict[str, tuple[object, ...]] = {}
        if rng.random() < 0.2:
            filters["year"] = (rng.randint(*years),)
        out.append(SearchRequest(filters=filters,
                                 sort="newest" if rng.random() < 0.3 else "relevance",
                                 page=1 if rng.random() < 0.8 else rng.randint(2, 3)))
    return out


@dataclass
class NoisyRun:
    """What the noisy-query stage measured."""

    works: list[int]  # the index's size at each stage
    quality: list[list[SetScore]]  # per stage, per set
    latency: list[Figures]
    skipped: str = ""  # why the quality sets were not run, if they were not


def run_noisy(base: OpenSearchConfig, total: int, per_set: int,
              log: Callable[[str], None] = print) -> NoisyRun:
    """Crawl DBLP, ask the query sets, fill to ``total`` works, ask again, time browsing."""
    config = replace(base, prefix=f"{base.prefix}bench{uuid.uuid4().hex[:6]}_er_",
                     timeout=120.0)
    client = build_client(config)
    service = SearchService(client, config.prefix)
    result = NoisyRun([], [], [])
    sets = None
    if available(DBLP_ACM):
        data = load(DBLP_ACM)
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            pages = crawl_dblp(data, config, Path(tmp))
        log(f"DBLP crawled: {pages} profile pages in {time.perf_counter() - start:.0f} s")
        sets = query_sets(pairs_of(data), per_set)
        client.indices.refresh(index=f"{config.prefix}works")
    else:
        result.skipped = (f"DBLP-ACM not found under {data_dir()} (set ER_DATA_DIR): "
                          "quality sets skipped")
        log(result.skipped)
    indexed = _count(client, config.prefix)
    if sets:
        result.works.append(indexed)
        result.quality.append(_ask_sets(service, sets, client, config.prefix, indexed, result,
                                             log))
    if total > indexed:
        start = time.perf_counter()
        bulk_load(client, config.prefix, synthetic_works(total - indexed, seed=11))
        log(f"filled with {total - indexed} synthetic works in "
            f"{time.perf_counter() - start:.0f} s")
        indexed = _count(client, config.prefix)
    if sets:
        result.works.append(indexed)
        result.quality.append(_ask_sets(service, sets, client, config.prefix, indexed, result,
                                             log))
    result.latency += _browse(service, indexed)
    return result


def _count(client: object, prefix: str) -> int:
    return int(client.count(index=f"{prefix}works")["count"])  # type: ignore[attr-defined]


def _ask_sets(service: SearchService, sets: dict, client: object, prefix: str, works: int,
              into: NoisyRun, log: Callable[[str], None]) -> list[SetScore]:
    expected = work_of(client, prefix)  # type: ignore[arg-type]
    samples: list[float] = []

    def ask(text: str) -> tuple[list[str], list[str], str]:
        start = time.perf_counter()
        found = service.search(SearchRequest(q=text[:MAX_QUERY_CHARS]))
        samples.append(time.perf_counter() - start)
        return [h.id for h in found.hits], [h.title for h in found.hits], found.match

    scores = []
    for name, queries_of_set in sets.items():
        samples.clear()
        scores += score({name: queries_of_set}, expected, ask)
        into.latency.append(figures(f"{works} works: {name} title queries", samples))
        log(f"{works} works: {scores[-1].line()}")
    return scores


def _browse(service: SearchService, works: int) -> list[Figures]:
    requests = browse_requests(BROWSE_MIX, (1990, 2026))
    if service.browse_cache is not None:
        service.browse_cache = type(service.browse_cache)()  # start cold
    distinct = list({r.url(): r for r in requests}.values())
    cold = [_timed(partial(service.search, r)) for r in distinct]
    warm = [_timed(partial(service.search, r)) for r in requests]
    return [figures(f"{works} works: browse, cold (first ask)", cold),
            figures(f"{works} works: browse, as visited", warm)]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.search``: print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.search",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--works", type=int, default=0,
                        help="synthetic works for the mixed-query latency (0: none; 100000)")
    parser.add_argument("--queries", type=int, default=200, help="queries per index (200)")
    parser.add_argument("--noisy-total", type=int, default=10_000,
                        help="works in the noisy-query index once filled (10000; 0: skip)")
    parser.add_argument("--per-set", type=int, default=600, help="queries per set (600)")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    quiet_transport_logs()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with opensearch(args.use_env) as config:
        engine = describe(config)
        rows = run(config, args.works, args.queries, log=log)
        noisy = run_noisy(config, args.noisy_total, args.per_set, log) if args.noisy_total else None
    print(f"search latency, {args.queries} queries per index ({engine} at {config.safe_url}):")
    for row in rows:
        print(row.line())
    if noisy is not None:
        print_noisy(noisy)
    return 0


def print_noisy(noisy: NoisyRun) -> None:
    """The noisy-query stage's tables."""
    if noisy.skipped:
        print(noisy.skipped)
    for works, scores in zip(noisy.works, noisy.quality, strict=True):
        print(f"DBLP-ACM noisy queries, {works} works indexed (ACM titles asked, DBLP indexed):")
        for row in scores:
            print("  " + row.line())
    print("latency (SearchService.search: round trip and parsing):")
    for latency in noisy.latency:
        print("  " + latency.line())


if __name__ == "__main__":
    sys.exit(main())
