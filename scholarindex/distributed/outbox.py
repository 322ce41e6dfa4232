"""Pages handed to a worker's index stage and not yet delivered, kept in Redis, so that
a worker that dies costs the job its pages in the downloader and the parser, not the
pages waiting for the index.

A page is acknowledged once its items are safe. Before, that meant "in OpenSearch": a
parsed page waited for its index flush with its lease held, so a worker killed while
the index was slow (a bulk in flight, an outage, a node's death) left every page it had
parsed to be fetched again, up to ``REDIS_MAX_UNACKED`` a kill. Now the page's items,
as they left the pipelines before the index stage, go into the worker's own hash,
``{prefix}job:{name}:outbox:{worker}``, in the same script that acknowledges the lease
(``Frontier.hand_off``): from then on the items are what is at risk, not the fetch. The
entry goes once the flush carrying the items is delivered (``delivered``).

``adopt`` (one script, as ``lookups``): the entries of workers whose heartbeat lapsed
(``ADOPT_GRACE_SECONDS`` ago at least) move into the caller's hash, at most
``ADOPT_LIMIT`` a call, and the caller's index stage delivers their items and its arXiv
stage looks up the works they queued; it also says how many workers still hold entries
it did not adopt (the job is not over while one of them might die, or is left).
Delivering an entry twice (the dead worker's last flush may have carried it) changes
nothing: the merge is idempotent. An entry adopted ``max_adoptions`` times is set aside in the job's
``dead`` hash, as a page taken that many times is: items that kill every worker that
indexes them must not stop the job. A worker that ends cleanly deletes its hash
(``clear``): its pipelines have delivered everything by then.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.keys import JobKeys

# A hash outlives its worker this long at most (a job never resumed): not for ever.
KEEP_SECONDS = 7 * 24 * 3600

# A worker's outbox (and its arXiv lookups, ``lookups``) is adopted only once its
# heartbeat has lapsed this long: a worker alive but starved of CPU (a loaded machine, a
# long collection, a large flush on its reactor) misses its renewals for seconds, and
# adopting its outbox then has two workers deliver the same pages; repeated, the pages
# were set aside as if they killed their workers (seen in the soak, heartbeats of 3 s).
# Lookups adopted at once went round the live workers: 6,447 works adopted 18 times in
# 92 s in the soak, each time looked up again and their answers written again, the
# index flushes minutes long under them. A lease expiring early costs a fetch; an
# outbox or lookups adopted early cost far more. Only the end of the job waits for it.
ADOPT_GRACE_SECONDS = 30.0

# Pages adopted in one call at most: the adopter unpickles them and buffers their
# changes on its reactor, which must not stop for seconds (its own heartbeat would lapse).
ADOPT_LIMIT = 100

# KEYS: workers, heartbeats, the caller's hash, adoptions, dead;
# ARGV: hash prefix, caller, keep seconds, max adoptions, limit, grace ms.
# Returns {workers holding entries not adopted by this call (alive, within the grace, or
# past the limit), fingerprint, payload, fingerprint, payload...}.
_ADOPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local holding = 0
local room = tonumber(ARGV[5])
local adopted = {}
for _, worker in ipairs(redis.call('HKEYS', KEYS[1])) do
  local key = ARGV[1] .. worker
  if worker ~= ARGV[2] and redis.call('EXISTS', key) == 1 then
    local until_ms = redis.call('ZSCORE', KEYS[2], worker)
    if (until_ms and tonumber(until_ms) + tonumber(ARGV[6]) >= now) or room <= 0 then
      holding = holding + 1
    else
      local fps = redis.call('HKEYS', key)
      for i = 1, math.min(#fps, room) do
        local fp = fps[i]
        local payload = redis.call('HGET', key, fp)
        redis.call('HDEL', key, fp)
        room = room - 1
        if redis.call('HINCRBY', KEYS[4], fp, 1) > tonumber(ARGV[4]) then
          redis.call('HSET', KEYS[5], fp, payload)
          redis.call('HDEL', KEYS[4], fp)
        else
          redis.call('HSET', KEYS[3], fp, payload)
          adopted[#adopted + 1] = fp
          adopted[#adopted + 1] = payload
        end
      end
      redis.call('EXPIRE', KEYS[3], ARGV[3])
      if redis.call('EXISTS', key) == 1 then holding = holding + 1 end
    end
  end
end
table.insert(adopted, 1, holding)
return adopted
"""


def entry(url: str, items: Sequence[Any]) -> bytes:
    """An outbox entry: the page's URL (what ``dead`` shows for an entry set aside, as for
    a request) and its items as the index stage got them."""
    return pickle.dumps({"url": url, "items": list(items)}, protocol=pickle.HIGHEST_PROTOCOL)


def items_of(payload: bytes) -> list[Any]:
    return list(pickle.loads(payload)["items"])


class Outbox:
    """One worker's pages handed to its index stage, and the adoption of a dead worker's."""

    def __init__(self, link: RedisLink, keys: JobKeys, worker: str,
                 max_adoptions: int = 5, grace_seconds: float = ADOPT_GRACE_SECONDS) -> None:
        self.link = link
        self.keys = keys
        self.worker = worker
        self.key = keys.outbox(worker)
        self.max_adoptions = max_adoptions
        self.grace_ms = int(grace_seconds * 1000)
        self._adopt = link.client.register_script(_ADOPT)

    def delivered(self, fingerprints: Sequence[str]) -> None:
        """These pages' items are in the index (or dead-lettered)."""
        if not fingerprints:
            return

        def forget(c):
            c.pipeline(transaction=True).hdel(self.key, *fingerprints) \
                .hdel(self.keys.adoptions, *fingerprints).execute()
        self.link.call(forget, "outbox delivered")

    def adopt(self, limit: int = ADOPT_LIMIT) -> tuple[int, dict[str, bytes]]:
        """(workers whose entries this call left: alive, dead for less than the grace, or
        past ``limit``; up to ``limit`` entries of dead workers, now this worker's:
        fingerprint -> payload)."""
        k = self.keys
        result = self.link.call(lambda c: self._adopt(
            keys=[k.workers, k.heartbeats, self.key, k.adoptions, k.dead],
            args=[k.outbox(""), self.worker, KEEP_SECONDS, self.max_adoptions, limit,
                  self.grace_ms], client=c),
            "adopt outbox")
        flat = result[1:]
        return int(result[0]), {flat[i].decode(): flat[i + 1] for i in range(0, len(flat), 2)}

    def clear(self) -> None:
        self.link.call(lambda c: c.delete(self.key), "clear outbox")

    def held(self) -> set[str]:
        """The pages this worker holds in its outbox (for tests and status)."""
        return {fp.decode() if isinstance(fp, bytes) else fp
                for fp in self.link.call(lambda c: c.hkeys(self.key), "outbox")}
