"""Two writers on overlapping works at the same time lose no contribution."""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.items import WorkItem
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from tests.support.settings import LAYOUT

WORKS = 40
PROFILES_PER_WRITER = 4
BATCH = WORKS  # each batch touches every work, so the two writers' batches collide


def share(writer: str) -> list[WorkItem]:
    """Every work, as listed on this writer's own profiles (the other writer has others)."""
    return [WorkItem(work_id=f"w{w:03d}", title=f"Shared work {w}",
                     researcher_id=f"{writer}-{p}", researcher_name=f"{writer.upper()} Person {p}",
                     authors=[f"{writer.upper()} Person {p}", "Common Author"], year=2020 + w % 5)
            for p in range(PROFILES_PER_WRITER) for w in range(WORKS)]


def write_share(config: OpenSearchConfig, writer_name: str, dead: Path,
                start: Any, ready: Any, results: Any = None) -> dict[str, Any]:
    """Write one writer's share, twice (a crawl and a re-crawl), once ``start`` is set."""
    policy = RetryPolicy(attempts=30, initial_wait=0.01, max_wait=0.1, jitter=0.02)
    client = build_client(config)
    client.info()  # connected and warm before the race starts
    writer = BulkWriter(client, config.prefix, DeadLetterFile(dead), policy, layout=LAYOUT)
    items = share(writer_name) * 2
    report = WriteReport()
    ready.put(writer_name)
    start.wait(30)
    for i in range(0, len(items), BATCH):
        report.add(writer.write([change_from_item(it) for it in items[i:i + BATCH]]))
    outcome = {"writer": writer_name, "delivered": report.listings_delivered,
               "conflicts": report.conflicts, "dead": report.dead_lettered}
    if results is not None:
        results.put(outcome)
    return outcome


def assert_every_contribution_present(client: OpenSearch, alias: str) -> None:
    client.indices.refresh(index=alias)
    docs = client.search(index=alias, body={"size": 1000, "query": {"match_all": {}}})
    hits = docs["hits"]["hits"]
    assert len(hits) == WORKS
    expected_profiles = {f"{w}-{p}" for w in ("a", "b") for p in range(PROFILES_PER_WRITER)}
    for hit in hits:
        source = hit["_source"]
        assert {e["researcher_id"] for e in source["listings"]} == expected_profiles, hit["_id"]
        assert {p["id"] for p in source["profiles"]} == expected_profiles
        assert "Common Author" in source["authors"] and len(source["authors"]) == 9


def test_two_threads_lose_nothing(make_writer: Callable[..., BulkWriter],
                                  opensearch_config: OpenSearchConfig,
                                  opensearch_client: OpenSearch, tmp_path: Path) -> None:
    make_writer()  # creates the aliases
    start, ready = threading.Event(), queue.Queue[str]()
    outcomes: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda n=name: outcomes.append(
        write_share(opensearch_config, n, tmp_path / "dl.jsonl", start, ready)))
        for name in "ab"]
    for thread in threads:
        thread.start()
    for _ in threads:
        ready.get(timeout=30)
    start.set()
    for thread in threads:
        thread.join(60)
    assert sorted(o["delivered"] for o in outcomes) == [2 * WORKS * PROFILES_PER_WRITER] * 2
    assert sum(o["dead"] for o in outcomes) == 0
    assert_every_contribution_present(opensearch_client, f"{opensearch_config.prefix}works")
    assert sum(o["conflicts"] for o in outcomes) > 0, "no conflict: the race was not exercised"
    print("thread conflicts:", [o["conflicts"] for o in outcomes])


def test_two_processes_lose_nothing(make_writer: Callable[..., BulkWriter],
                                    opensearch_config: OpenSearchConfig,
                                    opensearch_client: OpenSearch, tmp_path: Path) -> None:
    make_writer()
    ctx = multiprocessing.get_context("spawn")
    start, ready, results = ctx.Event(), ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=write_share, args=(opensearch_config, name,
                                                   tmp_path / "dl.jsonl", start, ready, results))
             for name in "ab"]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=60)  # both imported, connected and waiting: start them together
    start.set()
    outcomes = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    assert sorted(o["delivered"] for o in outcomes) == [2 * WORKS * PROFILES_PER_WRITER] * 2
    assert sum(o["dead"] for o in outcomes) == 0
    assert_every_contribution_present(opensearch_client, f"{opensearch_config.prefix}works")
    # Conflicts happen only when both write the same works at once: the two overlapped.
    assert sum(o["conflicts"] for o in outcomes) > 0, "no conflict: the race was not exercised"
    print("process conflicts:", [o["conflicts"] for o in outcomes])


def test_share_items_are_plain_dicts_too() -> None:
    """The child processes rebuild items from dataclasses; dict items merge the same."""
    item = share("a")[0]
    assert change_from_item(asdict(item), "2026-01-01T00:00:00Z") == \
        change_from_item(item, "2026-01-01T00:00:00Z")
