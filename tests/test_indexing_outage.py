"""OpenSearch goes away mid-crawl: the crawl pauses, then resumes or, past the wait, stops.

Real parts throughout: the profiles spider over the fixture site (``standins.site``)
in this process (``tests.support.crawl``), writing through the fault proxy to the
test cluster; the proxy closes its port and cuts every open connection for the
outage. The outage lasts seconds here; ``OPENSEARCH_OUTAGE_WAIT`` is set around it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import read_lines
from scholarindex.indexing.outage import Outage
from scholarindex.indexing.replay import replay
from standins.site import SiteServer
from tests.support.crawl import (
    ROOT,
    CrawlResult,
    crawl_command,
    crawl_profiles,
    process_result,
    run_crawl,
)
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot, untimed
from tests.support.settings import LAYOUT, RETENTION_DAYS, writer_retry_with

SITE = ROOT / "fixtures" / "site"
SITEMAP = json.loads((SITE / "sitemap.json").read_text())
PROFILES = sorted(path for path, page in SITEMAP.items() if page["profile"])
# A slow crawl in small batches, so the outage falls mid-crawl; a writer that gives a
# batch up (holds it) after two quick attempts, and probes every 0.2 s at most.
# The short outage; `make soak-outage` runs the same test through a 60 s one.
OUTAGE_SECONDS = float(os.environ.get("OUTAGE_TEST_SECONDS", "3"))
SLOW = {"DOWNLOAD_DELAY": "0.4", "CONCURRENT_REQUESTS_PER_DOMAIN": "1",
        "INDEX_BATCH_SIZE": "5", "INDEX_FLUSH_INTERVAL": "0.1", "INDEX_MAX_ATTEMPTS": "2",
        "INDEX_RETRY_INITIAL_WAIT": "0.05", "INDEX_RETRY_MAX_WAIT": "0.2",
        "INDEX_RETRY_JITTER": "0", "INCREMENTAL_ENABLED": "false"}


class _TimedRequests(list[str]):
    """The site's request log, with when each request came (epoch seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, path: str) -> None:
        self.times.append(time.time())
        super().append(path)

    def between(self, start: float, end: float) -> int:
        return sum(start <= t <= end for t in self.times)


@pytest.fixture
def site() -> Iterator[SiteServer]:
    with SiteServer(SITE) as server:
        server.requests = _TimedRequests()
        yield server


def crawl(tmp_path: Path, site: SiteServer, url: str, prefix: str, **extra: str
          ) -> CrawlResult:
    settings = {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": prefix,
                "RUN_REPORT": str(tmp_path / "report.json"), **SLOW, **extra}
    urls = ",".join(site.url(path) for path in PROFILES)
    return crawl_profiles(tmp_path, settings, urls=urls)


def contents(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    """Works and researchers as stored, but for when they were seen: two crawls into
    two fresh indices differ only there."""
    found = {name: untimed(snapshot(client, f"{prefix}{name}"))
             for name in ("works", "researchers")}
    for docs in found.values():
        for doc in docs.values():
            for entry in [doc, *doc.get("listings", [])]:
                entry.pop("first_seen", None)
    return found


class Outage_:
    """Cut the cluster off once the crawl has sent ``after_bulks`` bulk requests."""

    def __init__(self, proxy: FaultProxy, after_bulks: int, lasting: float | None):
        self.proxy, self.after_bulks, self.lasting = proxy, after_bulks, lasting
        self.began = self.ended = 0.0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + 30
        while self.proxy.count("/_bulk") < self.after_bulks and time.monotonic() < deadline:
            time.sleep(0.01)
        self.began = time.time()
        self.proxy.refuse()
        if self.lasting is not None:
            time.sleep(self.lasting)
            self.ended = time.time()
            self.proxy.pass_through()

    def __enter__(self) -> Outage_:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join()


def log_time(result: CrawlResult, text: str) -> float:
    [record] = [r for r in result.records if text in r.getMessage()]
    return record.created


def test_a_short_outage_pauses_the_crawl_and_loses_nothing(
        tmp_path: Path, site: SiteServer, fault_proxy: FaultProxy, opensearch_url: str,
        index_prefix: str, opensearch_client: OpenSearch) -> None:
    clean = crawl(tmp_path / "clean", site, opensearch_url, f"{index_prefix}clean_")
    assert clean.returncode == 0, clean.log[-3000:]
    expected = contents(opensearch_client, f"{index_prefix}clean_")
    fetched_clean = len(site.requests)

    with Outage_(fault_proxy, after_bulks=2, lasting=OUTAGE_SECONDS) as outage:
        result = crawl(tmp_path / "outage", site, fault_proxy.url, index_prefix,
                       OPENSEARCH_OUTAGE_WAIT=str(max(30, 2 * OUTAGE_SECONDS)))
    assert result.returncode == 0, result.log[-3000:]
    stats = result.stats
    assert stats["index/dead_lettered"] == 0 and not (tmp_path / "outage/deadletter.jsonl"
                                                      ).exists()
    assert contents(opensearch_client, index_prefix) == expected
    # It paused once, for about the outage, and said so.
    paused, resumed = log_time(result, "crawl paused"), log_time(result, "crawl resumed")
    assert outage.began <= paused < resumed and resumed >= outage.ended
    assert stats["index/pauses"] == 1
    assert 1.5 < stats["index/paused_seconds"] <= resumed - outage.began + 0.1
    assert result.report is not None
    assert result.report["index_paused_seconds"] == pytest.approx(stats["index/paused_seconds"])
    # Few pages fetched while the cluster was down (the crawl takes 0.4 s a page), none
    # while paused but the one in flight; every page fetched once, as in the clean crawl.
    requests = site.requests
    assert isinstance(requests, _TimedRequests)  # as the site fixture set it
    assert requests.between(paused, resumed) <= 1
    assert requests.between(outage.began, outage.ended) <= 3
    assert len(requests) - fetched_clean == fetched_clean
    assert requests.between(resumed, time.time()) > 0  # the crawl went on after the outage
    print(f"outage {outage.ended - outage.began:.1f} s, paused "
          f"{stats['index/paused_seconds']:.2f} s, pages fetched while down "
          f"{requests.between(outage.began, outage.ended)}, while paused "
          f"{requests.between(paused, resumed)}, of {fetched_clean}")


# What OpenSearch 2.19 answers an index creation with while a disk is past its flood
# stage (a real cluster's answer). Setting the block for real here would refuse every
# other test's indices on the shared test node meanwhile, so the proxy gives the answer.
CREATE_BLOCKED = {"type": "index_create_block_exception",
                  "reason": "blocked by: [FORBIDDEN/10/cluster create-index blocked (api)];"}


def test_a_crawl_started_at_the_flood_stage_waits_for_the_block_to_be_lifted(
        tmp_path: Path, site: SiteServer, fault_proxy: FaultProxy, index_prefix: str,
        opensearch_client: OpenSearch) -> None:
    """Refused more times than the start-up check tries (INDEX_MAX_ATTEMPTS is 2 here):
    it waits, as through an outage, says why, and crawls once the block is gone."""
    fault_proxy.fail_next(8, status=403, match=f"PUT /{index_prefix}works-v",
                          error=CREATE_BLOCKED)
    result = crawl(tmp_path, site, fault_proxy.url, index_prefix, OPENSEARCH_OUTAGE_WAIT="60")
    assert result.returncode == 0, result.log[-3000:]
    assert fault_proxy.pending_faults() == 0
    waits = [r.getMessage() for r in result.records
             if "waiting for the block to be lifted" in r.getMessage()]
    assert len(waits) == 8 and "flood-stage watermark" in waits[0]
    assert result.stats["index/dead_lettered"] == 0
    assert result.report is not None and result.report["pages"]["parsed"] == len(PROFILES)
    opensearch_client.indices.refresh(index=f"{index_prefix}works")
    assert opensearch_client.count(index=f"{index_prefix}works")["count"] > 0


def test_an_outage_longer_than_the_wait_dead_letters_what_is_held_and_exits_3(
        tmp_path: Path, site: SiteServer, fault_proxy: FaultProxy, opensearch_url: str,
        index_prefix: str, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    with Outage_(fault_proxy, after_bulks=2, lasting=None):
        result = crawl(tmp_path, site, fault_proxy.url, index_prefix,
                       OPENSEARCH_OUTAGE_WAIT="1.5")
    stats = result.stats
    assert result.returncode == 3, result.log[-3000:]
    assert stats["finish_reason"] == "opensearch_unavailable"
    assert stats["run/reason"].startswith("run failed (exit 3): opensearch unavailable")
    assert 1.5 <= stats["index/paused_seconds"] < 5
    # Every change it held, and every one that came after, is in the dead-letter file
    # with the reason; what reached the index plus that is everything the crawl scraped.
    letters = [letter for _, letter in read_lines(tmp_path / "deadletter.jsonl")]
    assert letters and all(letter is not None for letter in letters)
    assert len(letters) == stats["index/dead_lettered"]
    assert all(letter.code == "unavailable" and "OPENSEARCH_OUTAGE_WAIT=1.5s" in letter.reason
               for letter in letters if letter)
    delivered = stats["index/listings_delivered"] + stats["index/researchers_delivered"]
    assert delivered + len(letters) == stats["item_scraped_count"]
    print(f"paused {stats['index/paused_seconds']:.2f} s, dead-lettered {len(letters)} of "
          f"{stats['item_scraped_count']} items, exit {result.returncode}")
    outage_errors = [e for e in result.errors() if "OPENSEARCH_OUTAGE_WAIT" in e]
    assert len(outage_errors) == 1 and "\n" not in outage_errors[0]

    # Replayed once the cluster is back, the index holds everything the crawl scraped.
    fault_proxy.pass_through()
    report = replay(tmp_path / "deadletter.jsonl", build_client(opensearch_config),
                    index_prefix, writer_retry_with(), retention_days=RETENTION_DAYS, layout=LAYOUT)
    assert report.failed_again == 0 and report.delivered == len(letters)
    works = snapshot(opensearch_client, f"{index_prefix}works")
    scraped = {(item["work_id"], item["researcher_id"]) for item in result.kind("work")}
    assert {(listing["work_id"], listing["researcher_id"]) for doc in works.values()
            for listing in doc["listings"]} == scraped


@pytest.mark.process
def test_the_crawl_command_rides_out_an_outage_with_its_writer_process(
        tmp_path: Path, site: SiteServer, fault_proxy: FaultProxy, index_prefix: str,
        opensearch_client: OpenSearch) -> None:
    urls = ",".join(site.url(path) for path in PROFILES)
    settings = {"INDEX_ENABLED": "true", "OPENSEARCH_URL": fault_proxy.url,
                "INDEX_PREFIX": index_prefix, "OPENSEARCH_OUTAGE_WAIT": "30", **SLOW}
    with Outage_(fault_proxy, after_bulks=2, lasting=2.0):
        done = run_crawl(tmp_path, "-a", f"urls={urls}", settings=settings)
    assert done.returncode == 0, done.log[-3000:]
    assert "crawl paused" in done.log and "crawl resumed" in done.log
    assert done.report["dead_lettered"] == 0 and done.report["index_paused_seconds"] > 1
    assert not (tmp_path / "deadletter.jsonl").exists()
    works = snapshot(opensearch_client, f"{index_prefix}works")
    scraped = {(item["work_id"], item["researcher_id"]) for item in done.kind("work")}
    assert {(listing["work_id"], listing["researcher_id"]) for doc in works.values()
            for listing in doc["listings"]} == scraped
    assert len(scraped) == done.report["listings"]


# Ctrl-C during an outage, at two moments: mid-crawl, and after the spider finished, while
# the closing flush (the only one: nothing is flushed before it) waits for the cluster.
CTRL_C_MOMENTS = {
    "mid-crawl": ({}, None),
    "closing flush": ({"INDEX_BATCH_SIZE": "100000", "INDEX_FLUSH_INTERVAL": "3600"},
                      "Closing spider (finished)"),
}


@pytest.mark.process
@pytest.mark.parametrize("moment", CTRL_C_MOMENTS)
def test_ctrl_c_during_an_outage_dead_letters_what_is_held_without_waiting(
        moment: str, tmp_path: Path, site: SiteServer, fault_proxy: FaultProxy,
        index_prefix: str) -> None:
    overrides, cut_at = CTRL_C_MOMENTS[moment]
    urls = ",".join(site.url(path) for path in PROFILES)
    settings = {"INDEX_ENABLED": "true", "OPENSEARCH_URL": fault_proxy.url,
                "INDEX_PREFIX": index_prefix, "OPENSEARCH_OUTAGE_WAIT": "600", **SLOW,
                **overrides}
    command, out, report = crawl_command(tmp_path, "-a", f"urls={urls}", settings=settings)
    lines: list[str] = []

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 60
        while not any(text in line for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            time.sleep(0.05)

    cut = Outage_(fault_proxy, after_bulks=2, lasting=None) if cut_at is None else nullcontext()
    with cut:
        proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
        reader.start()
        try:
            if cut_at is not None:
                wait_for(cut_at)
                fault_proxy.refuse()
            wait_for("crawl paused")
            stopped = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            took = time.monotonic() - stopped
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(timeout=10)
    done = process_result(proc.returncode, out, report, "".join(lines))
    assert done.returncode == 4, done.log[-3000:]  # interrupted, documents dead-lettered
    assert took < 30  # not OPENSEARCH_OUTAGE_WAIT
    letters = [letter for _, letter in read_lines(tmp_path / "deadletter.jsonl")]
    assert letters and len(letters) == done.report["dead_lettered"]
    assert all(letter and "stopped while OpenSearch was unavailable" in letter.reason
               for letter in letters)


def test_outage_bookkeeping_backs_off_and_stops_at_the_wait() -> None:
    policy = RetryPolicy(attempts=3, initial_wait=1.0, max_wait=8.0, jitter=0)
    outage = Outage(started=100.0, max_wait=20.0)
    delays = [outage.next_probe_in(policy, now=100.0) for _ in range(5)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0]  # the writer's backoff, capped
    assert outage.next_probe_in(policy, now=117.0) == 3.0  # never past the deadline
    assert not outage.expired(119.9) and outage.expired(120.0)
    assert outage.lasted(99.0) == 0.0
