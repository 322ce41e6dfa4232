"""Reindex safety against the real local server: one reindex per alias at a time (exit 75,
across machines), and a rollback that keeps the writes made after the switch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from scholarindex.core.exit_codes import EXIT_ALREADY_RUNNING
from scholarindex.core.items import WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import LOCK_INDEX, MAPPINGS_DIR, alias_name, ensure_plain_index
from scholarindex.ops import console
from scholarindex.ops.lock import AliasBusy, AliasLock, LockLost
from scholarindex.ops.reindex import ReindexFailed, ReindexOptions, reindex
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot
from tests.support.ops import (
    indices_of,
    json_out,
    last_line,
    run_cli,
    run_process,
    target,
    write_blocked,
)
from tests.support.settings import opensearch_config_with

SEEN = "2026-11-23T00:00:00Z"


def lock_doc(client: OpenSearch, prefix: str, name: str) -> dict[str, Any] | None:
    """The lock document, or None while there is none (a lock index created a moment ago
    answers 503 until its shard has started: no lock readable yet either)."""
    found = client.get(index=alias_name(prefix, LOCK_INDEX), id=alias_name(prefix, name),
                       ignore=(404, 503))
    return found.get("_source") if found.get("found") else None


def plant_lock(client: OpenSearch, prefix: str, name: str, beat_age: timedelta) -> None:
    """A lock as another machine's reindex leaves it, its last heartbeat ``beat_age`` ago."""
    ensure_plain_index(client, prefix, LOCK_INDEX)
    now = datetime.now(UTC)
    client.index(index=alias_name(prefix, LOCK_INDEX), id=alias_name(prefix, name), refresh=True,
                 body={"alias": alias_name(prefix, name), "operation": "reindex",
                       "host": "db-elsewhere", "pid": 31337,
                       "started_at": (now - beat_age - timedelta(hours=1)).isoformat(),
                       "heartbeat_at": (now - beat_age).isoformat()})


# --- one at a time -------------------------------------------------------------------------

@pytest.mark.process
def test_a_second_reindex_while_one_runs_exits_75_naming_it(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, fault_proxy: FaultProxy,
        env: dict[str, str], tmp_path: Path) -> None:
    client, prefix = opensearch_client, indexed.prefix
    old = target(client, prefix, "works")
    for _ in range(10):  # the first one's copy slices are slow: it is still running
        fault_proxy.delay_next(1, 0.5, match="/_reindex")
    slow_env = dict(env, OPENSEARCH_URL=fault_proxy.url)
    first: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: first.update(done=run_process(
        ["reindex", "--yes", "--index", "works", "--batch-size", "5", "--json"], slow_env,
        cwd=tmp_path)))
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while lock_doc(client, prefix, "works") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        holder = lock_doc(client, prefix, "works")
        assert holder is not None, "the first reindex never took the lock"
        second = run_cli(["reindex", "--yes", "--index", "works"], env)
        back = run_cli(["rollback", "--yes", "--index", "works"], env)
    finally:
        runner.join(240)
    assert second.exit_code == EXIT_ALREADY_RUNNING, second.output
    line = last_line(second.stderr)
    assert f"pid {holder['pid']}" in line and f"host {holder['host']}" in line
    assert f"since {holder['started_at']}" in line
    assert back.exit_code == EXIT_ALREADY_RUNNING, back.output
    done = first["done"]
    assert done.returncode == 0, done.stderr
    assert target(client, prefix, "works") == json_out(done)["results"][0]["new_index"] != old
    assert lock_doc(client, prefix, "works") is None  # released at the end


def test_a_lock_held_elsewhere_refuses_until_it_turns_stale(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, env: dict[str, str]) -> None:
    client, prefix = opensearch_client, indexed.prefix
    old = target(client, prefix, "researchers")
    plant_lock(client, prefix, "researchers", beat_age=timedelta(seconds=5))
    for args in (["reindex", "--yes"], ["rollback", "--yes", "--index", "researchers"]):
        refused = run_cli(args, env)
        assert refused.exit_code == EXIT_ALREADY_RUNNING, refused.output
        assert "host db-elsewhere, pid 31337" in last_line(refused.stderr)
    # --index all takes every lock or none: works was not left locked.
    assert lock_doc(client, prefix, "works") is None
    assert target(client, prefix, "researchers") == old

    plant_lock(client, prefix, "researchers", beat_age=timedelta(seconds=400))  # > 300 s
    taken = run_cli(["reindex", "--yes", "--index", "researchers"], env)
    assert taken.exit_code == 0, taken.output
    assert "took over the stale lock" in taken.stderr and "db-elsewhere" in taken.stderr
    assert target(client, prefix, "researchers") != old
    assert lock_doc(client, prefix, "researchers") is None

    # A shorter timeout is a setting (and so is the environment's).
    plant_lock(client, prefix, "researchers", beat_age=timedelta(seconds=5))
    short = run_cli(["reindex", "--yes", "--index", "researchers"],
                    dict(env, REINDEX_LOCK_STALE_SECONDS="2"))
    assert short.exit_code == 0, short.output


def test_a_held_lock_beats_so_it_never_turns_stale(opensearch_client: OpenSearch,
                                                   index_prefix: str) -> None:
    client = opensearch_client
    # The timeout leaves room for a loaded machine (CI runs many workers): a beat that
    # waits on a busy engine for longer than the timeout would turn the lock stale.
    timeout = 2.0
    with AliasLock(client, index_prefix, ["works"], "reindex", stale_after=timeout) as held:
        first = lock_doc(client, index_prefix, "works")
        assert first is not None and first["operation"] == "reindex"
        beats: set[str] = set()
        deadline = time.monotonic() + 30
        while len(beats) < 3 and time.monotonic() < deadline:
            current = lock_doc(client, index_prefix, "works")
            assert current is not None
            beats.add(current["heartbeat_at"])
            time.sleep(0.05)
        assert len(beats) >= 3  # rewritten every quarter of the timeout
        time.sleep(timeout * 1.25)  # longer than the timeout: still beating, so still held
        with pytest.raises(AliasBusy, match=f"pid {first['pid']}"):
            AliasLock(client, index_prefix, ["works"], "rollback", stale_after=timeout).acquire()
        assert held.taken_over == []
    assert lock_doc(client, index_prefix, "works") is None


def test_a_reindex_whose_lock_was_broken_does_not_switch(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch) -> None:
    client, prefix = opensearch_client, indexed.prefix
    old = target(client, prefix, "works")
    lock = AliasLock(client, prefix, ["works"], "reindex", stale_after=300)
    lock.acquire()
    try:
        lock.check("works")  # held
        # Taken over meanwhile (this run paused past the timeout, say).
        client.delete(index=alias_name(prefix, LOCK_INDEX), id=alias_name(prefix, "works"),
                      refresh=True)
        with pytest.raises(ReindexFailed) as failed:
            reindex(client, prefix, "works", ReindexOptions(mappings_dir=MAPPINGS_DIR),
                    before_switch=lambda: lock.check("works"))
    finally:
        lock.release()
    assert isinstance(failed.value.cause, LockLost)
    assert target(client, prefix, "works") == old
    assert indices_of(client, prefix, "works") == [old]  # the half-built one removed
    assert not write_blocked(client, old)


def _lock_client(proxy: FaultProxy, prefix: str) -> OpenSearch:
    """A client that knows the node twice, both through ``proxy``: a request whose
    connection the proxy cuts goes once more to "the next node", as with a cluster."""
    return build_client(opensearch_config_with(OPENSEARCH_URL=f"{proxy.url},{proxy.url}",
                                               INDEX_PREFIX=prefix))


def test_a_lock_create_whose_answer_was_lost_is_held(
        fault_proxy: FaultProxy, index_prefix: str, opensearch_client: OpenSearch) -> None:
    """The node took the create and died before answering; sent again, it is refused as
    already there. The document is this run's own: held, not 'busy with another run'."""
    client = _lock_client(fault_proxy, index_prefix)
    ensure_plain_index(client, index_prefix, LOCK_INDEX)
    fault_proxy.drop_next(1, forward=True, match="/_create/")
    with AliasLock(client, index_prefix, ["works"], "reindex", stale_after=300) as lock:
        assert fault_proxy.pending_faults() == 0
        lock.check("works")
    assert lock_doc(opensearch_client, index_prefix, "works") is None


def test_a_heartbeat_whose_answer_was_lost_keeps_the_lock(
        fault_proxy: FaultProxy, index_prefix: str, opensearch_client: OpenSearch) -> None:
    """A beat applied, its answer lost and the beat sent again (409: the version moved,
    by this holder's own hand): still held, and beating on the new version."""
    client = _lock_client(fault_proxy, index_prefix)
    with AliasLock(client, index_prefix, ["works"], "reindex", stale_after=0.4) as lock:
        fault_proxy.drop_next(1, forward=True,
                              match=f"PUT /{alias_name(index_prefix, LOCK_INDEX)}/_doc/")
        deadline = time.monotonic() + 30
        while fault_proxy.pending_faults() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fault_proxy.pending_faults() == 0
        before = lock_doc(opensearch_client, index_prefix, "works")
        time.sleep(1.0)  # several beats after it
        lock.check("works")
        after = lock_doc(opensearch_client, index_prefix, "works")
        assert before is not None and after is not None
        assert after["heartbeat_at"] > before["heartbeat_at"]
    assert lock_doc(opensearch_client, index_prefix, "works") is None


def test_a_release_refused_while_a_manager_is_elected_is_tried_again(
        fault_proxy: FaultProxy, index_prefix: str, opensearch_client: OpenSearch) -> None:
    """A lock left behind turns the next run away for REINDEX_LOCK_STALE_SECONDS."""
    client = _lock_client(fault_proxy, index_prefix)
    with AliasLock(client, index_prefix, ["works"], "reindex", stale_after=300):
        fault_proxy.fail_next(3, status=503, match="DELETE ")
    assert fault_proxy.pending_faults() == 0
    assert lock_doc(opensearch_client, index_prefix, "works") is None
    with AliasLock(client, index_prefix, ["works"], "reindex", stale_after=300):
        pass  # the next run takes it at once


# --- rollback keeps what was written after the switch --------------------------------------

@pytest.mark.parametrize("shards", [1, 3])
def test_rollback_carries_writes_made_after_the_switch(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, env: dict[str, str],
        make_writer: Callable[..., BulkWriter], shards: int) -> None:
    client, prefix = opensearch_client, indexed.prefix
    works = alias_name(prefix, "works")
    old = target(client, prefix, "works")
    env = dict(env, INDEX_SHARDS=str(shards))
    assert run_cli(["reindex", "--yes", "--index", "works"], env).exit_code == 0
    new = target(client, prefix, "works")
    assert client.indices.get_settings(index=new)[new]["settings"]["index"][
        "number_of_shards"] == str(shards)
    before = snapshot(client, works)
    existing, doomed = sorted(before)[:2]
    # A crawl after the switch: a new work, a new listing of an existing one; a work deleted.
    report = make_writer().write([change_from_item(item, SEEN) for item in (
        WorkItem(work_id="after-switch", title="Written after the switch",
                 researcher_id="r-late", researcher_name="Late Writer", year=2026),
        WorkItem(work_id=existing, title=before[existing]["title"], researcher_id="r-late",
                 researcher_name="Late Writer", year=2026))])
    assert report.delivered == 2 and report.dead_lettered == 0
    client.delete(index=new, id=doomed, refresh=True)
    live = snapshot(client, works)

    back = run_cli(["rollback", "--yes", "--index", "works", "--json"], env)
    assert back.exit_code == 0, back.output
    [move] = json_out(back)["moves"]
    assert sorted(move["carried"]) == sorted(["after-switch", existing, doomed])
    assert target(client, prefix, "works") == old
    assert snapshot(client, works) == live  # nothing written after the switch was lost
    assert "r-late" in {e["researcher_id"] for e in live[existing]["listings"]}
    assert doomed not in live

    # And forward again (--to the newer one): what the old one took meanwhile comes along.
    client.delete(index=old, id=existing, refresh=True)
    forth = run_cli(["rollback", "--yes", "--index", "works", "--to", new, "--json"], env)
    assert forth.exit_code == 0, forth.output
    assert json_out(forth)["moves"][0]["carried"] == [existing]
    assert existing not in snapshot(client, works) and target(client, prefix, "works") == new


def test_rollback_refuses_writes_it_cannot_tell_unless_discarded(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, env: dict[str, str]) -> None:
    client, prefix = opensearch_client, indexed.prefix
    first = target(client, prefix, "researchers")
    for _ in range(2):
        assert run_cli(["reindex", "--yes", "--index", "researchers", "--keep", "2"],
                       env).exit_code == 0
    live = target(client, prefix, "researchers")
    # Two versions back: the live one did not replace it, deletions since cannot be told.
    refused = run_cli(["rollback", "--yes", "--index", "researchers", "--to", first], env)
    assert refused.exit_code == console.EXIT_USAGE, refused.output
    assert "--discard-newer" in last_line(refused.stderr) and first in last_line(refused.stderr)
    assert target(client, prefix, "researchers") == live
    discarded = run_cli(["rollback", "--yes", "--index", "researchers", "--to", first,
                         "--discard-newer"], env)
    assert discarded.exit_code == 0, discarded.output
    assert target(client, prefix, "researchers") == first
