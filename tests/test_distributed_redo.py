"""A worker killed while its parsed pages wait for a slow index: its pages are not
fetched again, not set aside and are indexed, and its arXiv lookups are done (real
redis-server, real ``scrapy crawl`` processes, the stand-in arXiv API, the OpenSearch
node behind the fault proxy for the worker that is killed).

What a kill costs. A parsed page used to keep its lease until its items were in the
index, so a worker killed while the index was slow left every page it had parsed to be
fetched again: up to ``REDIS_MAX_UNACKED`` (48) pages a kill, which in the soak (a kill
every 20 s) was most of the re-work. Now a parsed page's items go to the worker's
outbox in Redis as the lease is acknowledged, and the worker that adopts the outbox
indexes them: a kill costs only the pages fetched and not yet parsed.

What must still hold. Under heavy churn the old code once lost pages: every take of a
lease counted towards ``REDIS_MAX_DELIVERIES``, so parsed pages went from one killed
worker to the next until the frontier set them aside, and their works' lookups,
adopted, were answered for works the index did not hold (``missing_document``, exit 4).
Here ``REDIS_MAX_DELIVERIES=2``: the pages the killed worker had taken and not parsed
are taken a second time, and a parsed page taken again would be set aside.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from bench.arxiv import IndexedArxivStandIn
from bench.generate import load_entries
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.distributed import bench_site, start_worker, wait_until
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot
from tests.support.redis import RedisServer

PROFILES = 12
JOB = "redo"
PREFIX = f"scholarindex:job:{JOB}"


def settings(config: OpenSearchConfig, url: str, api_url: str, cache: Path,
             delay: float) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": config.prefix,
            "INDEX_FLUSH_INTERVAL": "0.5", "OPENSEARCH_TIMEOUT": "120",
            "ARXIV_ENABLED": "true", "ARXIV_API_URL": api_url, "ARXIV_DELAY_SECONDS": "0.05",
            "ARXIV_BATCH_LINGER_SECONDS": "0.3", "ARXIV_CACHE_DIR": str(cache),
            "REDIS_MAX_DELIVERIES": "2", "REDIS_TAKE_BATCH": "1",
            "DOWNLOAD_DELAY": str(delay)}


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("pages_before_kill", [5, PROFILES])
def test_a_worker_killed_with_parsed_pages_waiting_for_the_index_costs_no_refetch_of_them(
        tmp_path: Path, redis_server: RedisServer, opensearch_config: OpenSearchConfig,
        pages_before_kill: int) -> None:
    if not opensearch_config.url.startswith("http://"):
        pytest.skip("the fault proxy cannot inspect TLS traffic")
    site = bench_site(tmp_path / "site", PROFILES, seed=11)
    proxy = FaultProxy.for_url(opensearch_config.urls[0], read_timeout=600).start()
    client = redis_server.client()
    try:
        with IndexedArxivStandIn(load_entries(site.root)) as arxiv:
            # The first worker's bulk requests never reach the index while it lives.
            proxy.delay_next(1000, 300, match="/_bulk")
            for name in ("a", "b"):
                (tmp_path / name).mkdir()
            # A page every 0.3 s: the kill finds at most a page or two fetched and not
            # yet parsed.
            first = start_worker(tmp_path / "a", redis_server.url, JOB, site.url_file, settings(
                opensearch_config, proxy.url, arxiv.api_url, tmp_path / "a-cache", delay=0.3))

            def outbox() -> set[str]:
                return {fp.decode() if isinstance(fp, bytes) else fp  # no decode_responses
                        for key in client.keys(f"{PREFIX}:outbox:*") for fp in client.hkeys(key)}

            def waiting_for_the_index() -> bool:  # parsed, handed off, a bulk of them held
                return len(outbox()) >= pages_before_kill and proxy.count("/_bulk") >= 1
            # A crawl's start on a real cluster (its indices checked, created and started)
            # takes seconds on a loaded machine.
            wait_until(waiting_for_the_index, 120, "the first worker's pages handed off")
            first.process.send_signal(signal.SIGKILL)
            assert first.finish().returncode == -signal.SIGKILL
            fetched_by_first = len(site.page_fetches())
            handed_off = outbox()
            assert len(handed_off) >= pages_before_kill
            assert proxy.count("/_bulk") >= 1  # its pages were waiting for the index
            # Nothing of it was delivered, so it holds no lookups another worker could adopt.
            held = {key: client.hkeys(key) for key in client.keys(f"{PREFIX}:lookups:*")}
            assert not any(held.values()), held

            second = start_worker(tmp_path / "b", redis_server.url, JOB, site.url_file,
                                  settings(opensearch_config, opensearch_config.url,
                                           arxiv.api_url, tmp_path / "b-cache", delay=0.03))
            result = second.finish(timeout=180)
        assert result.returncode == 0, result.log[-3000:]
        fetches = site.page_fetches()
        refetched = len(fetches) - len(set(fetches))
        # What the kill cost: the pages fetched and not yet parsed, never the pages whose
        # items waited for the index (before: every one of them, 5 or 12 here).
        assert refetched <= fetched_by_first - len(handed_off), (fetches, handed_off)
        assert refetched <= 2, fetches
        assert len(set(fetches)) == PROFILES
        assert "not fetched again" in result.log  # the second worker adopted the outbox
        assert not outbox()
        assert client.hlen(f"{PREFIX}:dead") == 0, "pages set aside: " + json.dumps(
            sorted(client.hkeys(f"{PREFIX}:dead")))
        es = build_client(opensearch_config)
        researchers = snapshot(es, f"{opensearch_config.prefix}researchers")
        assert len(researchers) == PROFILES
        works = snapshot(es, f"{opensearch_config.prefix}works")
        pending = sorted(w for w, doc in works.items()
                         if doc["enrichment"]["status"] == "pending")
        assert not pending
        dead_letters = tmp_path / "b" / "deadletter.jsonl"
        assert not dead_letters.exists() or not dead_letters.read_text().strip()
    finally:
        proxy.stop()
        site.server.__exit__(None, None, None)


def test_the_next_part_of_a_dead_workers_outbox_is_adopted_while_the_last_is_written() -> None:
    # Waiting for a part's delivery before adopting the next left the index idle between
    # parts: in the 4 x 2,000 soak the last part came nearly eight minutes after the crawl.
    from crawler.distributed.scheduler import adoption_limit
    from scholarindex.distributed.outbox import ADOPT_LIMIT

    assert adoption_limit([], 3) == ADOPT_LIMIT
    in_flight = [4] * ADOPT_LIMIT  # a whole part in flush 4, flush 3 delivered
    assert adoption_limit(in_flight, 3) == ADOPT_LIMIT  # the next part, for flush 5
    assert adoption_limit([*in_flight, 5], 3) == 0  # one part behind the flush in flight
    assert adoption_limit([5], 4) == ADOPT_LIMIT
