"""A benchmark's server run as ``python -m <module>`` in a child process of its own.

The child prints one JSON line ``{"url": ...}`` once it listens and stops when its stdin
closes, so it never outlives the benchmark; its own interpreter and GIL keep serving
from competing with the runner.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Self

ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 10  # after stdin closes, then the child is killed


class ChildServer:
    """``python -m module *args``; ``url`` once it listens, ``close`` returns what it
    printed after that line."""

    def __init__(self, module: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{module} exited before it listened")
        self.url: str = json.loads(line)["url"]

    @property
    def pid(self) -> int:
        return self.process.pid

    def close(self) -> str:
        if self.process.poll() is not None:
            return ""
        try:
            out, _ = self.process.communicate(timeout=STOP_SECONDS)  # closes its stdin
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        return out or ""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
