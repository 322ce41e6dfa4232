"""One arXiv request at a time, ``delay`` seconds apart, across every process on a machine.

arXiv's terms allow one request every 3 seconds and one connection at a time
for a whole deployment, not per process: two crawls started by cron at the
same minute must share the budget. So the slot is a lock file next to the
cache, held with ``flock`` for the whole request (one in flight), and the file
holds the time the last request ended (the pause counts from there). With
``REDIS_URL`` (the distributed crawl, workers on many machines) ``build_limiter``
gives the same slot kept in Redis instead (``scholarindex.distributed.ratelimit``).

Waiting happens in the caller's thread, which is never the reactor: the
enricher's worker or the ops CLI. A stop event cuts the wait short at shutdown.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import Cancelled

LOCK_FILENAME = "arxiv-requests.lock"
# arXiv's own hosts never get less than this, whatever the settings say.
ARXIV_MIN_DELAY = 3.0
_POLL = 0.05


def is_arxiv_host(api_url: str) -> bool:
    """Whether the API URL points at arXiv itself (not a local stand-in)."""
    host = (urlsplit(api_url.replace("{}", "")).hostname or "").lower()
    return host == "arxiv.org" or host.endswith(".arxiv.org")


def effective_delay(api_url: str, delay: float) -> float:
    """The delay to keep: at least 3 s against arXiv, anything for a stand-in."""
    delay = max(float(delay), 0.0)
    return max(delay, ARXIV_MIN_DELAY) if is_arxiv_host(api_url) else delay


class SharedRateLimiter:
    """A request slot shared through a lock file in ``directory``."""

    def __init__(self, directory: str | Path, delay: float,
                 stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(directory).expanduser() / LOCK_FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.delay = delay
        self._stop = stop or threading.Event()
        self._clock = clock  # wall clock: the only one every process shares

    def _wait(self, seconds: float) -> None:
        if seconds > 0 and self._stop.wait(seconds):
            raise Cancelled("shutting down while waiting for the arXiv request slot")

    def _lock(self, fd: int) -> None:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                self._wait(_POLL)

    def _last_request(self, fd: int) -> float:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            return float(os.read(fd, 64).decode("ascii").strip() or 0)
        except ValueError:
            return 0.0

    def _record(self, fd: int, when: float) -> None:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{when:.6f}".encode("ascii"))

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold the machine-wide slot for one request, after the required pause."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._lock(fd)
            since = self._clock() - self._last_request(fd)
            # A clock set back makes "since" negative: wait one delay, not forever.
            self._wait(min(self.delay - since, self.delay))
            try:
                yield
            finally:
                self._record(fd, self._clock())
        finally:
            os.close(fd)  # closing the descriptor releases the flock


class RequestSlot(Protocol):
    """What the arXiv client holds around each request."""

    def slot(self) -> AbstractContextManager[None]: ...


def build_limiter(config: EnrichmentConfig, stop: threading.Event | None = None,
                  url: str | None = None) -> RequestSlot:
    """The request slot for ``config``: per machine (lock file), or, with ``REDIS_URL``,
    per deployment (``scholarindex.distributed.ratelimit``: every worker on every machine). The
    query API and the OAI-PMH harvest share it; ``url`` (default the query API's) is
    the endpoint whose delay applies (never under 3 s against arXiv's own hosts).

    Redis is imported only in the second case: a crawl without REDIS_URL needs none.
    """
    delay = effective_delay(url or config.api_url, config.delay_seconds)
    if not config.redis_url:
        return SharedRateLimiter(config.cache_dir, delay, stop=stop)
    from scholarindex.distributed.connection import RedisLink
    from scholarindex.distributed.ratelimit import RedisRateLimiter

    link = RedisLink(config.redis_url, config.redis_retry_seconds)
    # A dead holder's slot frees after the longest a request may take.
    hold = config.timeout_seconds * 2 + delay
    return RedisRateLimiter(link, config.redis_key_prefix, "arxiv", delay, hold,
                            stop=stop, cancelled=Cancelled)
