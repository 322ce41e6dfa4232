"""The machine-wide arXiv request slot: one at a time, ``delay`` apart, across processes."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import threading
import time
from pathlib import Path

import pytest

from scholarindex.enrichment.errors import Cancelled
from scholarindex.enrichment.ratelimit import SharedRateLimiter, effective_delay

DELAY = 0.2


@pytest.mark.parametrize(
    ("url", "asked", "kept"),
    [
        ("https://export.arxiv.org/api/query?{}", 0.5, 3.0),
        ("http://arxiv.org/api/query?{}", 1, 3.0),
        ("https://export.arxiv.org/api/query?{}", 5, 5.0),
        ("http://127.0.0.1:8123/api/query?{}", 0.2, 0.2),
        ("http://localhost/api/query?{}", 0, 0.0),
        ("https://notarxiv.org/api/query?{}", 0.2, 0.2),
    ],
)
def test_delay_is_never_below_three_seconds_against_arxiv(url: str, asked: float,
                                                          kept: float) -> None:
    assert effective_delay(url, asked) == kept


def _take_slots(directory: str, count: int, out: str) -> None:
    limiter = SharedRateLimiter(directory, DELAY)
    spans = []
    for _ in range(count):
        with limiter.slot():
            start = time.time()
            time.sleep(0.02)  # the "request"
            spans.append((start, time.time()))
    Path(out).write_text(json.dumps(spans))


def test_two_processes_share_one_slot_and_the_delay(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    outs = [tmp_path / f"spans-{i}.json" for i in range(2)]
    procs = [ctx.Process(target=_take_slots, args=(str(tmp_path), 4, str(out))) for out in outs]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    spans = sorted(span for out in outs for span in json.loads(out.read_text()))
    assert len(spans) == 8
    for (_, end), (next_start, _) in itertools.pairwise(spans):
        # one in flight at a time, and the pause counts from the end of the last request
        assert next_start - end >= DELAY - 0.01


def test_threads_of_one_process_share_it_too(tmp_path: Path) -> None:
    limiter_a = SharedRateLimiter(tmp_path, DELAY)
    limiter_b = SharedRateLimiter(tmp_path, DELAY)
    starts: list[float] = []

    def take(limiter: SharedRateLimiter) -> None:
        for _ in range(2):
            with limiter.slot():
                starts.append(time.time())

    threads = [threading.Thread(target=take, args=(lim,)) for lim in (limiter_a, limiter_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    starts.sort()
    assert all(b - a >= DELAY - 0.01 for a, b in itertools.pairwise(starts))


class StopDuringWait(threading.Event):
    """A stop event that is set while the limiter waits on it (shutdown mid-wait)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        self.set()
        return super().wait(timeout)


def test_stop_cuts_a_wait_short(tmp_path: Path) -> None:
    stop = StopDuringWait()
    limiter = SharedRateLimiter(tmp_path, 30.0, stop=stop, clock=lambda: 1000.0)
    with limiter.slot():  # the first request: nothing to wait for
        pass
    assert stop.waits == []
    entered = False
    with pytest.raises(Cancelled), limiter.slot():
        entered = True
    # The second waited on the stop event for the whole delay, and the stop cut it.
    assert stop.waits == [30.0] and not entered
