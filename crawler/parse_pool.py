"""``ParsePool``: ``parse_profile`` in worker processes, beside the reactor, not on it.

Why: parsing is pure Python CPU (an lxml tree walk, the layout parsers, names and
ids), and on the reactor thread every millisecond of it is a millisecond the
crawl does not fetch. In a worker process it runs on another core while the
reactor fetches the next pages; the page goes over a pipe (bytes) and its items
come back pickled, which costs a small fraction of the parse.

Each worker has a pipe of its own. The event loop writes a page to a worker that
has none (one page at a time a worker, the rest wait here); one thread reads the
workers' answers, unpickles them off the reactor thread and hands them to the loop.
A ``ProcessPoolExecutor`` woke two threads of the crawl for each page (its manager
thread on every submit and every result, its queue's feeder thread) and cost more of
the crawl's CPU than this one reader. The loop reading the pipes itself, with no
thread, cost the least CPU in all, but put that work on the reactor thread, the
crawl's bottleneck. (The figures: docs/performance.md.)

``PARSE_PROCESSES`` sets the workers (0: parse on the reactor thread, as a plain
call). Workers are spawned, not forked (the crawl runs threads), once the crawl has
parsed ``PARSE_PROCESSES_AFTER`` pages itself: a worker is a fresh interpreter
importing the parsers, which a crawl of a few pages never earns back. Until one has
started (a fraction of a second) pages are parsed in the crawl's process, so the
first pages do not wait for it. If a worker cannot start or dies (a crawl run
from a script without a ``__main__`` guard, which spawn needs, or a crash in a
parser library), the pages it held and the rest of the run are parsed in the
crawl's own process, with one error logged: slower, never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import copyreg
import io
import logging
import multiprocessing
import os
import pickle
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import fields
from datetime import date
from multiprocessing.connection import Connection, wait
from typing import Any

from crawler.extract import ProfilePage, parse_profile
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.runtime.child_process import start_child

logger = logging.getLogger(__name__)

_READY = "ready"  # a worker's first message: it has imported the parsers
_Job = tuple[str, bytes | str, str | None, date]  # parse_profile's arguments


class _WorkerGone(Exception):
    """The worker holding a page died (or could not start) before answering."""


class _Failed:
    """What a worker sends back when parsing raised: the exception, raised here."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Worker:
    """One worker process, its end of the pipe, and the page it is parsing."""

    def __init__(self, context: Any) -> None:
        self.conn, child_end = context.Pipe()
        self.process = context.Process(target=_work, args=(child_end, os.getpid()),
                                       name="page-parser", daemon=True)
        self.process.start()
        child_end.close()  # only the worker holds it now: its death reads as EOF here
        self.ready = False
        self.page: asyncio.Future[tuple[ProfilePage, float]] | None = None


class ParsePool:
    """``parse`` runs ``parse_profile`` in one of ``processes`` workers; see the module doc."""

    def __init__(self, processes: int, start_after: int = 0) -> None:
        self.processes = processes
        self.start_after = start_after  # pages parsed here before the workers are spawned
        self.cpu_seconds = 0.0  # the parses' own CPU, wherever they ran
        self.parsed_here = 0  # pages parsed in the crawl's process (no worker, or not yet)
        self._workers: list[_Worker] = []
        self._waiting: deque[tuple[_Job, asyncio.Future[tuple[ProfilePage, float]]]] = deque()
        self._fell_back = False
        self._broken = False  # a worker died: parse here from the next page on
        self._closing = False
        self._started = threading.Event()  # a worker has started, or none will
        self._reader: threading.Thread | None = None
        self._spawned = False
        if start_after <= 0:
            self._spawn()

    def _spawn(self) -> None:
        """Start the workers; each says when it has imported the parsers."""
        self._spawned = True
        context = multiprocessing.get_context("spawn")
        for _ in range(self.processes):
            try:
                self._workers.append(_Worker(context))
            except Exception:  # whatever stops a start: parse here instead
                self._fall_back()
                break
        if self._workers:
            self._reader = threading.Thread(target=self._read, args=(list(self._workers),),
                                            name="page-parser-answers", daemon=True)
            self._reader.start()
        else:
            self._started.set()

    async def parse(self, url: str, body: bytes | str, content_type: str | None,
                    today: date) -> ProfilePage:
        """The parsed page; never raises on bad input (see ``parse_profile``)."""
        if self._broken:
            self._fall_back()
        if any(worker.ready for worker in self._workers):
            answer = asyncio.get_running_loop().create_future()
            self._waiting.append(((url, body, content_type, today), answer))
            self._dispatch()
            try:
                page, cpu = await answer
            except _WorkerGone:
                pass  # parsed here, below
            else:
                self.cpu_seconds += cpu
                return page
        page, cpu = _parse(url, body, content_type, today)
        self.cpu_seconds += cpu
        self.parsed_here += 1
        if not self._spawned and self.parsed_here >= self.start_after and not self._closing:
            self._spawn()
        return page

    def wait_started(self, timeout: float) -> bool:
        """Block until a worker has started (True), or ``timeout`` seconds (False)."""
        self._started.wait(timeout)
        return any(worker.ready for worker in self._workers)

    @property
    def in_process(self) -> bool:
        """True once pages are parsed in the crawl's own process (set so, or fallen back)."""
        return not self._workers

    @property
    def worker_pids(self) -> list[int]:
        return [worker.process.pid for worker in self._workers]

    def close(self, *, kill: bool = False) -> None:
        """Stop the workers (after the pages in hand, unless ``kill``); a second call does
        nothing. A page still waiting for a worker is parsed here."""
        workers, self._workers = self._workers, []
        self._closing = True
        unanswered = [worker.page for worker in workers if worker.page is not None]
        unanswered += [answer for _, answer in self._waiting]
        self._waiting.clear()
        for answer in unanswered:
            if not answer.done() and not answer.get_loop().is_closed():
                answer.set_exception(_WorkerGone())
        for worker in workers:
            try:
                if kill:
                    worker.process.kill()
                else:
                    worker.conn.send(None)  # after its page, if it has one: read in order
            except OSError:
                pass  # gone already
        for worker in workers:
            worker.process.join(10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        if self._reader is not None:
            self._reader.join(10)  # every pipe read to its end: the workers are gone
        for worker in workers:
            worker.conn.close()

    # --- the pipes ------------------------------------------------------------------------

    def _read(self, workers: list[_Worker]) -> None:
        """In a thread: read the workers' answers; each page goes to the loop that awaits it."""
        reading = {worker.conn: worker for worker in workers}
        while reading:
            for conn in wait(list(reading)):
                worker = reading[conn]
                try:
                    message = worker.conn.recv()  # unpickled here, not on the reactor thread
                except (EOFError, OSError):
                    del reading[conn]
                    self._gone(worker)
                    continue
                if message == _READY:
                    worker.ready = True
                    self._started.set()
                elif worker.page is not None:  # set before the page was sent
                    answer = worker.page
                    # A closed loop (RuntimeError): nobody awaits the page any more.
                    with contextlib.suppress(RuntimeError):
                        answer.get_loop().call_soon_threadsafe(self._answered, worker,
                                                               answer, message)
        self._started.set()  # no worker left to start: wait_started need not wait

    def _gone(self, worker: _Worker) -> None:
        """In the reader thread: a worker's pipe ended. Unless we stopped it, it died."""
        if self._closing:
            return
        self._broken = True
        if worker.page is not None:  # its page is parsed here, by the loop that awaits it
            with contextlib.suppress(RuntimeError):  # a closed loop awaits nothing
                worker.page.get_loop().call_soon_threadsafe(self._fall_back)

    def _dispatch(self) -> None:
        """Send waiting pages to the started workers that have none."""
        for worker in self._workers:
            if not self._waiting:
                return
            if worker.ready and worker.page is None:
                job, answer = self._waiting.popleft()
                worker.page = answer
                try:
                    worker.conn.send(job)  # the worker waits for it: the pipe drains at once
                except OSError:
                    self._fall_back()
                    return

    def _answered(self, worker: _Worker, answer: asyncio.Future[tuple[ProfilePage, float]],
                  message: Any) -> None:
        """On the loop: a worker's answer to ``answer``; it is free for the next page."""
        if worker.page is answer:
            worker.page = None
        if not answer.done():
            if isinstance(message, _Failed):
                answer.set_exception(message.error)
            else:
                answer.set_result(message)
        self._dispatch()

    def _fall_back(self) -> None:
        """Parse here from now on: the pages the workers held or waited for too."""
        if self._fell_back:
            return
        self._fell_back = True
        logger.error("the page parser processes could not start or died (a crawl started "
                     "from a script needs `if __name__ == \"__main__\":`); parsing in the "
                     "crawl's process for the rest of the run")
        self._broken = False
        self.close(kill=True)  # what the live ones hold is parsed here, with the rest


def _work(conn: Connection, crawl_pid: int) -> None:
    """A worker: parse each page sent until told to stop (None) or the crawl is gone."""
    start_child(crawl_pid)
    conn.send(_READY)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            answer: Any = _parse(*job)
        except Exception as exc:  # a parser bug: raised in the crawl
            answer = _Failed(exc)
        conn.send_bytes(_dumps(answer))  # read by the crawl's ``recv`` as any pickle


def _by_fields(cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
    """Pickle an item as its class and its fields' values in order: unpickled, the class
    is called with them, which the crawl's reader thread does much faster than setting
    each item's attribute dict (docs/performance.md)."""
    names = tuple(field.name for field in fields(cls))

    def reduce(item: Any) -> tuple[type, tuple[Any, ...]]:
        values = vars(item)
        return cls, tuple([values[name] for name in names])

    return reduce


# Exact classes only: a subclass (extra fields) is pickled the default way.
_ITEM_REDUCERS = {**copyreg.dispatch_table, WorkItem: _by_fields(WorkItem),
                  ResearcherItem: _by_fields(ResearcherItem)}


def _dumps(answer: Any) -> memoryview:
    """A worker's answer pickled with the items by their fields (``_by_fields``)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.DEFAULT_PROTOCOL)
    pickler.dispatch_table = _ITEM_REDUCERS
    pickler.dump(answer)
    return buffer.getbuffer()


def _parse(url: str, body: bytes | str, content_type: str | None,
           today: date) -> tuple[ProfilePage, float]:
    """The page, and the CPU seconds its parse took (the worker's, or the caller's thread)."""
    started = time.thread_time()
    page = parse_profile(url, body, content_type, today)
    return page, time.thread_time() - started
