"""One run of a job at a time: an exclusive, non-blocking flock on ``STATE_DIR/<job>.lock``.

flock is released by the kernel when the process dies, however it dies, so a
crashed run never leaves a stale lock behind. The file itself stays (deleting a
lock file races with the next run opening it); it holds the holder's pid and
start time for the refusal message.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


class RunLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self) -> bool:
        """Take the lock now, or return False if another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        json.dump({"pid": os.getpid(),
                   "started_at": datetime.now(UTC).isoformat(timespec="seconds")}, handle)
        handle.flush()
        self._file = handle
        return True

    def holder(self) -> str:
        """Who holds the lock, as far as its file says."""
        try:
            info = json.loads(self.path.read_text(encoding="utf-8"))
            return f"pid {info['pid']}, started {info['started_at']}"
        except (OSError, ValueError, KeyError):
            return "holder unknown"

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
