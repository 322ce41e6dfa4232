"""One resolution pass per works index at a time, across processes and machines.

Two passes at once (the workers of one distributed job each run one when they finish,
or a crawl's and ``scholarindex works resolve``) read the same marked works and
regroup the same documents: each one's conditional writes make the other's regroups
conflict half-way (one hid a document the other had just written into, one deleted
what the other was about to keep), and the rounds of both can run out with a
paper's listings left in two documents that no mark points to. So a pass waits for
the one running, then reads the index as that pass left it.

The lock is a document of the lock index (``LOCK_INDEX``, as ``scholarindex.ops.lock``
uses for reindexes), ``_id`` ``{prefix}works-resolution``, written with
``op_type=create``: the cluster accepts one creation. Its holder rewrites its
``heartbeat_at`` every quarter of ``stale_after``; a holder silent longer (it
crashed) is taken over. Released (deleted, on its own version) when the pass ends.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import LOCK_INDEX, alias_name, ensure_plain_index

logger = logging.getLogger(__name__)

NAME = "works-resolution"
STALE_AFTER = 120.0  # seconds without a heartbeat before a holder counts as dead
WAIT = 3600.0  # seconds a pass waits for the running one before it runs anyway
POLL = (0.2, 2.0)  # seconds between two looks at the lock (first, at most)


class PassLock:
    """``with PassLock(client, prefix):`` holds the works index's pass lock."""

    def __init__(self, client: OpenSearch, prefix: str, layout: IndexLayout = DEFAULT_LAYOUT,
                 stale_after: float = STALE_AFTER, wait: float = WAIT,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.prefix = prefix
        self.layout = layout
        self.stale_after = stale_after
        self.wait = wait
        self._sleep = sleep
        self.index = alias_name(prefix, LOCK_INDEX)
        self.id = alias_name(prefix, NAME)
        self.waited = 0.0  # seconds spent waiting for another pass
        self._held: tuple[int, int] | None = None  # seq_no, primary_term of our document
        self._doc: dict[str, Any] = {}
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._mutex = threading.Lock()

    def __enter__(self) -> PassLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, waiting while another live pass holds it (up to ``wait``: then
        the pass runs anyway, logged). Raises ``IndexUnavailable``."""
        ensure_plain_index(self.client, self.prefix, LOCK_INDEX, self.layout)
        started = time.monotonic()
        pause, logged = POLL[0], False
        while not self._take():
            if time.monotonic() - started > self.wait:
                logger.warning("another resolution pass has held %s for over %g s: running "
                               "beside it", self.id, self.wait)
                break
            if not logged:
                logger.info("waiting for the resolution pass another process runs")
                logged = True
            self._sleep(pause + random.uniform(0, pause / 2))
            pause = min(POLL[1], pause * 2)
        self.waited = time.monotonic() - started
        if self._held is not None:
            self._stop.clear()
            self._beat = threading.Thread(target=self._heartbeat, daemon=True,
                                          name="resolution-lock-heartbeat")
            self._beat.start()

    def release(self) -> None:
        """Delete the lock document if it is still ours."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(30)
            self._beat = None
        with self._mutex:
            held, self._held = self._held, None
        if held is None:
            return
        try:
            with translate_errors(f"release {self.id}"):
                self.client.delete(index=self.index, id=self.id, if_seq_no=held[0],
                                   if_primary_term=held[1], refresh=True)
        except IndexUnavailable as exc:
            if exc.status not in (404, 409):
                logger.error("could not release the resolution pass lock (%s): it turns "
                             "stale after %g s", exc, self.stale_after)

    def _take(self) -> bool:
        """Create our lock document; False while a live holder has it (a dead one's is
        deleted on its version, and the next look may take it)."""
        now = _now()
        doc = {"alias": self.id, "operation": "resolve", "host": socket.gethostname(),
               "pid": os.getpid(), "started_at": now, "heartbeat_at": now}
        try:
            with translate_errors(f"take {self.id}"):
                answer = self.client.create(index=self.index, id=self.id, body=doc,
                                            refresh=True)
        except IndexUnavailable as exc:
            if exc.status != 409:
                raise
        else:
            with self._mutex:
                self._held, self._doc = (answer["_seq_no"], answer["_primary_term"]), doc
            return True
        try:
            with translate_errors(f"read {self.id}"):
                found = self.client.get(index=self.index, id=self.id)
        except IndexUnavailable as exc:
            if exc.status == 404:  # released meanwhile
                return False
            raise
        if not self._stale(str(found["_source"].get("heartbeat_at", ""))):
            return False
        logger.warning("taking over the resolution pass lock of a holder that stopped: %s",
                       found["_source"])
        try:
            with translate_errors(f"break {self.id}"):
                self.client.delete(index=self.index, id=self.id, if_seq_no=found["_seq_no"],
                                   if_primary_term=found["_primary_term"], refresh=True)
        except IndexUnavailable as exc:
            if exc.status not in (404, 409):
                raise
        return False

    def _stale(self, heartbeat_at: str) -> bool:
        return is_stale(heartbeat_at, datetime.now(UTC), self.stale_after)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.stale_after / 4):
            with self._mutex:
                held, doc = self._held, self._doc
            if held is None:
                return
            try:
                with translate_errors(f"heartbeat {self.id}"):
                    answer = self.client.index(index=self.index, id=self.id,
                                               body={**doc, "heartbeat_at": _now()},
                                               if_seq_no=held[0], if_primary_term=held[1])
            except IndexUnavailable as exc:
                if exc.status in (404, 409):
                    logger.error("the resolution pass lock was taken over while held")
                    with self._mutex:
                        self._held = None
                    return
                continue  # a blip: the next beat, well within the timeout
            with self._mutex:
                if self._held is not None:
                    self._held = (answer["_seq_no"], answer["_primary_term"])


def is_stale(heartbeat_at: str, now: datetime, stale_after: float) -> bool:
    """Has a lock document's holder been silent longer than ``stale_after`` seconds? An
    unreadable time counts as stale: no live holder wrote it."""
    try:
        beat = datetime.fromisoformat(heartbeat_at.replace("Z", "+00:00"))
    except ValueError:
        return True
    if beat.tzinfo is None:
        beat = beat.replace(tzinfo=UTC)
    return (now - beat).total_seconds() > stale_after


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
