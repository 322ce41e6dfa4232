"""The writer through a real fault-injecting proxy: retries, drops, outages, dead letter."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from bench.indexing import batches, synthetic_listings, synthetic_researchers
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.client import build_client, translate_errors
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile, read_lines
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import ensure_aliases
from scholarindex.indexing.replay import replay
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot
from tests.support.settings import LAYOUT, RETENTION_DAYS, writer_retry_with

T1 = "2026-01-01T00:00:00.000Z"
ITEMS: list[WorkItem | ResearcherItem] = [
    *synthetic_listings(20, per_work=2, researchers=8), *synthetic_researchers(8)]


def clean_state(make_writer: Callable[..., BulkWriter], client: OpenSearch,
                prefix: str) -> dict[str, dict]:
    """The index as a fault-free write of ITEMS leaves it, under another prefix."""
    ensure_aliases(client, prefix + "clean_", layout=LAYOUT)
    writer = make_writer()
    writer.prefix = prefix + "clean_"
    for batch in batches(ITEMS, 16, T1):
        writer.write(batch)
    return {a: snapshot(client, f"{prefix}clean_{a}") for a in ("works", "researchers")}


def state(client: OpenSearch, prefix: str) -> dict[str, dict]:
    return {a: snapshot(client, f"{prefix}{a}") for a in ("works", "researchers")}


def test_proxy_passes_and_injects(fault_proxy: FaultProxy,
                                  opensearch_config: OpenSearchConfig) -> None:
    client = build_client(replace(opensearch_config, url=fault_proxy.url))
    assert client.info()["version"]["number"]
    fault_proxy.fail_next(1, 429)
    with pytest.raises(Exception, match="429"):
        client.info()
    assert client.info()  # the connection survives an injected answer
    assert fault_proxy.faults_injected == 1 and fault_proxy.count("GET /") == 3


@pytest.mark.parametrize("status", [429, 503, 502])
def test_overload_answers_are_retried(status: int, fault_proxy: FaultProxy,
                                      make_writer: Callable[..., BulkWriter],
                                      opensearch_client: OpenSearch,
                                      opensearch_config: OpenSearchConfig) -> None:
    expected = clean_state(make_writer, opensearch_client, opensearch_config.prefix)
    writer = make_writer(url=fault_proxy.url, attempts=5)
    fault_proxy.fail_next(2, status, match="/_bulk")
    fault_proxy.fail_next(1, status, match="/_mget")
    reports = [writer.write(batch) for batch in batches(ITEMS, 16, T1)]
    assert fault_proxy.pending_faults() == 0
    assert sum(r.retries for r in reports) >= 3
    assert sum(r.dead_lettered for r in reports) == 0
    assert state(opensearch_client, opensearch_config.prefix) == {
        a: expected[a] for a in expected}


@pytest.mark.parametrize("forward", [True, False], ids=["answer-lost", "request-lost"])
def test_connection_dropped_mid_request_is_retried(
        forward: bool, fault_proxy: FaultProxy, make_writer: Callable[..., BulkWriter],
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig) -> None:
    expected = clean_state(make_writer, opensearch_client, opensearch_config.prefix)
    writer = make_writer(url=fault_proxy.url, attempts=5)
    fault_proxy.drop_next(2, forward=forward, match="/_bulk")
    reports = [writer.write(batch) for batch in batches(ITEMS, 16, T1)]
    assert fault_proxy.pending_faults() == 0
    assert sum(r.dead_lettered for r in reports) == 0
    assert sum(r.listings_delivered for r in reports) == 40
    if forward:  # the server had applied it: the retry re-read it and found nothing to do
        assert sum(r.docs_unchanged for r in reports) > 0
    assert state(opensearch_client, opensearch_config.prefix) == expected


def test_timeout_is_retried(fault_proxy: FaultProxy, opensearch_client: OpenSearch,
                            opensearch_config: OpenSearchConfig,
                            make_writer: Callable[..., BulkWriter]) -> None:
    writer = make_writer(url=fault_proxy.url, attempts=4)
    writer.client = build_client(replace(opensearch_config, url=fault_proxy.url, timeout=0.5))
    fault_proxy.delay_next(1, 1.5, match="/_bulk")
    report = writer.write(next(batches(ITEMS, 10, T1)))
    assert report.retries > 0 and report.dead_lettered == 0 and report.delivered == 10


def test_outage_longer_than_retries_dead_letters_then_replay_restores(
        fault_proxy: FaultProxy, make_writer: Callable[..., BulkWriter],
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    expected = clean_state(make_writer, opensearch_client, opensearch_config.prefix)
    dead = tmp_path / "dl.jsonl"
    writer = make_writer(url=fault_proxy.url, attempts=3, dead_letters=dead)
    written = writer.write(next(batches(ITEMS[:10], 10, T1)))
    assert written.delivered == 10
    fault_proxy.refuse()  # the cluster goes away mid-crawl
    reports = [writer.write(batch) for batch in batches(ITEMS[10:], 16, T1)]
    assert sum(r.dead_lettered for r in reports) == len(ITEMS) - 10
    assert all(r.retries > 0 and r.fatal is None for r in reports)
    letters = [letter for _, letter in read_lines(dead)]
    assert len(letters) == len(ITEMS) - 10
    assert all(letter and letter.code == "unavailable" and "connection failed" in letter.reason
               for letter in letters)
    # Replay while still down: nothing is lost, the lines stay with their new reason.
    down = build_client(replace(opensearch_config, url=fault_proxy.url))
    with pytest.raises(IndexUnavailable):
        replay(dead, down, opensearch_config.prefix, writer_retry_with(),
               retention_days=RETENTION_DAYS, layout=LAYOUT)
    assert len(dead.read_text().splitlines()) == len(ITEMS) - 10
    fault_proxy.pass_through()  # back up
    report = replay(dead, build_client(replace(opensearch_config, url=fault_proxy.url)),
                    opensearch_config.prefix, writer_retry_with(),
                    retention_days=RETENTION_DAYS, layout=LAYOUT)
    assert report.delivered == len(ITEMS) - 10 and report.failed_again == 0
    assert state(opensearch_client, opensearch_config.prefix) == expected
    assert not dead.exists() or dead.read_text() == ""


def test_an_outage_with_hold_hands_the_batches_back_and_they_deliver_later(
        fault_proxy: FaultProxy, make_writer: Callable[..., BulkWriter],
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    expected = clean_state(make_writer, opensearch_client, opensearch_config.prefix)
    dead = tmp_path / "dl.jsonl"
    writer = make_writer(url=fault_proxy.url, attempts=2, dead_letters=dead)
    first, *rest = batches(ITEMS, 16, T1)
    assert writer.write(first, hold=True).delivered == len(first)
    fault_proxy.refuse()
    reports = [writer.write(batch, hold=True) for batch in rest]
    # Nothing delivered, nothing dead-lettered: every change comes back, with the reason.
    assert [[id(c) for c in r.held] for r in reports] == [[id(c) for c in b] for b in rest]
    assert all(r.dead_lettered == 0 and r.fatal is None and r.delivered == 0 for r in reports)
    assert all("connection failed" in r.held_reason for r in reports)
    assert not dead.exists()
    fault_proxy.pass_through()
    again = [writer.write(r.held, hold=True) for r in reports]
    assert all(not r.held and r.dead_lettered == 0 for r in again)
    assert state(opensearch_client, opensearch_config.prefix) == expected


def test_batches_held_while_the_stored_profiles_cannot_be_read_come_back_whole(
        fault_proxy: FaultProxy, make_writer: Callable[..., BulkWriter],
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    # Complete pages: before writing, the writer reads each stored profile to find the
    # works it no longer lists. That read failing through an outage holds the batch.
    works: dict[str, list[str]] = {}
    for item in ITEMS:
        if item.kind == "work":
            works.setdefault(item.researcher_id, []).append(item.work_id)
    items = [replace(item, work_ids=works.get(item.id, []), complete=True)
             if item.kind == "researcher" else item for item in ITEMS]
    expected = clean_state(make_writer, opensearch_client, opensearch_config.prefix)
    writer = make_writer(url=fault_proxy.url, attempts=2, dead_letters=tmp_path / "dl.jsonl")
    first, *rest = batches(items, 16, T1)
    writer.write(first, hold=True)
    fault_proxy.refuse()
    held = [writer.write(batch, hold=True) for batch in rest]
    assert [len(r.held) for r in held] == [len(batch) for batch in rest]
    fault_proxy.pass_through()
    again = [writer.write(r.held, hold=True) for r in held]
    assert all(not r.held and r.dead_lettered == 0 for r in again)
    assert state(opensearch_client, opensearch_config.prefix)["works"] == expected["works"]


def test_unauthorised_is_fatal_not_retried(fault_proxy: FaultProxy,
                                           make_writer: Callable[..., BulkWriter],
                                           tmp_path: Path) -> None:
    writer = make_writer(url=fault_proxy.url, attempts=5, dead_letters=tmp_path / "dl.jsonl")
    fault_proxy.fail_next(1, 401)
    report = writer.write(next(batches(ITEMS, 5, T1)))
    assert report.fatal and "authentication failed" in report.fatal
    assert report.retries == 0 and report.dead_lettered == 5
    assert fault_proxy.count("/_mget") == 1


def test_retry_after_reaches_index_unavailable(fault_proxy: FaultProxy,
                                               opensearch_config: OpenSearchConfig) -> None:
    client = build_client(replace(opensearch_config, url=fault_proxy.url))
    fault_proxy.fail_next(1, 503, retry_after="4")
    fault_proxy.fail_next(1, 429)
    for expected in (4.0, None):
        with pytest.raises(IndexUnavailable) as caught, translate_errors("info"):
            client.info()
        assert caught.value.retryable and caught.value.retry_after == expected


@pytest.mark.parametrize("status", [429, 503])
def test_the_writer_waits_as_long_as_retry_after_asks_up_to_its_cap(
        status: int, fault_proxy: FaultProxy, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    policy = RetryPolicy(attempts=5, initial_wait=0.05, max_wait=0.1, jitter=0,
                         retry_after_max=20.0)
    slept: list[float] = []
    writer = BulkWriter(build_client(replace(opensearch_config, url=fault_proxy.url)),
                        opensearch_config.prefix, DeadLetterFile(tmp_path / "dl.jsonl"), policy,
                        sleep=slept.append, layout=LAYOUT)
    # Each round reads (mget) then writes (bulk).
    fault_proxy.fail_next(1, status, match="/_mget", retry_after="3600")
    fault_proxy.fail_next(1, status, match="/_bulk", retry_after="9")
    fault_proxy.fail_next(1, status, match="/_bulk")  # no header: the backoff
    report = writer.write(next(iter(batches(ITEMS, 16, T1))))
    assert fault_proxy.pending_faults() == 0 and report.dead_lettered == 0
    assert slept == [20.0, 9.0, 0.1]  # capped; as asked; 0.05 * 2**2 capped at max_wait


def test_the_measured_wait_follows_retry_after(fault_proxy: FaultProxy,
                                               opensearch_client: OpenSearch,
                                               opensearch_config: OpenSearchConfig,
                                               tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    policy = RetryPolicy(attempts=3, initial_wait=0.05, max_wait=0.1, jitter=0,
                         retry_after_max=20.0)
    writer = BulkWriter(build_client(replace(opensearch_config, url=fault_proxy.url)),
                        opensearch_config.prefix, DeadLetterFile(tmp_path / "dl.jsonl"), policy,
                        layout=LAYOUT)
    fault_proxy.fail_next(1, 503, match="/_bulk", retry_after="1")
    began = time.monotonic()
    report = writer.write(next(iter(batches(ITEMS, 16, T1))))
    assert report.dead_lettered == 0 and report.retries > 0
    assert time.monotonic() - began >= 1.0  # the backoff alone is 0.05 s
