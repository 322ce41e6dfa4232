"""The lookup cache shared by every worker of a distributed crawl (``REDIS_URL``).

In front of each machine's SQLite cache (``cache.LookupCache``), a Redis hash
``{REDIS_KEY_PREFIX}arxiv:lookups`` holds every answer any worker got from arXiv:
title key -> JSON (candidates, found, reason, fetched_at, expires_at). A title one
worker looked up is not looked up again by another: a local miss is read from Redis
(and copied into the local cache), and every answer is written to both. The hash
itself expires ``hit_ttl`` after its last write; each entry carries its own expiry
(a miss lives ``miss_ttl``), checked when read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

from distributed.connection import RedisLink
from enrichment.cache import CachedLookup, LookupCache


class SharedLookupCache:
    """``LookupCache``'s ``get_many``/``get``/``put_many``/``put``, shared through Redis."""

    def __init__(self, local: LookupCache, link: RedisLink, prefix: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.local = local
        self.link = link
        self.key = f"{prefix}arxiv:lookups"
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

        def write(c):  # type: ignore[no-untyped-def]
            c.pipeline(transaction=False).hset(self.key, mapping=mapping) \
                .expire(self.key, ttl).execute()
        self.link.call(write, "share lookups")

    def put(self, key: str, candidates: list[dict], found: bool, reason: str = "") -> None:
        self.put_many([(key, candidates, found, reason)])


def shared_cache(local: LookupCache, redis_url: str, prefix: str,
                 retry_seconds: float) -> SharedLookupCache:
    return SharedLookupCache(local, RedisLink(redis_url, retry_seconds), prefix)
