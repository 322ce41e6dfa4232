"""``make chaos-distributed`` keeps working: one short run of its kill loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from bench.chaos import pauses_in_log
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.ops import cli_env
from tests.support.redis import redis_available

ROOT = Path(__file__).resolve().parent.parent


def test_pause_times_are_read_from_a_workers_log() -> None:
    log = "\n".join([
        "2026-11-26 05:00:00 [scrapy.core.engine] INFO: Spider opened",
        "2026-11-26 05:00:05 [pipelines.index] WARNING: OpenSearch at http://x unavailable "
        "(refused): crawl paused, holding 3 change(s); probing",
        "2026-11-26 05:00:36 [pipelines.index] WARNING: OpenSearch at http://x answers again: "
        "crawl resumed after 30.6s paused; sending 3 held change(s)",
        "2026-11-26 05:00:45 [scholarindex.distributed.connection] WARNING: Redis at redis://h/0 "
        "unavailable (ConnectionError: refused); retrying for up to 60 s",
        "2026-11-26 05:00:46 [scholarindex.distributed.connection] WARNING: Redis at redis://h/0 "
        "unavailable (ConnectionError: refused); retrying for up to 60 s",
        "2026-11-26 05:00:50 [scholarindex.distributed.connection] WARNING: Redis at redis://h/0 "
        "answers again",
        "2026-11-26 05:00:51 [scholarindex.distributed.connection] WARNING: Redis at redis://h/0 "
        "answers again",
    ])
    assert pauses_in_log(log) == {"index": 30.6, "redis": 6.0}
    assert pauses_in_log(log.splitlines()[0]) == {"index": None, "redis": None}
    # Killed while Redis was away: it never saw Redis again, so no pause is claimed.
    assert pauses_in_log("\n".join(log.splitlines()[:5]))["redis"] is None


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(not redis_available(), reason="redis-server not installed (make redis-deps)")
def test_one_run_of_the_kill_loop_measures_its_figures(
        tmp_path: Path, opensearch_config: OpenSearchConfig,
        opensearch_client: OpenSearch) -> None:
    """On the cluster the environment names (``--use-env``), which keeps none of the run's
    indices afterwards."""
    out = tmp_path / "chaos.json"
    env = {**os.environ, **{k: v for k, v in cli_env(opensearch_config).items() if v}}
    proc = subprocess.run([sys.executable, "-m", "bench.chaos", "kill-loop", "--runs", "1",
                           "--profiles", "60", "--kill-at", "1", "--max-ratio", "2",
                           "--use-env", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["ended"] and run["exit_codes"] == [0, 0] and run["index_differences"] == 0
    assert run["fetches"] >= run["profiles"] == 60
    assert run["fetches_when_killed"] is not None
    assert not opensearch_client.indices.get(index=f"{opensearch_config.prefix}*",
                                             allow_no_indices=True)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(not redis_available(), reason="redis-server not installed (make redis-deps)")
def test_a_short_soak_survives_a_kill_a_redis_restart_and_an_index_outage(
        tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    proc = subprocess.run([sys.executable, "-m", "bench.chaos", "soak", "--workers", "2",
                           "--profiles", "60", "--download-delay", "0.3",
                           "--outage-at", "0.5", "--outage-seconds", "3",
                           "--kill-every", "4", "--max-kills", "1",
                           "--redis-at", "6", "--redis-down", "1",
                           "--max-ratio", "2", "--timeout", "120", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    soak = json.loads(out.read_text())
    assert soak["ended"] and soak["exit_codes"] == [0, 0] and soak["index_differences"] == 0
    assert soak["fetches"] >= soak["profiles"] == 60
    assert len(soak["kills"]) == 1 and soak["killed_exit_codes"] == [-9]
    assert set(soak["events"]) == {"outage_start", "outage_end", "redis_stop", "redis_start"}
    assert soak["arxiv_requests"]["soak"] > 0  # enrichment was on
    # A worker that exited non-zero was started again: only one whose start-up check met
    # the outage may (exit 3), as a supervisor would see it.
    assert all((f["exit_code"], f["close_reason"]) == (3, "opensearch_unavailable")
               for f in soak["failed_exits"]), soak["failed_exits"]
    # Read from every worker's log: the two, the killed one, any restarted. (A 3 s outage
    # is mostly absorbed by the index writer's own retries: a pause is not guaranteed.)
    logs = 2 + len(soak["kills"]) + len(soak["failed_exits"])
    assert len(soak["index_pause_seconds"]) == len(soak["redis_pause_seconds"]) == logs
