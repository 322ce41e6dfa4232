"""arXiv across the workers of a distributed crawl: one request slot for the deployment,
and one record of the answers (real redis-server, real arXiv stand-in)."""

from __future__ import annotations

import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

from bench.generate import load_entries
from bench.run import read_stats
from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.ratelimit import RedisRateLimiter
from scholarindex.enrichment.cache import LookupCache
from scholarindex.enrichment.ratelimit import SharedRateLimiter, build_limiter
from scholarindex.enrichment.shared_cache import SharedLookupCache
from standins.arxiv import ArxivStandIn
from tests.support.distributed import bench_site, start_worker
from tests.support.redis import RedisServer
from tests.support.settings import enrichment_config_with


def test_the_redis_slot_spaces_requests_across_limiters(redis_server: RedisServer) -> None:
    # Two limiters, two connections: as two machines would hold them.
    limiters = [RedisRateLimiter(RedisLink(redis_server.url, 5), "t:", "api", 0.3, 5)
                for _ in range(2)]
    starts: list[float] = []
    lock = threading.Lock()

    def requests(limiter: RedisRateLimiter) -> None:
        for _ in range(3):
            with limiter.slot():
                with lock:
                    starts.append(time.monotonic())
                time.sleep(0.02)

    threads = [threading.Thread(target=requests, args=(lim,)) for lim in limiters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    starts.sort()
    assert len(starts) == 6
    gaps = [b - a for a, b in pairwise(starts)]
    assert min(gaps) >= 0.3, gaps


def test_build_limiter_is_per_machine_without_redis_and_shared_with_it(
        tmp_path: Path, redis_server: RedisServer) -> None:
    local = build_limiter(enrichment_config_with(ARXIV_CACHE_DIR=str(tmp_path)))
    assert isinstance(local, SharedRateLimiter)
    shared = build_limiter(enrichment_config_with(ARXIV_CACHE_DIR=str(tmp_path),
                                                  REDIS_URL=redis_server.url))
    assert isinstance(shared, RedisRateLimiter)


def test_the_harvest_takes_the_deployments_slot_with_redis_and_the_machines_without(
        tmp_path: Path, redis_server: RedisServer) -> None:
    from scholarindex.enrichment.oaipmh import OaiClient

    alone = OaiClient(enrichment_config_with(ARXIV_CACHE_DIR=str(tmp_path)))
    assert isinstance(alone._limiter, SharedRateLimiter)
    shared = OaiClient(enrichment_config_with(ARXIV_CACHE_DIR=str(tmp_path),
                                              REDIS_URL=redis_server.url))
    assert isinstance(shared._limiter, RedisRateLimiter)
    crawl = build_limiter(enrichment_config_with(ARXIV_CACHE_DIR=str(tmp_path),
                                                 REDIS_URL=redis_server.url))
    assert isinstance(crawl, RedisRateLimiter)
    assert shared._limiter.slot_key == crawl.slot_key  # one slot: harvest and crawl


def test_an_answer_one_worker_got_is_not_asked_again_by_another(
        tmp_path: Path, redis_server: RedisServer) -> None:
    first = SharedLookupCache(LookupCache(tmp_path / "a", 3600, 60),
                              RedisLink(redis_server.url, 5), "t:")
    second = SharedLookupCache(LookupCache(tmp_path / "b", 3600, 60),
                               RedisLink(redis_server.url, 5), "t:")
    assert second.get_many(["graph neural networks"]) == {}
    first.put_many([("graph neural networks", [{"id": "2101.00001"}], True, "")])
    got = second.get("graph neural networks")
    assert got is not None and got.found and got.candidates == [{"id": "2101.00001"}]
    # Copied into the second machine's own cache.
    assert second.local.get("graph neural networks") is not None


def test_expired_shared_answers_are_not_used(tmp_path: Path, redis_server: RedisServer) -> None:
    now = [1000.0]
    writer = SharedLookupCache(LookupCache(tmp_path / "a", 50, 10, clock=lambda: now[0]),
                               RedisLink(redis_server.url, 5), "t:", clock=lambda: now[0])
    writer.put_many([("a miss", [], False, "")])
    reader = SharedLookupCache(LookupCache(tmp_path / "b", 50, 10, clock=lambda: now[0]),
                               RedisLink(redis_server.url, 5), "t:", clock=lambda: now[0])
    now[0] += 11  # past the miss's 10 s
    assert reader.get("a miss") is None


@pytest.mark.process
@pytest.mark.slow
def test_two_workers_with_their_own_caches_keep_arxivs_delay_between_them(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = bench_site(tmp_path / "site", 12, seed=9)
    # Slow pages, few leases at a time (a worker leases what its downloader holds, up to
    # CONCURRENT_REQUESTS): both workers get a share of the pages, so both
    # look titles up on arXiv.
    settings = {"ARXIV_ENABLED": "true", "ARXIV_DELAY_SECONDS": "2",
                "ARXIV_BATCH_SIZE": "40", "ARXIV_BATCH_LINGER_SECONDS": "0.5",
                "ARXIV_TIMEOUT_SECONDS": "5", "ARXIV_BACKOFF_SECONDS": "0.1",
                "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "DOWNLOAD_DELAY": "0.5",
                "REDIS_TAKE_BATCH": "1", "CONCURRENT_REQUESTS": "2"}
    try:
        with ArxivStandIn(entries=load_entries(site.root)) as api:
            workers = [start_worker(tmp_path, redis_server.url, "arxiv", site.url_file, {
                **settings, "ARXIV_API_URL": api.api_url,
                "ARXIV_CACHE_DIR": str(tmp_path / f"cache-{n}")}) for n in range(2)]
            results = [w.finish(timeout=150) for w in workers]
            times = sorted(r.at for r in api.requests)
    finally:
        site.server.__exit__(None, None, None)
    for result in results:
        assert result.returncode == 0, result.log[-3000:]
    asked = [int(read_stats(r.log).get("arxiv/requests", 0)) for r in results]
    assert all(asked), asked  # both workers (two machines) asked arXiv
    assert len(times) == sum(asked) >= 3
    gaps = [b - a for a, b in pairwise(times)]
    assert min(gaps) >= 2.0, gaps
    # Every work was enriched or passed on as pending; the answers reached both workers.
    assert sum(r.report["enriched"] for r in results) > 0


def test_two_workers_meeting_the_same_new_title_at_once_make_one_request(
        tmp_path: Path, redis_server: RedisServer, arxiv_api: ArxivStandIn) -> None:
    from collections import Counter
    from dataclasses import replace

    from scholarindex.enrichment.client import ArxivFetcher, SearchResult
    from scholarindex.enrichment.models import Listing
    from scholarindex.enrichment.resolver import Resolver

    listing = Listing.of("w0", "ResNeSt: Split-Attention Networks", 2020, ["Haibin Lin"])
    events: list[Counter] = [Counter(), Counter()]
    start = threading.Barrier(2)
    outcomes: list = [None, None]

    def worker(n: int) -> None:
        # A machine of its own: its own cache folder, Redis connection and arXiv client.
        config = replace(enrichment_config_with(REDIS_URL=redis_server.url),
                         api_url=arxiv_api.api_url, delay_seconds=0.05,
                         cache_dir=str(tmp_path / f"m{n}"), timeout_seconds=2.0)
        fetcher = ArxivFetcher(config)

        def slow_search(query: str, confirm_empty: bool = True) -> SearchResult:
            time.sleep(0.5)  # the request takes a while
            return fetcher.search(query, confirm_empty)
        cache = SharedLookupCache(LookupCache(tmp_path / f"m{n}", 3600, 60),
                                  RedisLink(redis_server.url, 5), "scholarindex:")
        resolver = Resolver(slow_search, cache, config,
                            on_event=lambda name, count: events[n].update({name: count}))
        start.wait(10)
        outcomes[n] = resolver.resolve([listing])[0]

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(arxiv_api.requests) == 1  # one request for the deployment
    assert [o.status for o in outcomes] == ["done", "done"]
    assert outcomes[0].arxiv == outcomes[1].arxiv
    # One of the two took the other's answer.
    assert sorted(e["arxiv/asked_by_other_workers"] for e in events) == [0, 1]


_CLAIM_AND_HANG = """
import sys, time
from pathlib import Path
from scholarindex.distributed.connection import RedisLink
from scholarindex.enrichment.cache import LookupCache
from scholarindex.enrichment.shared_cache import SharedLookupCache
cache = SharedLookupCache(LookupCache(Path(sys.argv[2]), 3600, 60), RedisLink(sys.argv[1], 5),
                          "scholarindex:")
print(cache.claim(["a title being asked"], 1200.0)[0], flush=True)
time.sleep(600)  # "asking arXiv" until killed
"""


@pytest.mark.process
@pytest.mark.parametrize("killed_after", [0.1, 8.0])
def test_a_claim_of_a_worker_that_died_lapses_within_seconds(
        tmp_path: Path, redis_server: RedisServer, killed_after: float) -> None:
    import signal
    import subprocess
    import sys

    from scholarindex.enrichment.shared_cache import CLAIM_SECONDS
    # Another process claims a title for a request that would take 20 minutes, then dies.
    asker = subprocess.Popen([sys.executable, "-c", _CLAIM_AND_HANG, redis_server.url,
                              str(tmp_path / "a")], stdout=subprocess.PIPE, text=True)
    try:
        assert asker.stdout is not None and "a title being asked" in asker.stdout.readline()
        waiter = SharedLookupCache(LookupCache(tmp_path / "b", 3600, 60),
                                   RedisLink(redis_server.url, 5), "scholarindex:")
        time.sleep(killed_after)  # renewed meanwhile: the claim outlives CLAIM_SECONDS alive
        assert waiter.claim(["a title being asked"], 1200.0) == ([], ["a title being asked"])
        asker.send_signal(signal.SIGKILL)
        asker.wait(10)
        started = time.monotonic()
        left = waiter.wait_for(["a title being asked"], 60.0)
        waited = time.monotonic() - started
    finally:
        asker.kill()
        asker.wait()
    assert left == ["a title being asked"]  # unanswered: the waiter asks itself
    assert waited <= CLAIM_SECONDS + 1.0, waited


_HOLD_THE_SLOT = """
import sys, time
from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.ratelimit import RedisRateLimiter
limiter = RedisRateLimiter(RedisLink(sys.argv[1], 5), "t:", "api", 0.1, 1200.0)
with limiter.slot():
    print("holding", flush=True)
    time.sleep(600)  # a request that hangs until killed
"""


@pytest.mark.process
@pytest.mark.parametrize("killed_after", [0.1, 8.0])
def test_the_slot_of_a_worker_that_died_mid_request_is_free_within_seconds(
        redis_server: RedisServer, killed_after: float) -> None:
    import signal
    import subprocess
    import sys

    from scholarindex.distributed.ratelimit import LIFE_SECONDS
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THE_SLOT, redis_server.url],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        time.sleep(killed_after)
        # Alive, it keeps the slot past LIFE_SECONDS (renewed).
        assert redis_server.client().exists("t:ratelimit:api:slot")
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        other = RedisRateLimiter(RedisLink(redis_server.url, 5), "t:", "api", 0.1, 1200.0)
        started = time.monotonic()
        with other.slot():
            waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert waited <= LIFE_SECONDS + 1.0, waited
