"""One request slot shared by every worker on every machine, in Redis.

The same contract as ``scholarindex.enrichment.ratelimit.SharedRateLimiter`` (one machine, a lock
file): one request in flight at a time, and the next one starts ``delay`` seconds
after the previous one ended. Here the slot is a key set with ``NX`` semantics inside
a script, and the time the next request may start is kept in Redis and read with
Redis's own clock, so the machines' clocks do not matter. A worker that dies holding
the slot frees it after ``hold_seconds`` (longer than any request may take, and
never shorter than the delay).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from scholarindex.distributed.connection import RedisLink

_NOW = "local t = redis.call('TIME'); local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
# KEYS: slot, next; ARGV: token, hold ms. Returns ms to wait (0: the slot is ours).
_ACQUIRE = _NOW + """
local holder_ttl = redis.call('PTTL', KEYS[1])
if holder_ttl > 0 then return math.min(holder_ttl, 50) end
local after = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < after then return after - now end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0
"""
# KEYS: slot, next; ARGV: token, delay ms
_RELEASE = _NOW + """
redis.call('SET', KEYS[2], now + tonumber(ARGV[2]), 'PX', tonumber(ARGV[2]) + 60000)
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


class Cancelled(Exception):
    """The stop event was set while waiting for the slot."""


class RedisRateLimiter:
    """``slot()``: hold the deployment-wide request slot named ``name``."""

    def __init__(self, link: RedisLink, prefix: str, name: str, delay: float,
                 hold_seconds: float, stop: threading.Event | None = None,
                 cancelled: type[Exception] = Cancelled) -> None:
        self.link = link
        self.slot_key = f"{prefix}ratelimit:{name}:slot"
        self.next_key = f"{prefix}ratelimit:{name}:next"
        self.delay = delay
        self.hold_ms = int(max(hold_seconds, delay + 1.0) * 1000)
        self._stop = stop or threading.Event()
        self._cancelled = cancelled
        self._acquire = link.client.register_script(_ACQUIRE)
        self._release = link.client.register_script(_RELEASE)

    @contextmanager
    def slot(self) -> Iterator[None]:
        token = uuid.uuid4().hex
        keys = [self.slot_key, self.next_key]
        while True:
            wait_ms = int(self.link.call(lambda c: self._acquire(
                keys=keys, args=[token, self.hold_ms], client=c), "rate-limit slot"))
            if wait_ms <= 0:
                break
            if self._stop.wait(wait_ms / 1000):
                raise self._cancelled("shutting down while waiting for the request slot")
        try:
            yield
        finally:
            self.link.call(lambda c: self._release(
                keys=keys, args=[token, int(self.delay * 1000)], client=c), "rate-limit release")


