"""A job's record in Redis: who may join it, its workers, and what status shows.

The rule for one job name: while a run of the job is ``running``, a worker with the
same definition (the digest of its URL list and options) joins it; a worker with a
different definition is refused (the crawl exits 75, as a second run of a job does
on one machine). A job that ``finished`` (a worker found nothing queued and nothing
leased), or was never run, starts a new run: a new run id, an empty queue and
seen-set; but a worker that had already joined the run that finished (a slow one,
still starting up) finds it finished and has nothing to do: it does not start the
whole job again. A run whose workers all died stays ``running`` and is resumed by the next
worker of the same definition.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scholarindex.distributed.connection import RedisLink
from scholarindex.distributed.keys import JobKeys

# KEYS: record, jobs set, run keys...; ARGV: definition, new run id, now, job name,
# the run this worker joined before (or "")
_JOIN = """
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'finished' and ARGV[5] ~= '' and redis.call('HGET', KEYS[1], 'run_id') == ARGV[5] then
  return {'finished', ARGV[5]}
end
if state == 'running' then
  local definition = redis.call('HGET', KEYS[1], 'definition')
  if definition ~= ARGV[1] then return {'refused', definition or ''} end
  return {'joined', redis.call('HGET', KEYS[1], 'run_id')}
end
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('HSET', KEYS[1], 'definition', ARGV[1], 'run_id', ARGV[2], 'state', 'running',
           'started_at', ARGV[3], 'seeded', '0')
redis.call('HDEL', KEYS[1], 'finished_at')
redis.call('SADD', KEYS[2], ARGV[4])
return {'started', ARGV[2]}
"""

# KEYS: record, queue, leases; ARGV: run id, now
_FINISH = """
if redis.call('HGET', KEYS[1], 'run_id') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'seeded') ~= '1' then return 0 end
if redis.call('LLEN', KEYS[2]) > 0 or redis.call('ZCARD', KEYS[3]) > 0 then return 0 end
if redis.call('HGET', KEYS[1], 'state') == 'running' then
  redis.call('HSET', KEYS[1], 'state', 'finished', 'finished_at', ARGV[2])
end
return 1
"""

# KEYS: heartbeats, workers; ARGV: worker, alive ms, info
_HEARTBEAT = """
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""


def definition_digest(urls: Iterable[str], follow: bool) -> str:
    """What makes two workers workers of the same job: their URL list and options."""
    text = "\n".join(sorted(set(urls))) + f"\nfollow={bool(follow)}"
    return hashlib.sha1(text.encode()).hexdigest()


def worker_id() -> str:
    """This process, readably: host, pid and a random part (pids repeat across hosts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Joined:
    outcome: str  # "started" a new run, "joined" a running one, "finished" (the run joined
    # before is over), or "refused"
    run_id: str  # for "refused": the definition of the running job

    @property
    def refused(self) -> bool:
        return self.outcome == "refused"


def join(link: RedisLink, keys: JobKeys, definition: str, joined_run: str = "") -> Joined:
    """Join the job's running run, start a new run, or be refused (see the module doc).

    ``joined_run``: the run this worker joined earlier (the crawl command joins before
    Scrapy starts); if that run has finished since, the outcome is "finished".
    """
    script = link.client.register_script(_JOIN)
    outcome, value = link.call(lambda c: script(
        keys=[keys.record, keys.jobs, *keys.run_keys()],
        args=[definition, uuid.uuid4().hex, _now(), keys.job, joined_run], client=c),
        "join job")
    return Joined(outcome.decode(), value.decode())


def finish(link: RedisLink, keys: JobKeys, run_id: str) -> bool:
    """Mark the run finished if it is idle (seeded, nothing queued or leased)."""
    script = link.client.register_script(_FINISH)
    return bool(link.call(lambda c: script(
        keys=[keys.record, keys.queue, keys.leases], args=[run_id, _now()], client=c),
        "finish job"))


def heartbeat(link: RedisLink, keys: JobKeys, worker: str, alive_seconds: float,
              info: dict[str, Any]) -> None:
    script = link.client.register_script(_HEARTBEAT)
    link.call(lambda c: script(keys=[keys.heartbeats, keys.workers],
                               args=[worker, int(alive_seconds * 1000), json.dumps(info)],
                               client=c), "heartbeat")


def leave(link: RedisLink, keys: JobKeys, worker: str) -> None:
    def drop(c):
        c.pipeline(transaction=True).zrem(keys.heartbeats, worker).hdel(keys.workers, worker) \
            .execute()
    link.call(drop, "leave job")


@dataclass
class JobStatus:
    """One job as ``scholarindex status`` shows it."""

    name: str
    state: str
    run_id: str
    started_at: str
    finished_at: str
    seeded: bool
    queued: int
    leased: int
    dead: int
    workers: list[dict[str, Any]] = field(default_factory=list)  # alive, with pages done

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def job_statuses(link: RedisLink, prefix: str) -> list[JobStatus]:
    """Every job known under ``prefix``, running ones first."""
    names = sorted(_text(n) for n in link.call(lambda c: c.smembers(f"{prefix}jobs"), "jobs"))
    statuses = []
    for name in names:
        keys = JobKeys(prefix, name)

        def read(c, keys=keys):
            now_s, now_us = c.time()
            pipe = c.pipeline(transaction=False)
            pipe.hgetall(keys.record).llen(keys.queue).zcard(keys.leases).hlen(keys.dead)
            pipe.zrangebyscore(keys.heartbeats, now_s * 1000 + now_us // 1000, "+inf")
            pipe.hgetall(keys.workers).hgetall(keys.done)
            return pipe.execute()

        record, queued, leased, dead, alive, infos, done = link.call(read, "job status")
        record = {_text(k): _text(v) for k, v in record.items()}
        infos = {_text(k): _text(v) for k, v in infos.items()}
        done = {_text(k): int(v) for k, v in done.items()}
        workers = []
        for worker in (_text(w) for w in alive):
            try:
                info = json.loads(infos.get(worker) or "{}")
            except ValueError:
                info = {}
            workers.append({"worker": worker, **info, "pages_done": done.get(worker, 0)})
        statuses.append(JobStatus(
            name=name, state=record.get("state", "unknown"), run_id=record.get("run_id", ""),
            started_at=record.get("started_at", ""), finished_at=record.get("finished_at", ""),
            seeded=record.get("seeded") == "1", queued=int(queued), leased=int(leased),
            dead=int(dead), workers=workers))
    statuses.sort(key=lambda s: (s.state != "running", s.name))
    return statuses
