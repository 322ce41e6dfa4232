"""Run a command and report its own peak memory and CPU time.

    [BENCH_LAUNCH_TIMEOUT=SECONDS] python -m bench.launch OUT -- CMD...

Writes ``{"returncode", "maxrss_kb", "tree_peak_kb", "cpu_seconds"}`` as JSON to
OUT; kills CMD after the timeout, or when the launcher gets SIGTERM.
``maxrss_kb`` is the largest single process's peak (``ru_maxrss``);
``tree_peak_kb`` the peak of the command and its descendants together (the
crawl and its index-writer child), sampled every 0.1 s as proportional set
size, so libraries both map are counted once. ``cpu_seconds`` covers them all.

Why a launcher: on Linux a child's ``ru_maxrss`` starts at its parent's high-water
mark (exec records the address space it replaces, and a fork or vfork child's is
the parent's), so measuring a crawl directly from the benchmark, which holds the
generated site and the stand-in's entries, would report the benchmark's peak (a
``python -c pass`` started from a 400 MB parent reports 413 MB). Started from this
small process, the crawl's figure is its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

SAMPLE_SECONDS = 0.1


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo += [int(child) for child in children]
    return found


def _memory_kb(pid: int) -> int:
    """Proportional set size (RSS where the kernel has no smaps_rollup)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        try:
            text = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return 0
    for line in text.splitlines():
        if line.startswith(("Pss:", "VmRSS:")):
            return int(line.split()[1])
    return 0


def _watch_tree(pid: int, peak: list[int], done: threading.Event) -> None:
    while not done.wait(SAMPLE_SECONDS):
        peak[0] = max(peak[0], sum(_memory_kb(p) for p in _descendants(pid)))


def main(argv: list[str]) -> int:
    out, separator, *command = argv
    if separator != "--" or not command:
        print("usage: python -m bench.launch OUT -- CMD...", file=sys.stderr)
        return 2
    timeout = float(os.environ.get("BENCH_LAUNCH_TIMEOUT", "0") or 0)
    proc = subprocess.Popen(command)
    timer = threading.Timer(timeout, proc.kill) if timeout else None
    if timer:
        timer.start()
    # Forward a termination to the child, so killing the launcher never orphans a crawl.
    signal.signal(signal.SIGTERM, lambda *_: proc.kill())
    peak, done = [0], threading.Event()
    watcher = threading.Thread(target=_watch_tree, args=(proc.pid, peak, done), daemon=True)
    watcher.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        done.set()
        if timer:
            timer.cancel()
    watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    Path(out).write_text(json.dumps({
        "returncode": proc.returncode, "maxrss_kb": usage.ru_maxrss, "tree_peak_kb": peak[0],
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3)}), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
