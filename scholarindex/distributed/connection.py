"""The Redis connection: settings, key names, and calls that ride out a restart.

Every call goes through ``RedisLink.call``: a dropped connection, a refused one (Redis
restarting) or a server still loading its append-only file is retried with a
doubling backoff until ``REDIS_RETRY_SECONDS`` have passed since the first failure;
then ``RedisUnavailable``. Once one link of a process gave up on a Redis, every link of
that process to the same Redis fails at once from then on (``RedisUnavailable``, no
more retrying): the worker is closing, and each of its parts (frontier, page state,
arXiv cache) waiting out the retry time again would keep it alive for minutes.
Scripts are ``redis-py`` ``Script`` objects, which load themselves again after a
restart emptied the script cache.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

try:
    import redis
    from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
except ModuleNotFoundError as exc:  # an optional part of the package
    raise ModuleNotFoundError(
        "the distributed crawl (REDIS_URL) needs the distributed extra: "
        "pip install 'scholar-index[distributed]'", name=exc.name) from exc

from scholarindex.core.settings import read_setting
from scholarindex.core.urls import redact_url

logger = logging.getLogger(__name__)
T = TypeVar("T")
_TRANSIENT = (ConnectionError, TimeoutError, BusyLoadingError, OSError)


class RedisUnavailable(RuntimeError):
    """Redis did not answer within ``REDIS_RETRY_SECONDS``."""


# Redis URLs this process gave up on (``RedisLink.call``), with why: later calls fail fast.
_GIVEN_UP: dict[str, str] = {}
# Redis URLs whose calls retry no longer than a time (monotonic): the worker is stopping.
_HURRIED: dict[str, float] = {}
_GIVEN_UP_LOCK = threading.Lock()


def hurry(url: str, seconds: float) -> None:
    """From any thread: every call of this process to the Redis at ``url`` retries for at
    most ``seconds`` more (a worker told to stop does not wait the whole
    ``REDIS_RETRY_SECONDS`` for a Redis that is away; its leases expire by themselves)."""
    with _GIVEN_UP_LOCK:
        cap = time.monotonic() + seconds
        _HURRIED[url] = min(_HURRIED.get(url, cap), cap)


def given_up(url: str) -> str | None:
    """Why this process gave up on the Redis at ``url``, or None if it has not."""
    with _GIVEN_UP_LOCK:
        return _GIVEN_UP.get(url)


@dataclass(frozen=True)
class RedisConfig:
    """Where Redis is and how long a worker waits for it."""

    url: str
    key_prefix: str  # before every key, to share a Redis between deployments
    lease_seconds: float  # a taken request comes back to the queue after this, unless renewed
    retry_seconds: float  # how long calls are retried while Redis is unreachable
    timeout: float = 10.0  # socket timeout of one call

    @classmethod
    def from_settings(cls, settings: Any) -> RedisConfig:
        return cls(url=read_setting(settings, "REDIS_URL", str),
                   key_prefix=read_setting(settings, "REDIS_KEY_PREFIX", str),
                   lease_seconds=read_setting(settings, "REDIS_LEASE_SECONDS", float),
                   retry_seconds=read_setting(settings, "REDIS_RETRY_SECONDS", float))

    @property
    def safe_url(self) -> str:
        return redact_url(self.url)


def enabled(settings: Any) -> bool:
    """Whether the distributed mode is on (``REDIS_URL`` set)."""
    return bool(str(settings.get("REDIS_URL") or "").strip())


class RedisLink:
    """A ``redis.Redis`` client whose calls are retried through a restart."""

    def __init__(self, url: str, retry_seconds: float, timeout: float = 10.0,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.url = url
        self.retry_seconds = retry_seconds
        self.client = redis.Redis.from_url(url, socket_timeout=timeout,
                                           socket_connect_timeout=min(timeout, 5.0),
                                           health_check_interval=30)
        self._stop = threading.Event()  # set by abort(): retries end at once
        self._sleep = sleep or self._stop.wait
        self.retries = 0  # calls repeated because Redis was unreachable
        self.round_trips = 0  # calls that reached Redis (a pipeline or a script is one)

    @classmethod
    def from_config(cls, config: RedisConfig) -> RedisLink:
        return cls(config.url, config.retry_seconds, config.timeout)

    def abort(self) -> None:
        """From any thread: a call retrying now, and every later one, fails at once."""
        self._stop.set()

    def call(self, fn: Callable[[redis.Redis], T], what: str = "redis call") -> T:
        """``fn(client)``, retried with backoff while Redis is unreachable or loading."""
        deadline: float | None = None
        first = 0.0
        wait = 0.05
        while True:
            if (reason := given_up(self.url)) is not None:
                raise RedisUnavailable(f"{what}: {reason}")
            if self._stop.is_set():
                raise RedisUnavailable(f"{what}: the worker is closing")
            try:
                result = fn(self.client)
            except _TRANSIENT as exc:
                now = time.monotonic()
                if deadline is None:
                    first, deadline = now, now + self.retry_seconds
                    logger.warning("Redis at %s unavailable (%s: %s); retrying for up to %g s",
                                   redact_url(self.url), type(exc).__name__, exc,
                                   self.retry_seconds)
                deadline = min(deadline, _HURRIED.get(self.url, deadline))
                if now >= deadline or self._stop.is_set():
                    reason = (f"Redis at {redact_url(self.url)} unavailable for "
                              f"{now - first:.0f} s: {exc}")
                    with _GIVEN_UP_LOCK:
                        _GIVEN_UP.setdefault(self.url, reason)
                    raise RedisUnavailable(f"{what}: {reason}") from exc
                self.retries += 1
                self._sleep(min(wait, max(deadline - now, 0.0)))
                wait = min(wait * 2, 2.0)
                continue
            self.round_trips += 1
            if deadline is not None:
                logger.warning("Redis at %s answers again", redact_url(self.url))
            return result

    def close(self) -> None:
        self.client.close()
