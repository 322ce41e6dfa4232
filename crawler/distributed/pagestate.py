"""Page state per job, not per machine: ``crawler.state.PageStateStore``'s interface on Redis.

With ``REDIS_URL`` the incremental middleware keeps the page state of the job in Redis,
so a page fetched by another machine than last time is still asked conditionally and
recognised as unchanged. Keys, under the job's (``scholarindex.distributed.keys``):

    job:NAME:pages:TARGET                    hash url -> JSON (hash, etag, last_modified)
    job:NAME:pending:TARGET:RUN:WORKER       hash url -> JSON, this worker's pending entries

Pending entries are per worker: each worker commits its own at its own verdict, so a
worker whose run went well never commits pages another worker may still lose. A
worker that died leaves its pending entries uncommitted (its pages are redone by
others, which record their own); the next run drops them as stale.
"""

from __future__ import annotations

import json
from typing import Any

from crawler.state import PageState
from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.keys import JobKeys

# KEYS: pending, committed. Promote every pending entry, then drop the pending hash.
_COMMIT = """
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do redis.call('HSET', KEYS[2], entries[i], entries[i + 1]) end
redis.call('DEL', KEYS[1])
return #entries / 2
"""


class RedisPageStateStore:
    """Committed and pending page states of one job, shared by its workers through Redis."""

    def __init__(self, link: RedisLink, keys: JobKeys, target: str, worker: str) -> None:
        self.link = link
        self.committed_key = f"{keys.record}:pages:{target}"
        self.pending_prefix = f"{keys.record}:pending:{target}:"
        self.path = f"Redis key {self.committed_key}"  # named in the log line
        self.worker = worker
        self._run_id = ""
        self._commit = link.client.register_script(_COMMIT)

    def _pending(self, run_id: str) -> str:
        return f"{self.pending_prefix}{run_id}:{self.worker}"

    def committed(self, url: str) -> PageState | None:
        raw = self.link.call(lambda c: c.hget(self.committed_key, url), "page state")
        if raw is None:
            return None
        entry: dict[str, Any] = json.loads(raw)
        return PageState(url, entry["hash"], entry["etag"], entry["last_modified"])

    def record_pending(self, run_id: str, url: str, hash: str, etag: str | None,
                       last_modified: str | None) -> None:
        value = json.dumps({"hash": hash, "etag": etag, "last_modified": last_modified})
        self.link.call(lambda c: c.hset(self._pending(run_id), url, value), "record page state")

    def discard_pending(self, url: str) -> None:
        self.link.call(lambda c: c.hdel(self._pending(self._run_id), url), "discard page state")

    def drop_stale_pending(self, run_id: str) -> int:
        """Forget the pending entries of other runs (any worker); returns how many."""
        self._run_id = run_id

        def drop(c):
            dropped = 0
            for key in c.scan_iter(match=f"{self.pending_prefix}*", count=500):
                name = key.decode() if isinstance(key, bytes) else key
                if name[len(self.pending_prefix):].split(":", 1)[0] != run_id:
                    dropped += c.hlen(name)
                    c.delete(name)
            return dropped
        return int(self.link.call(drop, "drop stale page state"))

    def pending_count(self, run_id: str) -> int:
        return int(self.link.call(lambda c: c.hlen(self._pending(run_id)), "page state"))

    def commit(self, run_id: str) -> int:
        keys = [self._pending(run_id), self.committed_key]
        return int(self.link.call(lambda c: self._commit(keys=keys, client=c), "commit pages"))

    def close(self) -> None:
        self.link.close()
