"""A real three-node cluster under faults: how the client reads each fault, and one short
run of ``make chaos-cluster`` (a data node SIGKILLed mid-crawl)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opensearchpy import exceptions as os_exc

from scholarindex.indexing.client import (
    FLOOD_STAGE_HINT,
    build_client,
    classify_item,
    is_flood_stage_block,
    read_error,
    translate_errors,
)
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.outage import Outage
from tests.support.redis import redis_available
from tests.support.settings import opensearch_config_with

ROOT = Path(__file__).resolve().parent.parent
# What OpenSearch 2.19 answers a write with at the flood stage (taken from a real node).
FLOOD = {"type": "cluster_block_exception",
         "reason": "index [a] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded "
                   "flood-stage watermark, index has read-only-allow-delete block];"}


def test_a_flood_stage_block_is_retried_and_named() -> None:
    result = classify_item({"status": 429, "error": FLOOD})
    assert result.outcome == "retry"
    assert "flood_stage" in result.reason and FLOOD_STAGE_HINT in result.reason
    assert is_flood_stage_block(result.reason)
    assert Outage(0.0, 60.0, result.reason, write_blocked=True).write_blocked


def test_rejections_and_shard_failures_are_retried() -> None:
    for status, kind in ((429, "rejected_execution_exception"),
                         (503, "unavailable_shards_exception"),
                         (503, "no_shard_available_action_exception")):
        result = classify_item({"status": status, "error": {"type": kind, "reason": "x"}})
        assert result.outcome == "retry", kind
        assert not is_flood_stage_block(result.reason)


@pytest.mark.parametrize(("kind", "retryable"), [
    ("node_not_connected_exception", True),  # the node holding the shard was just killed
    ("no_shard_available_action_exception", True),
    ("index_not_found_exception", False),
])
def test_a_document_error_in_an_mget_is_retryable_unless_no_retry_fixes_it(
        kind: str, retryable: bool) -> None:
    error = read_error("mget works", {"root_cause": [], "type": kind, "reason": "r"})
    assert error.retryable is retryable and kind in str(error)


@pytest.mark.parametrize(("kind", "retryable"), [
    ("index_create_block_exception", True),  # the cluster's create-index block, flood stage
    ("cluster_block_exception", True),  # an index block on an older release (403)
    ("security_exception", False),  # a refusal of our rights: waiting does not help
])
def test_a_403_is_retryable_only_when_it_is_a_block(kind: str, retryable: bool) -> None:
    error = os_exc.AuthorizationException(403, kind, {"error": {"type": kind, "reason": "r"}})
    with pytest.raises(IndexUnavailable) as raised, translate_errors("create index"):
        raise error
    assert raised.value.retryable is retryable


def test_with_several_nodes_a_timeout_goes_to_the_next_node() -> None:
    one = build_client(opensearch_config_with(OPENSEARCH_URL="http://127.0.0.1:9"))
    three = build_client(opensearch_config_with(
        OPENSEARCH_URL="http://127.0.0.1:9,http://127.0.0.1:10,http://127.0.0.1:11"))
    assert not one.transport.retry_on_timeout and one.transport.max_retries == 0
    assert three.transport.retry_on_timeout and three.transport.max_retries == 2


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.timeout(420)  # its run gets 400 s: 3 JVMs, two crawls (268 s at load 30-40)
@pytest.mark.skipif(not redis_available(), reason="redis-server not installed (make redis-deps)")
def test_a_data_node_killed_mid_crawl_loses_nothing(tmp_path: Path) -> None:
    """One run of ``make chaos-cluster``'s first fault on a small site: the crawl ends by
    itself, exit 0, the index equals a crawl that met no fault, the node rejoins."""
    out = tmp_path / "chaos-cluster.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.chaos_cluster", "--faults", "data-node", "--runs", "1",
         "--profiles", "30", "--span", "10", "--down", "1", "4", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    [run] = json.loads(out.read_text())["runs"]
    assert run["ok"] and run["exit_codes"] == [0] and run["missing"] == 0
    assert run["different"] == 0 and run["dead_letters"] == 0
    assert run["green_after"] is not None and not run["notes"]["crawl_ended_first"]
