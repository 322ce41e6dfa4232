"""CPU time per stage of the crawl, for the benchmark's per-page figures.

A component keeps a ``CpuTally`` and measures its stage with it: the calling
thread's CPU time (``time.thread_time``: not the wall clock, not other threads)
added up in a float, one stats write at the end (``cpu/stage_seconds/<stage>``).
``crawler.extensions.cpu.CpuAccounting`` records the reactor thread's and the
whole process's CPU between spider open and close, so the stages can be set
against the crawl's total.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scholarindex.core import stat_keys


class CpuTally:
    """Seconds of CPU the measuring thread spent in one stage."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.seconds = 0.0

    @contextmanager
    def measure(self) -> Iterator[None]:
        start = time.thread_time()
        try:
            yield
        finally:
            self.seconds += time.thread_time() - start

    def add(self, seconds: float) -> None:
        """CPU measured elsewhere (another process's own accounting)."""
        self.seconds += seconds

    def publish(self, stats: Any) -> None:
        """Write the total into the crawl's stats."""
        stats.set_value(f"{stat_keys.CPU_STAGE_SECONDS}{self.stage}", round(self.seconds, 4))
