"""A worker killed while its parsed pages wait for a slow index: its pages are done again
and indexed, never set aside, and its arXiv lookups are not adopted for works the index
does not hold (real redis-server, real ``scrapy crawl`` processes, the stand-in arXiv API,
the OpenSearch node behind the fault proxy for the worker that is killed).

Under heavy churn with a slow index (the soak: a kill every 20 s, a bulk request over a
minute) the old code lost pages: every take of a lease counted towards
``REDIS_MAX_DELIVERIES``, so pages parsed and waiting for their delivery went from one
killed worker to the next until the frontier set them aside, and they were never indexed.
Their works' lookups, written to Redis when the page was parsed rather than delivered,
were adopted, and the answers for works the index did not hold were dead-lettered
(``missing_document``, exit 4). Here one kill is enough: ``REDIS_MAX_DELIVERIES=1``.
"""

from __future__ import annotations

import json
import signal
import time
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
             unacked: int) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": config.prefix,
            "INDEX_FLUSH_INTERVAL": "0.5", "OPENSEARCH_TIMEOUT": "120",
            "ARXIV_ENABLED": "true", "ARXIV_API_URL": api_url, "ARXIV_DELAY_SECONDS": "0.05",
            "ARXIV_BATCH_LINGER_SECONDS": "0.3", "ARXIV_CACHE_DIR": str(cache),
            "REDIS_MAX_DELIVERIES": "1", "REDIS_TAKE_BATCH": "1",
            "REDIS_MAX_UNACKED": str(unacked)}


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("pages_before_kill", [1, 5, PROFILES])
def test_a_worker_killed_with_parsed_pages_waiting_for_the_index_loses_nothing(
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
            first = start_worker(tmp_path / "a", redis_server.url, JOB, site.url_file, settings(
                opensearch_config, proxy.url, arxiv.api_url, tmp_path / "a-cache",
                unacked=pages_before_kill))
            wait_until(lambda: len(site.page_fetches()) >= pages_before_kill, 90,
                       "the first worker's pages fetched")

            def parsed_and_said() -> bool:  # its renewals named every page it parsed
                counts = client.hvals(f"{PREFIX}:deliveries")
                return len(counts) == pages_before_kill and all(int(n) == 0 for n in counts)

            def waiting_for_the_index() -> bool:  # and a bulk of them is held at the proxy
                return parsed_and_said() and proxy.count("/_bulk") >= 1
            # A crawl's start on a real cluster (its indices checked, created and started)
            # takes seconds on a loaded machine: the kill waits for the held bulk.
            deadline = time.monotonic() + 60
            while not waiting_for_the_index() and time.monotonic() < deadline:
                time.sleep(0.05)
            first.process.send_signal(signal.SIGKILL)
            assert first.finish().returncode == -signal.SIGKILL
            assert proxy.count("/_bulk") >= 1  # its pages were waiting for the index
            # Nothing of it was delivered, so it holds no lookups another worker could adopt.
            held = {key: client.hkeys(key) for key in client.keys(f"{PREFIX}:lookups:*")}
            assert not any(held.values()), held

            second = start_worker(tmp_path / "b", redis_server.url, JOB, site.url_file,
                                  settings(opensearch_config, opensearch_config.url,
                                           arxiv.api_url, tmp_path / "b-cache", unacked=48))
            result = second.finish(timeout=180)
        assert result.returncode == 0, result.log[-3000:]
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
