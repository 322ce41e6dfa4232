"""``make demo`` end to end: it crawls, serves the UI, and leaves nothing running when stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from engine.cluster import free_port

ROOT = Path(__file__).resolve().parent.parent


def _alive(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


def test_the_demo_serves_the_ui_and_a_sigterm_stops_its_node_and_removes_its_data(
        tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "DEMO_PORT": str(port), "DEMO_OUTPUT": str(tmp_path / "out"),
           # nothing answers there: the demo starts a node of its own
           "OPENSEARCH_URL": f"http://127.0.0.1:{free_port()}"}
    log = tmp_path / "demo.log"
    with log.open("w") as out:
        demo = subprocess.Popen([sys.executable, "-m", "demo"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while "Search UI:" not in log.read_text() and demo.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        text = log.read_text()
        assert demo.poll() is None, text[-3000:]
        data = re.search(r"data in (\S+),", text)
        assert data is not None and Path(data.group(1)).is_dir(), text[-3000:]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:
            assert page.status == 200
        assert "ReLibra" in text  # the paper on two profiles, one work

        demo.send_signal(signal.SIGTERM)
        assert demo.wait(timeout=60) != 0

        assert not Path(data.group(1)).exists()  # the node's data removed
        deadline = time.monotonic() + 30
        while _alive(data.group(1)):  # the node's JVM names its folder
            assert time.monotonic() < deadline, "the demo's node outlived it"
            time.sleep(0.5)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
