"""One request slot shared by every worker on every machine, in Redis.

The same contract as ``scholarindex.enrichment.ratelimit.SharedRateLimiter`` (one machine, a lock
file): one request in flight at a time, and the next one starts ``delay`` seconds
after the previous one ended. Here the slot is a key set with ``NX`` semantics inside
a script, and the time the next request may start is kept in Redis and read with
Redis's own clock, so the machines' clocks do not matter. The slot key lives
``LIFE_SECONDS`` and a thread of the holder renews it every third of that while the
request runs, for ``hold_seconds`` at most (longer than any request may take): a
worker that dies holding the slot frees it within seconds, not after a request's
whole time-out (which stopped every other worker's arXiv lookups meanwhile).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from scholarindex.distributed.connection import RedisLink, RedisUnavailable

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


LIFE_SECONDS = 6.0
# KEYS: slot; ARGV: token, ms. Renews the slot only while this holder has it.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
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
        self._renew = link.client.register_script(_RENEW)
        self.life_ms = min(int(LIFE_SECONDS * 1000), self.hold_ms)

    @contextmanager
    def slot(self) -> Iterator[None]:
        token = uuid.uuid4().hex
        keys = [self.slot_key, self.next_key]
        while True:
            wait_ms = int(self.link.call(lambda c: self._acquire(
                keys=keys, args=[token, self.life_ms], client=c), "rate-limit slot"))
            if wait_ms <= 0:
                break
            if self._stop.wait(wait_ms / 1000):
                raise self._cancelled("shutting down while waiting for the request slot")
        held = threading.Event()
        keeper = threading.Thread(target=self._keep, args=(token, held), daemon=True,
                                  name="rate-limit-slot")
        keeper.start()
        try:
            yield
        finally:
            held.set()
            self.link.call(lambda c: self._release(
                keys=keys, args=[token, int(self.delay * 1000)], client=c), "rate-limit release")



    def _keep(self, token: str, released: threading.Event) -> None:
        """Renew the slot while its request runs, up to ``hold_ms`` in all."""
        renewals = max(self.hold_ms // max(self.life_ms // 3, 1), 1)
        for _ in range(renewals):
            if released.wait(self.life_ms / 3000):
                return
            try:
                self.link.call(lambda c: self._renew(keys=[self.slot_key],
                                                     args=[token, self.life_ms], client=c),
                               "rate-limit renewal")
            except RedisUnavailable:
                return
