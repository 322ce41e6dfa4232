"""The arXiv lookups each worker of a job has outstanding, kept in Redis so that a
worker that dies does not take them with it.

A page is acknowledged once its items are in the index; the arXiv answers for its
works come later (the crawl never waits for arXiv) and reach the index as updates of
their own. A worker killed in between would leave those works ``pending`` for good:
the page is acknowledged, so no one redoes it. So once a page's items are delivered,
and before its acknowledgement, the worker writes the works it queued for arXiv (the
fields of their listings that the lookup takes its evidence from) into its own hash,
``{prefix}job:{name}:lookups:{worker}``, and takes each out once the answer's update is
in the index. (Not before the delivery: a worker killed then leaves the page to be done
again, and an adopted answer for a work not in the index would be dead-lettered.)

``adopt`` (one script): the hashes of workers whose heartbeat lapsed
(``ADOPT_GRACE_SECONDS`` ago at least, as for outboxes) move into the caller's, and
their evidence comes back for the caller to look up; it also says how many workers
still alive (or within the grace) hold lookups (the job is not over for a worker that
could adopt them while they might still die). A worker that ends cleanly deletes its
own hash (``clear``): its pipelines have delivered everything by then.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.keys import JobKeys
from scholarindex.distributed.outbox import ADOPT_GRACE_SECONDS

# A hash outlives its worker this long at most (a job never resumed): not for ever.
_KEEP_SECONDS = 7 * 24 * 3600

# KEYS: workers, heartbeats, the caller's hash; ARGV: hash prefix, caller, keep seconds,
# grace ms. Returns {workers alive (or within the grace) holding lookups, evidence...}.
_ADOPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local alive = 0
local adopted = {}
for _, worker in ipairs(redis.call('HKEYS', KEYS[1])) do
  local key = ARGV[1] .. worker
  if worker ~= ARGV[2] and redis.call('EXISTS', key) == 1 then
    local until_ms = redis.call('ZSCORE', KEYS[2], worker)
    if until_ms and tonumber(until_ms) + tonumber(ARGV[4]) >= now then
      alive = alive + 1
    else
      local entries = redis.call('HGETALL', key)
      for i = 1, #entries, 2 do
        redis.call('HSET', KEYS[3], entries[i], entries[i + 1])
        adopted[#adopted + 1] = entries[i + 1]
      end
      redis.call('EXPIRE', KEYS[3], ARGV[3])
      redis.call('DEL', key)
    end
  end
end
table.insert(adopted, 1, alive)
return adopted
"""


class Lookups:
    """One worker's outstanding arXiv lookups in Redis, and the adoption of a dead worker's."""

    def __init__(self, link: RedisLink, keys: JobKeys, worker: str,
                 grace_seconds: float = ADOPT_GRACE_SECONDS) -> None:
        self.link = link
        self.keys = keys
        self.worker = worker
        self.key = keys.lookups(worker)
        self.grace_ms = int(grace_seconds * 1000)
        self._adopt = link.client.register_script(_ADOPT)

    def hold(self, evidence: Mapping[str, Mapping[str, Any]]) -> None:
        """Keep these works' evidence (work id -> JSON-able mapping) until ``drop``: another
        worker looks them up if this one dies first."""
        if not evidence:
            return
        mapping = {work_id: json.dumps(value) for work_id, value in evidence.items()}

        def write(c):
            c.pipeline(transaction=True).hset(self.key, mapping=mapping) \
                .expire(self.key, _KEEP_SECONDS).execute()
        self.link.call(write, "hold lookups")

    def drop(self, work_ids: Sequence[str]) -> None:
        """These works' answers are in the index."""
        if work_ids:
            self.link.call(lambda c: c.hdel(self.key, *work_ids), "drop lookups")

    def adopt(self) -> tuple[int, list[dict[str, Any]]]:
        """(workers alive that hold lookups, the evidence of dead workers' lookups, now this
        worker's)."""
        k = self.keys
        result = self.link.call(lambda c: self._adopt(
            keys=[k.workers, k.heartbeats, self.key],
            args=[k.lookups(""), self.worker, _KEEP_SECONDS, self.grace_ms], client=c),
            "adopt lookups")
        return int(result[0]), [json.loads(raw) for raw in result[1:]]

    def clear(self) -> None:
        self.link.call(lambda c: c.delete(self.key), "clear lookups")

    def held(self) -> set[str]:
        """The works this worker holds in Redis (for tests and status)."""
        return {w.decode() if isinstance(w, bytes) else w
                for w in self.link.call(lambda c: c.hkeys(self.key), "lookups")}

