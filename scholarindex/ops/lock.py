"""One reindex or rollback per alias at a time, across machines: a lock document in the cluster.

The lock of ``{prefix}works`` is the document ``{prefix}reindex-lock/_doc/{prefix}works``
(a plain index from ``index_mappings/reindex-lock.json``, created on first use), written
with ``op_type=create``: the cluster
accepts exactly one creation, whichever machine asks, so two ``scholarindex
reindex`` runs cannot both hold it. It names its holder (host, pid, start time)
for the refusal message (exit 75).

While held, a thread rewrites its ``heartbeat_at`` every quarter of
``REINDEX_LOCK_STALE_SECONDS`` (conditionally, on the version it wrote last). A
holder that crashed stops beating; once its heartbeat is older than that timeout
the lock is stale and the next run takes it over: it deletes the stale document
on its version (``if_seq_no``, so of two runs taking over, one wins) and creates
its own. To break a lock by hand (a holder known dead, without waiting), delete
the document: ``DELETE {prefix}reindex-lock/_doc/{alias}``. Released (deleted, on
its own version only) when the operation ends, however it ends.

Clocks: staleness compares the holder's heartbeat with the local clock, so
machines must agree to well within the timeout (NTP does).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.errors import IndexingError, IndexUnavailable
from scholarindex.indexing.indices import LOCK_INDEX, alias_name, ensure_plain_index
from scholarindex.indexing.passlock import is_stale

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
RELEASE_PATIENCE = 90.0  # seconds a release keeps trying through a cluster-manager election


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Holder:
    """Who holds an alias's lock, as its document says."""

    alias: str
    operation: str
    host: str
    pid: int
    started_at: str
    heartbeat_at: str

    def describe(self) -> str:
        """``reindex on host db1, pid 4242, since 2026-...``."""
        return (f"{self.operation} on host {self.host}, pid {self.pid}, since {self.started_at} "
                f"(last heartbeat {self.heartbeat_at})")


class AliasBusy(IndexingError):
    """Another reindex or rollback holds the alias's lock (exit 75)."""

    def __init__(self, holder: Holder, lock_index: str, stale_after: float):
        super().__init__(
            f"{holder.alias} is being changed by another {holder.describe()}; try again when it "
            f"ends. A holder that died is taken over once its heartbeat is {stale_after:g} s "
            f"old (REINDEX_LOCK_STALE_SECONDS), or delete {lock_index}/_doc/{holder.alias}")
        self.holder = holder


class LockLost(IndexingError):
    """The lock was broken while held (taken over as stale, or deleted by hand)."""


class AliasLock:
    """Hold the locks of some aliases for one operation: ``with AliasLock(...):``."""

    def __init__(self, client: OpenSearch, prefix: str, names: Iterable[str], operation: str,
                 stale_after: float, clock: Clock = _now,
                 layout: IndexLayout = DEFAULT_LAYOUT) -> None:
        self.client = client
        self.layout = layout
        self.index = alias_name(prefix, LOCK_INDEX)
        self.aliases = [alias_name(prefix, name) for name in names]
        self.operation = operation
        self.stale_after = stale_after
        self.clock = clock
        self.taken_over: list[Holder] = []  # stale locks this one replaced
        self._prefix = prefix
        self._held: dict[str, tuple[int, int, dict[str, Any]]] = {}  # alias -> seq, term, doc
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._mutex = threading.Lock()

    def __enter__(self) -> AliasLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        """Take every alias's lock, or none: ``AliasBusy`` naming the holder."""
        ensure_plain_index(self.client, self._prefix, LOCK_INDEX, self.layout)
        try:
            for alias in self.aliases:
                self._take(alias)
        except BaseException:
            self.release()
            raise
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True,
                                      name="reindex-lock-heartbeat")
        self._beat.start()

    def release(self) -> None:
        """Delete the lock documents this one still holds (never another holder's)."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(30)
            self._beat = None
        with self._mutex:
            held, self._held = self._held, {}
        for alias, (seq_no, term, doc) in held.items():
            try:
                self._delete_own(alias, seq_no, term, doc)
            except IndexUnavailable as exc:
                logger.error("could not release the lock of %s (%s): delete %s/_doc/%s "
                             "by hand, or it turns stale after %g s", alias, exc,
                             self.index, alias, self.stale_after)

    def _delete_own(self, alias: str, seq_no: int, term: int, doc: dict[str, Any]) -> None:
        """Delete our lock document; a 409 that is our own heartbeat (its answer lost, the
        client sent it again) is deleted on the version it left. Gone, or another
        holder's: left alone. Tried through a node's death and the election after it,
        since a lock left behind turns the next run away until it is stale."""
        deadline = time.monotonic() + RELEASE_PATIENCE
        wait = 0.5
        while True:
            try:
                with translate_errors(f"release the lock of {alias}"):
                    self.client.delete(index=self.index, id=alias, if_seq_no=seq_no,
                                       if_primary_term=term, refresh=True)
                return
            except IndexUnavailable as exc:
                if exc.status == 404:
                    return
                if exc.status == 409:
                    mine = self._own_version(alias, doc)
                    if mine is None:  # taken over: not ours to delete
                        return
                    seq_no, term = mine
                    continue
                if not exc.retryable or time.monotonic() + wait > deadline:
                    raise
                time.sleep(wait)
                wait = min(wait * 2, 8.0)

    def _own_version(self, alias: str, doc: dict[str, Any]) -> tuple[int, int] | None:
        """(seq_no, primary_term) of ``alias``'s lock document if it names this holder.

        A write to it whose answer was lost (the node that took it died) is sent again
        by the client to the next node, which answers 409 (or, for the first create,
        "already exists"): the version moved, by our own hand."""
        try:
            with translate_errors(f"read the lock of {alias}"):
                found = self.client.get(index=self.index, id=alias)
        except IndexUnavailable as exc:
            if exc.status == 404:
                return None
            raise
        source = found["_source"]
        if all(source.get(k) == doc[k] for k in ("host", "pid", "started_at")):
            return int(found["_seq_no"]), int(found["_primary_term"])
        return None

    def check(self, name: str) -> None:
        """``LockLost`` unless this one still holds ``name``'s lock, as the cluster says now.

        Called just before an irreversible step (the alias switch), so a run that was
        paused past the timeout and taken over does not switch too.
        """
        alias = alias_name(self._prefix, name)
        with self._mutex:
            mine = self._held.get(alias)
        if mine is not None:
            try:
                with translate_errors(f"read the lock of {alias}"):
                    found = self.client.get(index=self.index, id=alias)
            except IndexUnavailable as exc:
                if exc.status != 404:
                    raise
            else:  # ours if it names us (its version moves with each heartbeat)
                source, doc = found["_source"], mine[2]
                if all(source.get(k) == doc[k] for k in ("host", "pid", "started_at")):
                    return
        raise LockLost(f"the lock of {alias} was broken while this {self.operation} held it "
                       f"(another run may be changing {alias}): stopped before the switch")

    # --- taking, beating ---------------------------------------------------------------

    def _take(self, alias: str) -> None:
        now = self.clock().isoformat(timespec="milliseconds")
        doc = {"alias": alias, "operation": self.operation, "host": socket.gethostname(),
               "pid": os.getpid(), "started_at": now, "heartbeat_at": now}
        for _ in range(3):  # a stale lock deleted by a rival meanwhile: try again
            try:
                with translate_errors(f"take the lock of {alias}"):
                    answer = self.client.create(index=self.index, id=alias, body=doc,
                                                refresh=True)
            except IndexUnavailable as exc:
                if exc.status != 409:
                    raise
                mine = self._own_version(alias, doc)
                if mine is not None:  # our create, sent again after its answer was lost
                    with self._mutex:
                        self._held[alias] = (*mine, doc)
                    return
            else:
                with self._mutex:
                    self._held[alias] = (answer["_seq_no"], answer["_primary_term"], doc)
                return
            self._take_over_if_stale(alias)
        raise IndexUnavailable(f"the lock of {alias} keeps changing hands", retryable=True)

    def _take_over_if_stale(self, alias: str) -> None:
        """Delete ``alias``'s lock if its holder stopped beating; ``AliasBusy`` if it beats."""
        try:
            with translate_errors(f"read the lock of {alias}"):
                found = self.client.get(index=self.index, id=alias)
        except IndexUnavailable as exc:
            if exc.status == 404:  # released meanwhile
                return
            raise
        source = found["_source"]
        holder = Holder(alias=alias, operation=str(source.get("operation", "?")),
                        host=str(source.get("host", "?")), pid=int(source.get("pid", 0)),
                        started_at=str(source.get("started_at", "?")),
                        heartbeat_at=str(source.get("heartbeat_at", "?")))
        if not self._stale(holder.heartbeat_at):
            raise AliasBusy(holder, self.index, self.stale_after)
        logger.warning("taking over the stale lock of %s: %s", alias, holder.describe())
        try:
            with translate_errors(f"break the stale lock of {alias}"):
                self.client.delete(index=self.index, id=alias, if_seq_no=found["_seq_no"],
                                   if_primary_term=found["_primary_term"], refresh=True)
        except IndexUnavailable as exc:
            if exc.status not in (404, 409):  # a rival broke it first: race for the create
                raise
        else:
            self.taken_over.append(holder)

    def _stale(self, heartbeat_at: str) -> bool:
        return is_stale(heartbeat_at, self.clock(), self.stale_after)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.stale_after / 4):
            with self._mutex:
                held = dict(self._held)
            for alias, (seq_no, term, doc) in held.items():
                beat = dict(doc, heartbeat_at=self.clock().isoformat(timespec="milliseconds"))
                try:
                    with translate_errors(f"heartbeat of the lock of {alias}"):
                        answer = self.client.index(index=self.index, id=alias, body=beat,
                                                   if_seq_no=seq_no, if_primary_term=term)
                except IndexUnavailable as exc:
                    mine = None
                    if exc.status == 409:  # our own beat sent again, or another holder's
                        try:
                            mine = self._own_version(alias, doc)
                        except IndexUnavailable:
                            continue  # a blip: the next beat asks again
                    if mine is not None:
                        with self._mutex:
                            if alias in self._held:
                                self._held[alias] = (*mine, doc)
                    elif exc.status in (404, 409):
                        logger.error("the lock of %s was broken while held; another run may "
                                     "change %s now", alias, alias)
                        with self._mutex:
                            self._held.pop(alias, None)
                    else:  # a blip: the next beat tries again, well within the timeout
                        logger.warning("heartbeat of the lock of %s failed: %s", alias, exc)
                    continue
                with self._mutex:
                    if alias in self._held:
                        self._held[alias] = (answer["_seq_no"], answer["_primary_term"], beat)
