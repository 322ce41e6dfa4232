"""The dead-letter file: append-only JSONL of changes the index did not take.

One line per change: why it failed (``reason``, and a short ``code`` for stats),
when, and the original item with its seen-time, so ``replay`` can merge it again
against whatever the index holds later. Rejected documents also carry the
``document`` that was refused, to diagnose mapping errors.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scholarindex.indexing.changes import Change
from scholarindex.indexing.documents import timestamp

logger = logging.getLogger(__name__)

# Reason codes (stats: index/dead_lettered/<code>).
UNAVAILABLE = "unavailable"  # the cluster did not answer or refused the request; retries ran out
CONFLICT = "conflict"  # still conflicting after every re-read and re-merge
REJECTED = "rejected"  # the cluster refused the document (mapping error, bad value)
INVALID = "invalid"  # the item cannot become a document (no id, unknown enrichment field)
MISSING = "missing_document"  # enrichment for a work the index does not hold
LATE = "late"  # an enrichment that arrived after the crawl's indexer closed
INTERNAL = "internal"  # the indexer crashed on the batch (a bug, not the cluster)
EXPIRED = "expired"  # a listing older than TOMBSTONE_RETENTION_DAYS: replay sets it aside


@dataclass(frozen=True)
class DeadLetter:
    """One change that did not reach the index, and why."""

    change: Change
    code: str
    reason: str
    failed_at: str
    document: Mapping[str, Any] | None = None

    def to_line(self) -> str:
        """One JSON line (no newline)."""
        body: dict[str, Any] = {"reason": self.reason, "code": self.code,
                                "failed_at": self.failed_at, "index": self.change.index}
        body.update(self.change.to_json())
        if self.document is not None:
            body["document"] = self.document
        return json.dumps(body, ensure_ascii=False, default=str)

    @classmethod
    def from_line(cls, line: str) -> DeadLetter:
        """Parse a line written by ``to_line``; raises ValueError/KeyError if it is not one."""
        body = json.loads(line)
        return cls(Change.from_json(body), str(body.get("code", "")), str(body["reason"]),
                   str(body.get("failed_at", "")), body.get("document"))


def dead_letter(change: Change, code: str, reason: str,
                document: Mapping[str, Any] | None = None) -> DeadLetter:
    """A DeadLetter stamped now."""
    return DeadLetter(change, code, reason, timestamp(), document)


class DeadLetterFile:
    """Appends dead letters to a JSONL file, safely from several threads and processes.

    Each call appends all its lines with a single ``write`` on an ``O_APPEND``
    descriptor and fsyncs, so lines from concurrent writers never interleave and
    a crash loses no acknowledged line. The file is opened per call, so a replay
    that moves it away makes the next write start a fresh file.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, letters: Iterable[DeadLetter]) -> int:
        """Append the letters; return how many were written."""
        lines = [letter.to_line() for letter in letters]
        if not lines:
            return 0
        self.write_raw(lines)
        return len(lines)

    def write_raw(self, lines: Iterable[str]) -> None:
        """Append lines as they are (replay keeps unreadable lines this way)."""
        data = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
        if not data:
            return
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)


def read_lines(path: str | os.PathLike[str]) -> Iterator[tuple[str, DeadLetter | None]]:
    """Each line of a dead-letter file with its parse (None when unreadable)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                yield line, DeadLetter.from_line(line)
            except (ValueError, KeyError, TypeError) as exc:
                logger.warning("unreadable dead-letter line in %s (%s): %.120s", path, exc, line)
                yield line, None
