"""A job's shared frontier: one request queue, one seen-set, and leases instead of pops.

Every operation that reads and writes more than one key is one Lua script, so it is
atomic however many workers call it. Times are Redis's own clock (``TIME``), so the
workers' clocks need not agree.

* ``push``: a fingerprint not seen this run is queued with its serialised request.
* ``take``: first the expired leases (a worker died, or stopped renewing) go back to the
  front of the queue; then up to ``n`` requests move from the queue to the leases,
  with a deadline ``lease_seconds`` ahead and this worker as owner. A request taken
  ``max_deliveries`` times without an acknowledgement is set aside in ``dead`` (a page
  that kills every worker that takes it must not stop the job).
* ``ack``: the page is done (parsed, its items delivered): lease and request go.
* ``hand_off``: the page is parsed and its items are in the index stage's buffer: they
  go to this worker's outbox (``outbox``) and the lease is acknowledged, in one script.
  A worker killed from then on costs the page no fetch: another worker delivers the
  items from the outbox.
* ``renew``: push the deadline of this worker's leases forward (long pages, backpressure).
  It also names the pages this worker has parsed since its last renewal: their take no
  longer counts towards ``max_deliveries``. A page that was parsed cannot be what killed
  its worker, and with a slow index most of a killed worker's leases are such pages,
  waiting for their delivery: counted, the same pages went from one killed worker to
  the next until they were set aside, and were never indexed.
* A silence: when no worker took or renewed for a whole lease (Redis restarted, or the
  network to it was cut), the first ``take`` or ``renew`` after it gives every lease a
  fresh ``lease_seconds`` instead of letting them all expire at once: the workers that
  hold them are most likely alive and renew them within a third of that. (Leases of a
  worker that died meanwhile come back one lease later.)
* ``release``: a worker stopping (drain) puts its unfinished leases back at the front.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.keys import JobKeys
from scholarindex.distributed.outbox import KEEP_SECONDS

# Redis's clock in milliseconds, inside a script.
_NOW = "local t = redis.call('TIME'); local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

_PUSH = """
local added = 0
for i = 1, #ARGV, 3 do
  local fp, payload, force = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('SADD', KEYS[1], fp) == 1 or force == '1' then
    if redis.call('HSETNX', KEYS[3], fp, payload) == 1 then
      redis.call('RPUSH', KEYS[2], fp)
      added = added + 1
    end
  end
end
return added
"""

# After a silence of a whole lease (KEYS[clock], ARGV[lease ms]) every lease gets a fresh one.
def _after_silence(clock: int, leases: int, lease_ms: int) -> str:
    return f"""
local last = tonumber(redis.call('GET', KEYS[{clock}]) or '0')
local lease = tonumber(ARGV[{lease_ms}])
if last > 0 and now - last > lease then
  local all = redis.call('ZRANGE', KEYS[{leases}], 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now + lease then
      redis.call('ZADD', KEYS[{leases}], now + lease, all[i])
    end
  end
end
redis.call('SET', KEYS[{clock}], now)
"""


# KEYS: queue, leases, requests, owners, deliveries, dead, clock
# ARGV: n, lease ms, worker, max deliveries
_TAKE = _NOW + _after_silence(7, 2, 2) + """
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
for i = #expired, 1, -1 do
  local fp = expired[i]
  redis.call('ZREM', KEYS[2], fp)
  redis.call('HDEL', KEYS[4], fp)
  redis.call('LPUSH', KEYS[1], fp)
end
local out = {}
local n = tonumber(ARGV[1])
local taken = 0
while taken < n do
  local fp = redis.call('LPOP', KEYS[1])
  if not fp then break end
  local payload = redis.call('HGET', KEYS[3], fp)
  if payload then
    if redis.call('HINCRBY', KEYS[5], fp, 1) > tonumber(ARGV[4]) then
      redis.call('HSET', KEYS[6], fp, payload)
      redis.call('HDEL', KEYS[3], fp)
      redis.call('HDEL', KEYS[5], fp)
    else
      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), fp)
      redis.call('HSET', KEYS[4], fp, ARGV[3])
      out[#out + 1] = fp
      out[#out + 1] = payload
      taken = taken + 1
    end
  end
end
return {#expired, out}
"""

# KEYS: leases, requests, owners, deliveries, done; ARGV: worker, fingerprints...
_ACK = """
local acked = 0
for i = 2, #ARGV do
  local fp = ARGV[i]
  acked = acked + redis.call('HDEL', KEYS[2], fp)
  redis.call('ZREM', KEYS[1], fp)
  redis.call('HDEL', KEYS[3], fp)
  redis.call('HDEL', KEYS[4], fp)
end
if acked > 0 then redis.call('HINCRBY', KEYS[5], ARGV[1], acked) end
return acked
"""

# KEYS: leases, requests, owners, deliveries, done, outbox;
# ARGV: worker, keep seconds, fingerprint, payload, fingerprint, payload...
_HAND_OFF = """
local acked = 0
for i = 3, #ARGV, 2 do
  local fp = ARGV[i]
  redis.call('HSET', KEYS[6], fp, ARGV[i + 1])
  acked = acked + redis.call('HDEL', KEYS[2], fp)
  redis.call('ZREM', KEYS[1], fp)
  redis.call('HDEL', KEYS[3], fp)
  redis.call('HDEL', KEYS[4], fp)
end
redis.call('EXPIRE', KEYS[6], ARGV[2])
if acked > 0 then redis.call('HINCRBY', KEYS[5], ARGV[1], acked) end
return acked
"""

# KEYS: leases, owners, clock, deliveries;
# ARGV: lease ms, worker, n parsed, the n parsed fingerprints..., fingerprints to renew...
_RENEW = _NOW + _after_silence(3, 1, 1) + """
local parsed = tonumber(ARGV[3])
for i = 4, 3 + parsed do
  local fp = ARGV[i]
  if redis.call('HGET', KEYS[2], fp) == ARGV[2]
      and tonumber(redis.call('HGET', KEYS[4], fp) or '0') > 0 then
    redis.call('HINCRBY', KEYS[4], fp, -1)
  end
end
local renewed = 0
for i = 4 + parsed, #ARGV do
  local fp = ARGV[i]
  if redis.call('HGET', KEYS[2], fp) == ARGV[2] then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), fp)
    renewed = renewed + 1
  end
end
return renewed
"""

# KEYS: queue, leases, owners, deliveries; ARGV: worker, fingerprints...
_RELEASE = """
local released = 0
for i = #ARGV, 2, -1 do
  local fp = ARGV[i]
  if redis.call('HGET', KEYS[3], fp) == ARGV[1] then
    redis.call('ZREM', KEYS[2], fp)
    redis.call('HDEL', KEYS[3], fp)
    redis.call('HINCRBY', KEYS[4], fp, -1)
    redis.call('LPUSH', KEYS[1], fp)
    released = released + 1
  end
end
return released
"""


@dataclass(frozen=True)
class Taken:
    """Requests moved from the queue to this worker's leases."""

    requests: list[tuple[str, bytes]]  # (fingerprint, serialised request)
    reclaimed: int  # expired leases put back in the queue by this call


@dataclass(frozen=True)
class FrontierState:
    queued: int
    leased: int
    seeded: bool
    dead: int

    @property
    def idle(self) -> bool:
        """Nothing left to do: the seed list is in, nothing queued, nothing leased."""
        return self.seeded and self.queued == 0 and self.leased == 0


class Frontier:
    """The shared frontier of one job, as seen by one worker."""

    def __init__(self, link: RedisLink, keys: JobKeys, worker: str, lease_seconds: float,
                 max_deliveries: int = 5) -> None:
        self.link = link
        self.keys = keys
        self.worker = worker
        self.lease_ms = max(int(lease_seconds * 1000), 1)
        self.max_deliveries = max_deliveries
        client = link.client
        self._push = client.register_script(_PUSH)
        self._take = client.register_script(_TAKE)
        self._ack = client.register_script(_ACK)
        self._hand_off = client.register_script(_HAND_OFF)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def push(self, requests: Iterable[tuple[str, bytes, bool]]) -> int:
        """Queue ``(fingerprint, payload, force)`` requests not seen before (force: anyway,
        unless the same fingerprint is queued or leased now); returns how many were queued."""
        args: list[str | bytes] = []
        for fp, payload, force in requests:
            args += [fp, payload, "1" if force else "0"]
        if not args:
            return 0
        k = self.keys
        return int(self.link.call(
            lambda c: self._push(keys=[k.seen, k.queue, k.requests], args=args, client=c),
            "push"))

    def take(self, n: int) -> Taken:
        k = self.keys
        reclaimed, flat = self.link.call(lambda c: self._take(
            keys=[k.queue, k.leases, k.requests, k.owners, k.deliveries, k.dead, k.clock],
            args=[n, self.lease_ms, self.worker, self.max_deliveries], client=c), "take")
        pairs = [(flat[i].decode(), flat[i + 1]) for i in range(0, len(flat), 2)]
        return Taken(pairs, int(reclaimed))

    def ack(self, fingerprints: Sequence[str]) -> int:
        if not fingerprints:
            return 0
        k = self.keys
        return int(self.link.call(lambda c: self._ack(
            keys=[k.leases, k.requests, k.owners, k.deliveries, k.done],
            args=[self.worker, *fingerprints], client=c), "ack"))

    def hand_off(self, entries: Sequence[tuple[str, bytes]]) -> int:
        """Acknowledge these pages, keeping each one's outbox entry (``outbox.entry``:
        its items, handed to this worker's index stage) until ``Outbox.delivered``."""
        if not entries:
            return 0
        k = self.keys
        args: list[str | bytes | int] = [self.worker, KEEP_SECONDS]
        for fp, payload in entries:
            args += [fp, payload]
        return int(self.link.call(lambda c: self._hand_off(
            keys=[k.leases, k.requests, k.owners, k.deliveries, k.done, k.outbox(self.worker)],
            args=args, client=c), "hand off"))

    def renew(self, fingerprints: Sequence[str], parsed: Sequence[str] = ()) -> int:
        """Renew these leases of this worker (none: only tell Redis a worker is about);
        ``parsed``: leases of this worker parsed since the last call, each named once per
        take (their take is not counted towards ``max_deliveries``)."""
        k = self.keys
        return int(self.link.call(lambda c: self._renew(
            keys=[k.leases, k.owners, k.clock, k.deliveries],
            args=[self.lease_ms, self.worker, len(parsed), *parsed, *fingerprints],
            client=c), "renew"))

    def release(self, fingerprints: Sequence[str]) -> int:
        if not fingerprints:
            return 0
        k = self.keys
        return int(self.link.call(lambda c: self._release(
            keys=[k.queue, k.leases, k.owners, k.deliveries],
            args=[self.worker, *fingerprints], client=c), "release"))

    def state(self) -> FrontierState:
        k = self.keys

        def read(c):
            pipe = c.pipeline(transaction=True)
            pipe.llen(k.queue).zcard(k.leases).hget(k.record, "seeded").hlen(k.dead)
            return pipe.execute()

        queued, leased, seeded, dead = self.link.call(read, "state")
        return FrontierState(int(queued), int(leased), seeded in (b"1", "1"), int(dead))

    def mark_seeded(self) -> None:
        self.link.call(lambda c: c.hset(self.keys.record, "seeded", "1"), "mark seeded")

    def seeded(self) -> bool:
        return self.link.call(lambda c: c.hget(self.keys.record, "seeded"), "seeded") \
            in (b"1", "1")
