"""``ParsePool``: ``parse_profile`` in worker processes, beside the reactor, not on it.

Why: parsing is pure Python CPU (an lxml tree walk, the layout parsers, names and
ids), and on the reactor thread every millisecond of it is a millisecond the
crawl does not fetch. In a worker process it runs on another core while the
reactor fetches the next pages; the page goes over a pipe (bytes) and its items
come back pickled, which costs a small fraction of the parse.

``PARSE_PROCESSES`` sets the workers (0: parse on the reactor thread, as a plain
call). Workers are spawned, not forked (the crawl runs threads), at the start
of the crawl; until one has started (a fresh interpreter importing the parsers
takes a fraction of a second) pages are parsed in the crawl's process, so the
first pages do not wait for it. If the pool
cannot start or a worker dies (a crawl run from a script without a ``__main__``
guard, which spawn needs, or a crash in a parser library), the page and the rest
of the run are parsed in the crawl's own process, with one error logged: slower,
never lost.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from datetime import date

from core.child_process import start_child
from crawler.extract import ProfilePage, parse_profile

logger = logging.getLogger(__name__)


class ParsePool:
    """``parse`` runs ``parse_profile`` in one of ``processes`` workers; see the module doc."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.cpu_seconds = 0.0  # the parses' own CPU, wherever they ran
        self.parsed_here = 0  # pages parsed in the crawl's process (no worker, or not yet)
        self._pool: ProcessPoolExecutor | None = None
        self._starting: list[Future[None]] = []
        if processes > 0:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(processes, mp_context=context,
                                             initializer=start_child, initargs=(os.getpid(),))
            # Spawn them now, while the crawl opens; done once a worker has imported the parsers.
            self._starting = [self._pool.submit(_started) for _ in range(processes)]

    async def parse(self, url: str, body: bytes | str, content_type: str | None,
                    today: date) -> ProfilePage:
        """The parsed page; never raises on bad input (see ``parse_profile``)."""
        if self._pool is not None and any(future.done() for future in self._starting):
            try:
                page, cpu = await asyncio.wrap_future(
                    self._pool.submit(_parse, url, body, content_type, today))
            except BrokenProcessPool:
                self._fall_back()
            else:
                self.cpu_seconds += cpu
                return page
        page, cpu = _parse(url, body, content_type, today)
        self.cpu_seconds += cpu
        self.parsed_here += 1
        return page

    def wait_started(self, timeout: float) -> bool:
        """Block until a worker has started (True), or ``timeout`` seconds (False)."""
        done, _ = wait(self._starting, timeout, return_when=FIRST_COMPLETED)
        return bool(done)

    def _fall_back(self) -> None:
        """Parse here from now on (once, whichever of the pages in flight failed first)."""
        if self._pool is None:
            return
        logger.error("the page parser processes could not start or died (a crawl started "
                     "from a script needs `if __name__ == \"__main__\":`); parsing in the "
                     "crawl's process for the rest of the run")
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    @property
    def in_process(self) -> bool:
        """True once pages are parsed in the crawl's own process (set so, or fallen back)."""
        return self._pool is None

    def close(self) -> None:
        """Stop the workers (after the pages in hand); a second call does nothing."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _started() -> None:
    """Nothing: submitted once a worker so the pool spawns them at once. It lives here, not
    in a shared module, so that unpickling it makes the worker import the parsers."""


def _parse(url: str, body: bytes | str, content_type: str | None,
           today: date) -> tuple[ProfilePage, float]:
    """The page, and the CPU seconds its parse took (the worker's, or the caller's thread)."""
    started = time.thread_time()
    page = parse_profile(url, body, content_type, today)
    return page, time.thread_time() - started
