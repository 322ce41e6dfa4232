"""A SQLite file shared by threads: one connection per thread, as sqlite3 requires."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

# Read the file through a memory map, not a read() call per page: the crawl reads the
# lookup cache for every page it parses, most of it from pages SQLite's own small page
# cache no longer holds. Address space only; the kernel's page cache holds the data.
MMAP_BYTES = 1 << 30


class ThreadLocalSQLite:
    """The file at ``path``; each thread gets its own connection, opened on first use."""

    def __init__(self, path: Path, busy_timeout: float) -> None:
        self.path = path
        self._busy_timeout = busy_timeout  # seconds a writer waits for another's lock
        self._local = threading.local()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        return conn

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        return conn

    def close(self) -> None:
        """Close the calling thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
