"""What a worker process of the crawl does first: ignore stop signals, die with the crawl.

The crawl spawns helper processes (the page parser, the index writer). They must
not be killed half-way through a job by the Ctrl-C or SIGTERM sent to the whole
process group: the crawl stops them itself once their last job is done. Nor must
they outlive a crawl that was killed: a spawned child holds both ends of its own
task pipe, so it never sees the pipe close, and would wait for work for ever.
"""

from __future__ import annotations

import os
import signal
import threading
import time


def start_child(parent_pid: int) -> None:
    """In the child, first thing: ignore SIGINT/SIGTERM, exit once ``parent_pid`` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent_pid,), name="exit-with-parent",
                     daemon=True).start()


def _exit_with(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os._exit(0)
