"""``ProcessWriter``: a ``BulkWriter`` whose writes run in a child process.

Why: merging documents, serialising them and reading the cluster's answers is
pure Python, and in the crawl's process it competes for the GIL with parsing:
on the benchmark site (``make bench``) the writer held the GIL for about 30% of
the crawl, and indexing doubled the crawl's time. In a child process it runs on
the machine's other core. ``INDEX_WRITER_PROCESS = false`` keeps it in a thread.

The child builds its own client and writer from the same configuration, once;
each ``write`` sends the batch over a pipe, packed (``changes.pack_changes``:
a few bytes objects, not hundreds of objects to pickle in the crawl's feeder
thread), and returns the child's ``WriteReport``. The parent keeps a client of
its own for the start-up checks and the dead-letter file for what it writes
itself (late enrichments); the file is safe to append to from both processes.
The child's log records are handed to the parent's loggers, so they land in the
crawl's log. The child ignores SIGINT and SIGTERM: the crawl stops it after its
last flush, and it exits by itself if the crawl dies. The child runs the garbage
collector as often as the crawl's process does (``GC_THRESHOLDS``,
``crawler/extensions/gctuning.py``): at Python's default it collected after every
700 allocations, and the writer allocates a document's worth of dicts per change
(docs/performance.md). If the child cannot start (a
crawl run from a script without a ``__main__`` guard, which spawn needs) or dies,
the batch and the rest of the run are written from the calling thread instead, as
with the setting off.
"""

from __future__ import annotations

import gc
import logging
import logging.handlers
import multiprocessing
import os
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import Change, pack_changes, unpack_changes
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.runtime.child_process import start_child
from scholarindex.runtime.heapwatch import HeapWatch
from scholarindex.runtime.memory import release_free_memory

logger = logging.getLogger(__name__)

_writer: BulkWriter | None = None  # the child's own writer
# What the child holds, written every few batches when asked for (``SCHOLARINDEX_HEAPWATCH``).
_watch: HeapWatch | None = None


class ProcessWriter:
    """``write`` runs ``BulkWriter.write`` in a child process; see the module doc."""

    def __init__(self, config: OpenSearchConfig, dead_letters: DeadLetterFile,
                 policy: RetryPolicy, hide_unresolved: bool = True) -> None:
        self.client = build_client(config)
        self.dead_letters = dead_letters
        self._config, self._policy = config, policy
        self._hide_unresolved = hide_unresolved
        # spawn, not fork: the crawl's process runs threads (the reactor's pool, arXiv).
        context = multiprocessing.get_context("spawn")
        self._records = context.Queue()
        self._listener = logging.handlers.QueueListener(self._records, _ParentLoggers())
        self._listener.start()
        # The crawl's own collector thresholds (set by GcTuning before the pipelines open).
        self._pool = ProcessPoolExecutor(
            1, mp_context=context, initializer=_start_child,
            initargs=(config, str(dead_letters.path), policy, self._records, os.getpid(),
                      gc.get_threshold(), hide_unresolved))
        # Start the child now, while the crawl opens: spawned at the first write, it would
        # take its start-up (seconds: a fresh interpreter importing the client) out of the
        # crawl, which meanwhile fills the buffer and waits (backpressure).
        self._pool.submit(_started)
        self._in_thread: BulkWriter | None = None  # the fallback, once the child failed
        self._closed = False
        # CPU seconds the child spent in its writes, by its own accounting (process_time).
        self.child_cpu_seconds = 0.0

    def write(self, changes: Iterable[Change], *, hold: bool = False,
              packed: list[bytes] | None = None) -> WriteReport:
        """Deliver or dead-letter (or, with ``hold``, hand back) every change; blocks.

        ``packed``: the same changes already packed (``changes.pack_changes``, in
        parts, in order), as the index pipeline keeps them; they are sent as they are.
        """
        batch = list(changes)
        if self._in_thread is None:
            message = packed if packed is not None else [pack_changes(batch)]
            try:
                report, cpu_seconds = self._pool.submit(_write, message, hold).result()
                self.child_cpu_seconds += cpu_seconds
                return report
            except BrokenProcessPool:
                # It may have written part of the batch: sending it again is safe (merges
                # are idempotent), so the batch is not lost, only slower from now on.
                logger.error("the index writer process could not start or died (a crawl "
                             "started from a script needs `if __name__ == \"__main__\":`); "
                             "writing from a thread of the crawl for the rest of the run")
                self._in_thread = BulkWriter(self.client, self._config.prefix,
                                             self.dead_letters, self._policy,
                                             layout=self._config.layout,
                                             hide_unresolved=self._hide_unresolved)
        return self._in_thread.write(batch, hold=hold)

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
                 records: multiprocessing.Queue, crawl_pid: int,
                 gc_thresholds: tuple[int, ...], hide_unresolved: bool = True) -> None:
    global _writer, _watch
    # The crawl decides when the writer stops (after its last flush): a Ctrl-C or a
    # SIGTERM sent to the whole process group must not kill a write half-way.
    start_child(crawl_pid)
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(records)]
    root.setLevel(logging.INFO)
    quiet_transport_logs()
    _writer = BulkWriter(build_client(config), config.prefix, DeadLetterFile(dead_letter_path),
                         policy, layout=config.layout, hide_unresolved=hide_unresolved)
    gc.set_threshold(*gc_thresholds)
    # What is alive now (modules, the client) lives as long as the child: out of the
    # collector's sight, its full collections no longer walk it after every batch.
    gc.freeze()
    _watch = HeapWatch.from_environment()


def _started() -> None:
    """Nothing: submitted once so the pool spawns the child at once."""


def _write(packed: list[bytes], hold: bool) -> tuple[WriteReport, float]:
    """The child's write, and the CPU seconds it took there (all its threads)."""
    assert _writer is not None, "the child's writer is made by _start_child"
    started = time.process_time()
    changes = unpack_changes(packed)
    count = len(changes)
    report = _writer.write(changes, hold=hold)
    del changes  # before the trim, as when it was a temporary
    release_free_memory()  # a batch's buffers are the child's largest allocations
    cpu_seconds = time.process_time() - started
    if _watch is not None:
        _watch.done({"changes": count, "cpu_s": cpu_seconds,
                     "neighbours": len(_writer._neighbours._kept)})
    return report, cpu_seconds
