"""``ProcessWriter``: a ``BulkWriter`` whose writes run in a child process.

Why: merging documents, serialising them and reading the cluster's answers is
pure Python, and in the crawl's process it competes for the GIL with parsing:
on the benchmark site (``make bench``) the writer held the GIL for about 30% of
the crawl, and indexing doubled the crawl's time. In a child process it runs on
the machine's other core. ``INDEX_WRITER_PROCESS = false`` keeps it in a thread.

The child builds its own client and writer from the same configuration, once;
each ``write`` sends the batch over a pipe and returns the child's
``WriteReport``. The parent keeps a client of its own for the start-up checks
and the dead-letter file for what it writes itself (late enrichments); the file
is safe to append to from both processes. The child's log records are handed to
the parent's loggers, so they land in the crawl's log. If the child dies, that
batch fails (the pipeline dead-letters it) and the next write starts a new one.
"""

from __future__ import annotations

import logging
import logging.handlers
import multiprocessing
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from indexing.bulk import BulkWriter, RetryPolicy, WriteReport
from indexing.changes import Change
from indexing.client import build_client, quiet_transport_logs
from indexing.config import OpenSearchConfig
from indexing.deadletter import DeadLetterFile

logger = logging.getLogger(__name__)

_writer: BulkWriter | None = None  # the child's own writer


class ProcessWriter:
    """``write`` runs ``BulkWriter.write`` in a child process; see the module doc."""

    def __init__(self, config: OpenSearchConfig, dead_letters: DeadLetterFile,
                 policy: RetryPolicy) -> None:
        self.client = build_client(config)
        self.prefix = config.prefix
        self.dead_letters = dead_letters
        self._args = (config, str(dead_letters.path), policy)
        # spawn, not fork: the crawl's process runs threads (the reactor's pool, arXiv).
        self._context = multiprocessing.get_context("spawn")
        self._records = self._context.Queue()
        self._listener = logging.handlers.QueueListener(self._records, _ParentLoggers())
        self._listener.start()
        self._pool = self._start()
        self._closed = False

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(1, mp_context=self._context, initializer=_start_child,
                                   initargs=(*self._args, self._records))

    def write(self, changes: Iterable[Change]) -> WriteReport:
        """Deliver or dead-letter every change (in the child); blocks until it is done."""
        try:
            return self._pool.submit(_write, list(changes)).result()
        except BrokenProcessPool:
            logger.error("the index writer process died; starting a new one")
            self._pool = self._start()
            raise

    def close(self) -> None:
        """Wait for the child to finish and stop it; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True)
        self._listener.stop()  # after the child: its last records are forwarded first
        self.client.close()


class _ParentLoggers(logging.Handler):
    """Hands a record from the child to the parent's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        target = logging.getLogger(record.name)
        if target.isEnabledFor(record.levelno):
            target.handle(record)


def _start_child(config: OpenSearchConfig, dead_letter_path: str, policy: RetryPolicy,
                 records: multiprocessing.Queue) -> None:
    global _writer
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(records)]
    root.setLevel(logging.INFO)
    quiet_transport_logs()
    _writer = BulkWriter(build_client(config), config.prefix, DeadLetterFile(dead_letter_path),
                         policy)


def _write(changes: list[Change]) -> WriteReport:
    assert _writer is not None, "the child's writer is made by _start_child"
    return _writer.write(changes)
