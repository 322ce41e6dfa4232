"""Re-deliver a dead-letter file: the library behind ``scholarindex replay`` (``ops/cli.py``).

The file is first moved aside (``PATH.replay-<time>-<pid>``), so crawls still
running keep appending to a fresh ``PATH`` and no line is read twice or lost.
Every change is merged again against the index as it is now; the lines that fail
again are appended to ``PATH`` with their new reason. The moved-aside file is
deleted only when it has been processed to the end, and a replay that was
interrupted is picked up by the next one (merges are idempotent, so re-doing
part of it is harmless).

A listing seen longer ago than the tombstone retention (``TOMBSTONE_RETENTION_DAYS``)
is not replayed: the tombstone that may have to stop it could have been pruned
(``scholarindex.indexing.tombstones``, "Retention"). It goes, with code ``expired`` and its reason,
to ``PATH.expired`` (kept for a human, never replayed by default) and is counted.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from opensearchpy import OpenSearch

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import Change
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.deadletter import EXPIRED, DeadLetterFile, dead_letter, read_lines
from scholarindex.indexing.indices import ensure_aliases
from scholarindex.indexing.tombstones import expired_listing, retention_cutoff

logger = logging.getLogger(__name__)


@dataclass
class ReplayReport:
    """Outcome of a replay: how many lines were read, delivered, failed again."""

    read: int = 0
    unreadable: int = 0
    expired: int = 0  # listings older than the retention, set aside in ``expired_path``
    expired_path: str = ""
    write: WriteReport = field(default_factory=WriteReport)

    @property
    def delivered(self) -> int:
        """Changes that reached the index."""
        return self.write.delivered

    @property
    def failed_again(self) -> int:
        """Lines written back to the dead-letter file (with their new reason)."""
        return self.write.dead_lettered + self.unreadable


def waiting(path: str | os.PathLike[str]) -> list[Path]:
    """The files with lines to replay: ``path`` itself and what unfinished replays left."""
    live = Path(path)
    return ([live] if live.exists() else []) + _moved_aside(live)


def claim(path: str | os.PathLike[str]) -> list[Path]:
    """Move the live file aside and return every file waiting to be replayed, oldest first."""
    live = Path(path)
    if live.exists():
        stamp = time.strftime("%Y%m%dT%H%M%S")
        os.replace(live, live.with_name(f"{live.name}.replay-{stamp}-{os.getpid()}"))
    return _moved_aside(live)


def _moved_aside(live: Path) -> list[Path]:
    return sorted(live.parent.glob(f"{live.name}.replay-*")) if live.parent.exists() else []


def expired_path(path: str | os.PathLike[str]) -> Path:
    """Where replay sets aside the expired listings of ``path`` (itself, for such a file)."""
    live = Path(path)
    return live if live.name.endswith(".expired") else live.with_name(f"{live.name}.expired")


def replay(path: str | os.PathLike[str], client: OpenSearch, prefix: str,
           policy: RetryPolicy, batch_size: int = 500, *,
           retention_days: float, layout: IndexLayout = DEFAULT_LAYOUT) -> ReplayReport:
    """Replay the dead-letter file at ``path`` into the aliases under ``prefix``.

    Listings seen more than ``retention_days`` ago (the tombstone retention) go to
    ``expired_path(path)`` instead, with code ``expired``.

    Raises ``IndexUnavailable`` (before touching the file) when the cluster cannot
    be reached; a cluster that fails mid-way only sends lines back to ``path``.
    """
    ensure_aliases(client, prefix, layout)
    live = DeadLetterFile(path)
    writer = BulkWriter(client, prefix, live, policy, layout=layout)
    expired = DeadLetterFile(expired_path(path))
    cutoff = retention_cutoff(retention_days)
    reason = (f"listing seen before {cutoff}, more than TOMBSTONE_RETENTION_DAYS="
              f"{retention_days:g} ago: its profile's tombstone may be pruned, so it is not "
              "replayed")
    report = ReplayReport(expired_path=str(expired.path))
    for claimed in claim(path):
        batch: list[Change] = []
        for line, letter in read_lines(claimed):
            report.read += 1
            if letter is None:
                live.write_raw([line])  # keep what we cannot read for a human
                report.unreadable += 1
                continue
            if expired_listing(letter.change, cutoff):
                expired.write([dead_letter(letter.change, EXPIRED, reason)])
                report.expired += 1
                continue
            batch.append(letter.change)
            if len(batch) >= batch_size:
                report.write.add(writer.write(batch))
                batch = []
        if batch:
            report.write.add(writer.write(batch))
        claimed.unlink()
        if report.write.fatal:
            break
    return report

