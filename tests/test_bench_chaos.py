"""``make chaos-distributed`` keeps working: one short run of its kill loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.redis import redis_available

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(not redis_available(), reason="redis-server not installed (make redis-deps)")
def test_one_run_of_the_kill_loop_measures_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "chaos.json"
    proc = subprocess.run([sys.executable, "-m", "bench.chaos", "kill-loop", "--runs", "1",
                           "--profiles", "60", "--kill-at", "1", "--max-ratio", "2",
                           "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["ended"] and run["exit_codes"] == [0, 0] and run["index_differences"] == 0
    assert run["fetches"] >= run["profiles"] == 60
    assert run["fetches_when_killed"] is not None
