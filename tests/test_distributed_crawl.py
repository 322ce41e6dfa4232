"""The distributed crawl: workers of one job on one Redis (real redis-server, real
``scrapy crawl`` processes, a real synthetic site, an OpenSearch node for the index).

* three workers, one killed with SIGKILL mid-crawl: the others exit 0, the index equals
  a single-process crawl's, pages are fetched about once in all, each survivor parsed
  a real share;
* Redis killed and restarted on its append-only file mid-crawl: nothing lost;
* a different job under a running job's name is refused (75); a drained worker (SIGTERM)
  hands its pages back and exits 0.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from scholarindex.distributed.keys import JobKeys
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.settings import REDIS_KEY_PREFIX as DEFAULT_KEY_PREFIX
from tests.support.crawl import crawl_profiles
from tests.support.distributed import bench_site, start_worker, wait_until
from tests.support.index_contents import snapshot, untimed
from tests.support.redis import RedisServer

pytestmark = [pytest.mark.process, pytest.mark.slow]

PROFILES = 160
MAX_UNACKED = 32


def index_settings(config: OpenSearchConfig, prefix: str) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": config.url, "INDEX_PREFIX": prefix}


def index_contents(client: OpenSearch, prefix: str) -> dict[str, dict]:
    """Both indices, without when things were seen: the two crawls ran at different times."""
    contents = {name: untimed(snapshot(client, f"{prefix}{name}"))
                for name in ("works", "researchers")}
    for docs in contents.values():
        for doc in docs.values():
            for entry in [doc, *doc.get("listings", [])]:
                entry.pop("first_seen", None)
    return contents


def differences(got: dict[str, dict], want: dict[str, dict]) -> list[tuple[str, str]]:
    """(document id, field) where two snapshots differ; every id of either side."""
    found = []
    for doc_id in sorted(set(got) | set(want)):
        a, b = got.get(doc_id), want.get(doc_id)
        if a is None or b is None:
            found.append((doc_id, "missing" if a is None else "extra"))
            continue
        found += [(doc_id, k) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return found


def test_three_workers_one_killed_index_equals_a_single_process_crawl(
        tmp_path: Path, redis_server: RedisServer, opensearch_config: OpenSearchConfig) -> None:
    site = bench_site(tmp_path / "site", PROFILES)
    prefix = opensearch_config.prefix
    # Slow enough that the kill lands mid-crawl (about 60 pages/s in all).
    settings = {**index_settings(opensearch_config, prefix),
                "CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.03",
                "REDIS_MAX_UNACKED": str(MAX_UNACKED)}
    try:
        workers = [start_worker(tmp_path, redis_server.url, "three", site.url_file, settings)
                   for _ in range(3)]
        wait_until(lambda: len(site.page_fetches()) >= PROFILES // 4, 60, "a quarter fetched")
        workers[2].process.send_signal(signal.SIGKILL)
        killed = workers[2].finish()
        # What it held when it died: it may have been between takes, holding nothing.
        owners = [o.decode() if isinstance(o, bytes) else o  # bytes: no decode_responses
                  for o in redis_server.client().hvals(JobKeys(DEFAULT_KEY_PREFIX, "three").owners)]
        held = sum(o.split(":")[1] == str(workers[2].process.pid) for o in owners)
        survivors = [w.finish() for w in workers[:2]]
        fetched = site.page_fetches()

        assert killed.returncode == -signal.SIGKILL
        for result in survivors:
            assert result.returncode == 0, result.log[-3000:]
        # About once each: only the killed worker's unacknowledged pages twice, at most
        # REDIS_MAX_UNACKED of them.
        assert set(fetched) == {u.split(site.server.base, 1)[1] for u in site.urls}
        assert len(fetched) <= PROFILES + MAX_UNACKED, len(fetched) - PROFILES
        parsed = [r.report["pages"]["parsed"] for r in survivors]
        assert all(n >= PROFILES // 5 for n in parsed), parsed
        reclaimed = any("expired lease(s) back in the queue" in r.log for r in survivors)
        assert reclaimed == (held > 0), held

        reference = f"{prefix}ref_"
        single = crawl_profiles(tmp_path / "single", {
            **index_settings(opensearch_config, reference), "ROBOTSTXT_OBEY": "false"},
            timeout=240, url_file=str(site.url_file))
        assert single.returncode == 0
        client = build_client(opensearch_config)
        distributed, alone = index_contents(client, prefix), index_contents(client, reference)
        assert len(alone["researchers"]) == PROFILES
        for name in ("researchers", "works"):
            assert differences(distributed[name], alone[name]) == []
    finally:
        site.server.__exit__(None, None, None)


def test_a_page_whose_items_started_a_flush_is_acknowledged_and_the_job_ends(
        tmp_path: Path, redis_server: RedisServer, opensearch_config: OpenSearchConfig) -> None:
    # A batch of one change: every page's own items start the flush that carries them, so
    # the last page's flush is the last flush. Waiting for a flush that started after the
    # page was done (there is none) kept the job open for ever.
    profiles = 4
    site = bench_site(tmp_path / "site", profiles, seed=9)
    settings = {**index_settings(opensearch_config, opensearch_config.prefix),
                "INDEX_BATCH_SIZE": "1", "INDEX_FLUSH_INTERVAL": "0.5",
                # One page at a time, each after the last flush ended.
                "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "DOWNLOAD_DELAY": "1"}
    try:
        worker = start_worker(tmp_path, redis_server.url, "tickets", site.url_file, settings)
        result = worker.finish(timeout=60)
        assert result.returncode == 0, result.log[-3000:]
        done = redis_server.client().hgetall("scholarindex:job:tickets:done")
        assert sum(int(n) for n in done.values()) == profiles
        assert redis_server.client().hget("scholarindex:job:tickets", "state") == b"finished"
    finally:
        site.server.__exit__(None, None, None)


def test_redis_killed_and_restarted_20_s_later_the_crawl_resumes_and_redoes_nothing(
        tmp_path: Path, redis_server: RedisServer, opensearch_config: OpenSearchConfig) -> None:
    profiles = 150
    site = bench_site(tmp_path / "site", profiles, seed=6)
    prefix = opensearch_config.prefix
    settings = {**index_settings(opensearch_config, prefix),
                "CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.03"}
    try:
        workers = [start_worker(tmp_path, redis_server.url, "restart", site.url_file, settings)
                   for _ in range(2)]
        wait_until(lambda: len(site.page_fetches()) >= profiles // 3, 60, "a third fetched")
        redis_server.kill()
        down_at = len(site.page_fetches())
        time.sleep(5)
        # Nothing new is fetched while Redis is away: takes wait in line.
        paused_at = len(site.page_fetches())
        time.sleep(15)
        assert len(site.page_fetches()) == paused_at
        redis_server.start()
        # Two workers' writes and the works' judgment after a 20 s pause: 80 s on a quiet
        # 2-core machine, more under load; a crawl that hangs still fails here.
        results = [w.finish(timeout=240) for w in workers]
        for result in results:
            assert result.returncode == 0, result.log[-3000:]
        assert any("unavailable" in r.log for r in results)
        assert down_at < profiles  # the outage came mid-crawl
        # Every page fetched once: the leases held through the outage were not lost.
        fetched = site.page_fetches()
        assert sorted(fetched) == sorted(set(fetched)) and len(fetched) == profiles

        reference = f"{prefix}ref_"
        single = crawl_profiles(tmp_path / "single", {
            **index_settings(opensearch_config, reference), "ROBOTSTXT_OBEY": "false"},
            timeout=240, url_file=str(site.url_file))
        assert single.returncode == 0
        client = build_client(opensearch_config)
        distributed, alone = index_contents(client, prefix), index_contents(client, reference)
        for name in ("researchers", "works"):
            assert differences(distributed[name], alone[name]) == []
    finally:
        site.server.__exit__(None, None, None)


def test_sigterm_while_redis_is_down_stops_the_worker_promptly(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = bench_site(tmp_path / "site", 120, seed=10)
    settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.05",
                "REDIS_RETRY_SECONDS": "300"}
    try:
        worker = start_worker(tmp_path, redis_server.url, "term", site.url_file, settings)
        wait_until(lambda: len(site.page_fetches()) >= 20, 60, "pages fetched")
        redis_server.kill()
        time.sleep(2)
        worker.process.send_signal(signal.SIGTERM)
        told = time.monotonic()
        result = worker.finish(timeout=60)
        assert time.monotonic() - told < 20, result.log[-3000:]
        assert result.returncode in (0, 3), result.log[-3000:]
    finally:
        site.server.__exit__(None, None, None)


@pytest.mark.parametrize("down_after", [10, 40])
def test_a_worker_that_gives_up_on_redis_exits_within_seconds_of_saying_so(
        tmp_path: Path, redis_server: RedisServer, down_after: int) -> None:
    site = bench_site(tmp_path / "site", 120, seed=8)
    # Page state in Redis too: every part of the worker that uses Redis must give up at once.
    settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.05",
                "REDIS_RETRY_SECONDS": "3", "INCREMENTAL_ENABLED": "true"}
    try:
        worker = start_worker(tmp_path, redis_server.url, "gone", site.url_file, settings)
        wait_until(lambda: len(site.page_fetches()) >= down_after, 60, "pages fetched")
        redis_server.kill()
        wait_until(lambda: "closing this worker" in worker.log_path.read_text(), 30,
                   "the worker giving up")
        said = time.monotonic()
        result = worker.finish(timeout=30)
        assert time.monotonic() - said < 10, result.log[-3000:]
        assert result.returncode == 3, result.log[-3000:]
        assert "redis unavailable" in result.log.splitlines()[-1]
    finally:
        site.server.__exit__(None, None, None)


def test_a_different_job_under_a_running_name_is_refused_and_a_drained_worker_hands_back(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = bench_site(tmp_path / "site", 60, seed=7)
    other = tmp_path / "other-urls.txt"
    other.write_text("\n".join(site.urls[:5]) + "\n", encoding="utf-8")
    # 60 pages take 18 s or more: the refused worker, slow to start on a loaded machine,
    # must find the first one still crawling, with pages left to hand back.
    slow = {"CONCURRENT_REQUESTS_PER_DOMAIN": "1", "DOWNLOAD_DELAY": "0.3"}
    try:
        first = start_worker(tmp_path, redis_server.url, "named", site.url_file, slow)
        wait_until(lambda: len(site.page_fetches()) >= 5, 60, "the first worker crawling")
        refused = start_worker(tmp_path, redis_server.url, "named", other).finish()
        assert refused.returncode == 75
        assert "with a different URL list" in refused.log.splitlines()[-1]

        # Drain: SIGTERM, Scrapy's graceful stop; its unfinished pages go back to the queue.
        first.process.send_signal(signal.SIGTERM)
        drained = first.finish()
        assert drained.returncode == 0, drained.log[-3000:]
        assert "lease(s) handed back" in drained.log
        done = drained.report["pages"]["parsed"]
        assert done < 60
        # A worker added later finishes the job; together they parsed every page.
        second = start_worker(tmp_path, redis_server.url, "named", site.url_file).finish()
        assert second.returncode == 0, second.log[-3000:]
        urls = {i["url"] for r in (drained, second) for i in r.kind("researcher")}
        assert urls == set(site.urls)
        assert redis_server.client().hget("scholarindex:job:named", "state") == b"finished"
    finally:
        site.server.__exit__(None, None, None)



def test_page_state_is_the_jobs_a_second_run_on_other_machines_skips_unchanged_pages(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = bench_site(tmp_path / "site", 30, seed=12)
    try:
        def run(n: int) -> list:
            # Each run on a machine of its own: its own STATE_DIR, which must not matter.
            return [start_worker(tmp_path, redis_server.url, "again", site.url_file, {
                "INCREMENTAL_ENABLED": "true", "STATE_DIR": str(tmp_path / f"state-{n}")})]
        first = [w.finish() for w in run(1)]
        assert all(r.returncode == 0 for r in first), first[0].log[-2000:]
        assert sum(r.report["pages"]["parsed"] for r in first) == 30
        second = [w.finish() for w in run(2)]
        assert all(r.returncode == 0 for r in second), second[0].log[-2000:]
        assert sum(r.report["pages"]["unchanged"] for r in second) == 30
        assert sum(r.report["pages"]["parsed"] for r in second) == 0
    finally:
        site.server.__exit__(None, None, None)
