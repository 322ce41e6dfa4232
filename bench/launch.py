"""Run a command and report its own peak RSS and CPU time.

    [BENCH_LAUNCH_TIMEOUT=SECONDS] python -m bench.launch OUT -- CMD...

Writes ``{"returncode", "maxrss_kb", "cpu_seconds"}`` as JSON to OUT; kills CMD
after the timeout, or when the launcher gets SIGTERM.

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
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        if timer:
            timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    Path(out).write_text(json.dumps({
        "returncode": proc.returncode, "maxrss_kb": usage.ru_maxrss,
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3)}), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
