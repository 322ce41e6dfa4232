"""Page state kept between runs, so an incremental run can skip unchanged pages.

One SQLite file per job (``STATE_DIR/<job>.sqlite``). Per URL it keeps two
versions of what the page looked like: the *committed* one, from the last run
whose verdict was ok, and a *pending* one, recorded by the run in progress.

Why two: a page's items may still fail downstream (dead-lettered, run cut
short). Only a run that ends well promotes its pending entries, so a page
whose documents did not make it is fetched and processed again next time.
Pending entries carry the run id; a JOBDIR resume keeps its run id and so
keeps the entries recorded before the pause.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,
    hash TEXT,
    etag TEXT,
    last_modified TEXT,
    committed_at TEXT,
    pending_run TEXT,
    pending_hash TEXT,
    pending_etag TEXT,
    pending_last_modified TEXT
)
"""


@dataclass(frozen=True)
class PageState:
    """What a page looked like when last committed."""

    url: str
    hash: str | None
    etag: str | None
    last_modified: str | None


class PageStateStore:
    """Committed and pending page states for one job, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # isolation_level=None: autocommit; each statement is its own transaction, so a
        # killed crawl leaves every recorded entry on disk (resume needs them).
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # No fsync per page: a power cut may forget the last entries, which only means
        # those pages are processed again. Keeps the reactor thread's writes to microseconds.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def committed(self, url: str) -> PageState | None:
        row = self._db.execute(
            "SELECT hash, etag, last_modified FROM pages WHERE url = ? AND hash IS NOT NULL",
            (url,),
        ).fetchone()
        return PageState(url, *row) if row else None

    def record_pending(
        self, run_id: str, url: str, hash: str, etag: str | None, last_modified: str | None
    ) -> None:
        self._db.execute(
            "INSERT INTO pages (url, pending_run, pending_hash, pending_etag,"
            " pending_last_modified) VALUES (?, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET"
            " pending_run = excluded.pending_run,"
            " pending_hash = excluded.pending_hash, pending_etag = excluded.pending_etag,"
            " pending_last_modified = excluded.pending_last_modified",
            (url, run_id, hash, etag, last_modified),
        )

    def discard_pending(self, url: str) -> None:
        """Forget this run's view of a page (its items were not all produced)."""
        self._db.execute(
            "UPDATE pages SET pending_run = NULL, pending_hash = NULL, pending_etag = NULL,"
            " pending_last_modified = NULL WHERE url = ?",
            (url,),
        )

    def drop_stale_pending(self, run_id: str) -> int:
        """Forget pending entries of other runs: they failed and will not be resumed."""
        cursor = self._db.execute(
            "UPDATE pages SET pending_run = NULL, pending_hash = NULL, pending_etag = NULL,"
            " pending_last_modified = NULL WHERE pending_run IS NOT NULL AND pending_run != ?",
            (run_id,),
        )
        self._db.execute("DELETE FROM pages WHERE hash IS NULL AND pending_run IS NULL")
        return cursor.rowcount

    def pending_count(self, run_id: str) -> int:
        return self._db.execute(
            "SELECT count(*) FROM pages WHERE pending_run = ?", (run_id,)
        ).fetchone()[0]

    def commit(self, run_id: str) -> int:
        """Promote this run's pending entries to committed; returns how many."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        cursor = self._db.execute(
            "UPDATE pages SET hash = pending_hash, etag = pending_etag,"
            " last_modified = pending_last_modified, committed_at = ?, pending_run = NULL,"
            " pending_hash = NULL, pending_etag = NULL, pending_last_modified = NULL"
            " WHERE pending_run = ?",
            (now, run_id),
        )
        return cursor.rowcount

    def close(self) -> None:
        self._db.close()
