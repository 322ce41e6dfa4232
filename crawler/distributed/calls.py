"""This worker's Redis calls, off the reactor: one thread, one call at a time, in order.

A Redis call waits a round trip, and through a Redis restart it is retried for up to
``REDIS_RETRY_SECONDS``; on the reactor thread either would stop the crawl (and keep
SIGTERM from being handled). So the scheduler hands each call to this thread and gets
a ``Deferred`` back, fired on the reactor. One thread keeps the calls in the order they
were made (the pushes of a page before the take that may return them, acks before the
release at close), and while Redis is away the calls wait in line behind the one being
retried instead of piling up retries of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread, deferToThreadPool
from twisted.python.threadpool import ThreadPool

T = TypeVar("T")


class RedisCalls:
    def __init__(self, name: str = "redis") -> None:
        # Started at the first call: a scheduler that fails while it is built leaves no
        # thread behind to keep the process alive.
        self._pool = ThreadPool(minthreads=1, maxthreads=1, name=name)
        self.queued = 0  # calls handed over and not yet done (the line behind a slow one)
        self.answered_at = time.monotonic()  # when a call last ended

    def run(self, fn: Callable[..., T], *args: Any) -> Deferred[T]:
        """``fn(*args)`` on the Redis thread; the Deferred fires on the reactor."""
        if not self._pool.started:
            self._pool.start()
        self.queued += 1
        d: Deferred[T] = deferToThreadPool(reactor, self._pool, fn, *args)

        def done(result: Any) -> Any:
            self.queued -= 1
            self.answered_at = time.monotonic()
            return result
        d.addBoth(done)
        return d

    def stop(self) -> Deferred[None]:
        """Let the calls in line finish, then end the thread (joined off the reactor)."""
        return deferToThread(self._pool.stop)
