"""``make bench-distributed`` keeps working: its quick run crawls with 1 and 2 workers."""

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
def test_quick_distributed_bench_measures_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "bench-distributed.json"
    proc = subprocess.run([sys.executable, "-m", "bench.distributed", "--quick", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    runs = json.loads(out.read_text())["runs"]
    assert [r["workers"] for r in runs] == [1, 2]
    for run in runs:
        assert sum(run["parsed_per_worker"]) == run["pages"] == 40
        assert run["pages_per_second"] > 0 and run["cpu_ms_per_page"] > 0
        assert 0 < run["redis_round_trips_per_page"] < run["redis_commands_per_page"]
