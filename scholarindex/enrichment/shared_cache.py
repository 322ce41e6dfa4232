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
meet the same new title at the same moment make one request, not two. A claim is
short (``CLAIM_SECONDS``) and kept alive by a thread of the claiming worker while it
asks, so a claim of a worker that died lapses within seconds, not after the request's
whole time-out; a waiting worker asks itself for the titles whose claim lapsed
unanswered, and for all of them once it has waited ``hold`` seconds (a live worker
stuck on its request).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from scholarindex.distributed.connection import RedisLink, RedisUnavailable
from scholarindex.enrichment.cache import CachedLookup, LookupCache

CLAIM_SECONDS = 6.0  # a claim's life; renewed every third of it while its worker asks


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
        self._renew = link.client.register_script(_RENEW)
        self._clock = clock
        self._claimed: set[str] = set()  # claims held now, kept alive by ``_keep_claims``
        self._claims_lock = threading.Lock()
        self._keeper: threading.Thread | None = None

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
        hold_ms = max(int(min(hold, CLAIM_SECONDS) * 1000), 1)

        def set_all(c):
            pipe = c.pipeline(transaction=False)
            for key in keys:
                pipe.set(self._asking(key), self._token, nx=True, px=hold_ms)
            return pipe.execute()
        claimed = self.link.call(set_all, "claim lookups")
        mine = [k for k, ok in zip(keys, claimed, strict=True) if ok]
        if mine:
            self._keep(mine, hold_ms)
        return mine, [k for k, ok in zip(keys, claimed, strict=True) if not ok]

    def _keep(self, keys: list[str], hold_ms: int) -> None:
        """Keep these claims alive until released (one thread, gone when none is held)."""
        with self._claims_lock:
            self._claimed.update(keys)
            if self._keeper is None or not self._keeper.is_alive():
                self._keeper = threading.Thread(target=self._keep_claims, args=(hold_ms,),
                                                name="arxiv-claims", daemon=True)
                self._keeper.start()

    def _keep_claims(self, hold_ms: int) -> None:
        while True:
            time.sleep(hold_ms / 3000)
            with self._claims_lock:
                claims = [self._asking(k) for k in self._claimed]
                if not claims:
                    self._keeper = None
                    return
            try:
                self.link.call(partial(self._renew_claims, claims, hold_ms), "keep claims")
            except RedisUnavailable:  # the claims lapse: other workers ask
                return


    def _renew_claims(self, claims: list[str], hold_ms: int, client: Any) -> Any:
        return self._renew(keys=claims, args=[self._token, hold_ms], client=client)
    def release(self, keys: list[str]) -> None:
        """Drop this worker's claims on ``keys`` (their answers are in the hash now)."""
        if not keys:
            return
        with self._claims_lock:
            self._claimed.difference_update(keys)
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

            def exist(c: Any, claims: list[str] = claims) -> list[Any]:
                pipe = c.pipeline(transaction=False)
                for claim in claims:
                    pipe.exists(claim)
                return pipe.execute()
            held = self.link.call(exist, "lookup claims")
            if not all(held):  # an asker gave up or died: what it left is ours to ask
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


# KEYS: claims; ARGV: token, ms. Keeps alive only the claims this worker holds.
_RENEW = """
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then n = n + redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
return n
"""


def shared_cache(local: LookupCache, redis_url: str, prefix: str,
                 retry_seconds: float) -> SharedLookupCache:
    return SharedLookupCache(local, RedisLink(redis_url, retry_seconds), prefix)
