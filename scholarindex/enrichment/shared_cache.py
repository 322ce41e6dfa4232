"""The lookup cache shared by every worker of a distributed crawl (``REDIS_URL``).

In front of each machine's SQLite cache (``cache.LookupCache``), a Redis hash
``{REDIS_KEY_PREFIX}arxiv:lookups`` holds every answer any worker got from arXiv:
title key -> JSON (candidates, found, reason, fetched_at, expires_at). A title one
worker looked up is not looked up again by another: a local miss is read from Redis
(and copied into the local cache), and every answer is written to both. The hash
itself expires ``hit_ttl`` after its last write; each entry carries its own expiry
(a miss lives ``miss_ttl``), checked when read.

Single flight: a worker about to ask arXiv for titles first claims them
(``claim``: ``{REDIS_KEY_PREFIX}arxiv:asking:KEY``, set if absent, for ``hold``
seconds); titles another worker is asking for right now are left to it, and their
answers are read from the hash when it has them (``wait_for``). So two workers that
meet the same new title at the same moment make one request, not two. A claim
outlives a worker that died holding it by ``hold`` at most; a title still unanswered
then is asked by the waiting worker itself.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from scholarindex.distributed.connection import RedisLink
from scholarindex.enrichment.cache import CachedLookup, LookupCache


class SharedLookupCache:
    """``LookupCache``'s ``get_many``/``get``/``put_many``/``put``, shared through Redis."""

    def __init__(self, local: LookupCache, link: RedisLink, prefix: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.local = local
        self.link = link
        self.key = f"{prefix}arxiv:lookups"
        self.asking_prefix = f"{prefix}arxiv:asking:"
        self._token = uuid.uuid4().hex  # this worker's claims
        self._release = link.client.register_script(_RELEASE)
        self._clock = clock

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedLookup]:
        wanted = list(dict.fromkeys(keys))
        found = self.local.get_many(wanted)
        missing = [k for k in wanted if k not in found]
        if not missing:
            return found
        values = self.link.call(lambda c: c.hmget(self.key, missing), "shared lookups")
        now = self._clock()
        copied = []
        for key, raw in zip(missing, values, strict=True):
            if raw is None:
                continue
            entry = json.loads(raw)
            if entry["expires_at"] <= now:
                continue
            found[key] = CachedLookup(key, entry["candidates"], bool(entry["found"]),
                                      entry["reason"], entry["fetched_at"])
            copied.append((key, entry["candidates"], bool(entry["found"]), entry["reason"]))
        if copied:
            self.local.put_many(copied)
        return found

    def get(self, key: str) -> CachedLookup | None:
        return self.get_many([key]).get(key)

    def put_many(self, rows: Iterable[tuple[str, list[dict], bool, str]]) -> None:
        rows = list(rows)
        if not rows:
            return
        self.local.put_many(rows)
        now = self._clock()
        mapping = {
            key: json.dumps({"candidates": candidates, "found": found, "reason": reason,
                             "fetched_at": now,
                             "expires_at": now + (self.local.hit_ttl if found
                                                  else self.local.miss_ttl)})
            for key, candidates, found, reason in rows}
        ttl = int(max(self.local.hit_ttl, self.local.miss_ttl))

        def write(c):
            c.pipeline(transaction=False).hset(self.key, mapping=mapping) \
                .expire(self.key, ttl).execute()
        self.link.call(write, "share lookups")

    def put(self, key: str, candidates: list[dict], found: bool, reason: str = "") -> None:
        self.put_many([(key, candidates, found, reason)])


    def claim(self, keys: list[str], hold: float) -> tuple[list[str], list[str]]:
        """(keys this worker now asks arXiv for, keys another worker is asking for)."""
        if not keys:
            return [], []
        hold_ms = max(int(hold * 1000), 1)

        def set_all(c):
            pipe = c.pipeline(transaction=False)
            for key in keys:
                pipe.set(self._asking(key), self._token, nx=True, px=hold_ms)
            return pipe.execute()
        claimed = self.link.call(set_all, "claim lookups")
        mine = [k for k, ok in zip(keys, claimed, strict=True) if ok]
        return mine, [k for k, ok in zip(keys, claimed, strict=True) if not ok]

    def release(self, keys: list[str]) -> None:
        """Drop this worker's claims on ``keys`` (their answers are in the hash now)."""
        if not keys:
            return
        self.link.call(lambda c: self._release(keys=[self._asking(k) for k in keys],
                                               args=[self._token], client=c), "release lookups")

    def wait_for(self, keys: list[str], timeout: float,
                 stop: threading.Event | None = None) -> list[str]:
        """Wait until another worker's answers for ``keys`` are in; the keys still
        unanswered after ``timeout`` (or when a claim lapsed with no answer)."""
        stop = stop or threading.Event()
        deadline = time.monotonic() + timeout
        left = list(keys)
        while left:
            found = self.get_many(left)
            left = [k for k in left if k not in found]
            if not left or time.monotonic() >= deadline:
                break
            claims = [self._asking(k) for k in left]
            held = self.link.call(partial(_existing, claims), "lookup claims")
            if not held:  # the asker gave up or died: the rest is ours to ask
                left = [k for k in left if k not in self.get_many(left)]
                break
            if stop.wait(0.1):
                break
        return left

    def _asking(self, key: str) -> str:
        return f"{self.asking_prefix}{key}"


# KEYS: claims; ARGV: token. Deletes only the claims this worker holds.
_RELEASE = """
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then n = n + redis.call('DEL', KEYS[i]) end
end
return n
"""


def shared_cache(local: LookupCache, redis_url: str, prefix: str,
                 retry_seconds: float) -> SharedLookupCache:
    return SharedLookupCache(local, RedisLink(redis_url, retry_seconds), prefix)


def _existing(keys: list[str], c: Any) -> int:
    """How many of ``keys`` exist (one EXISTS)."""
    return int(c.exists(*keys))
