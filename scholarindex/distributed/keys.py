"""Key names of one job in Redis, all under ``REDIS_KEY_PREFIX``.

    {prefix}jobs                      set of job names (for ``scholarindex status``)
    {prefix}job:{name}                hash: definition, run_id, state, started_at,
                                      seeded, finished_at
    {prefix}job:{name}:queue          list of request fingerprints, next first
    {prefix}job:{name}:requests       hash fingerprint -> serialised request (queued or leased)
    {prefix}job:{name}:seen           set of fingerprints ever queued this run
    {prefix}job:{name}:leases         sorted set fingerprint -> lease deadline (ms, Redis clock)
    {prefix}job:{name}:owners         hash fingerprint -> worker holding the lease
    {prefix}job:{name}:deliveries     hash fingerprint -> times taken without an ack
    {prefix}job:{name}:dead           hash fingerprint -> request given up after too many takes
    {prefix}job:{name}:workers        hash worker -> JSON (host, pid, started_at)
    {prefix}job:{name}:heartbeats     sorted set worker -> alive until (ms, Redis clock)
    {prefix}job:{name}:done           hash worker -> pages acknowledged
    {prefix}job:{name}:clock          when a worker last took or renewed (ms, Redis clock)
    {prefix}job:{name}:lookups:{worker}  hash work id -> evidence of an arXiv lookup the
                                      worker has outstanding (``scholarindex.distributed.lookups``)
    {prefix}job:{name}:outbox:{worker}   hash fingerprint -> a page's items the worker has
                                      handed to its index stage, not yet delivered
                                      (``scholarindex.distributed.outbox``)
    {prefix}job:{name}:adoptions      hash fingerprint -> times an outbox entry was adopted
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JobKeys:
    prefix: str
    job: str

    def _key(self, part: str) -> str:
        return f"{self.prefix}job:{self.job}:{part}"

    @property
    def jobs(self) -> str:
        return f"{self.prefix}jobs"

    @property
    def record(self) -> str:
        return f"{self.prefix}job:{self.job}"

    @property
    def queue(self) -> str:
        return self._key("queue")

    @property
    def requests(self) -> str:
        return self._key("requests")

    @property
    def seen(self) -> str:
        return self._key("seen")

    @property
    def leases(self) -> str:
        return self._key("leases")

    @property
    def owners(self) -> str:
        return self._key("owners")

    @property
    def deliveries(self) -> str:
        return self._key("deliveries")

    @property
    def dead(self) -> str:
        return self._key("dead")

    @property
    def workers(self) -> str:
        return self._key("workers")

    @property
    def heartbeats(self) -> str:
        return self._key("heartbeats")

    @property
    def done(self) -> str:
        return self._key("done")

    @property
    def clock(self) -> str:
        return self._key("clock")

    def lookups(self, worker: str) -> str:
        return self._key(f"lookups:{worker}")

    def outbox(self, worker: str) -> str:
        return self._key(f"outbox:{worker}")

    @property
    def adoptions(self) -> str:
        return self._key("adoptions")

    def run_keys(self) -> list[str]:
        """What a new run of the job starts without (the dead letters stay)."""
        return [self.queue, self.requests, self.seen, self.leases, self.owners,
                self.deliveries, self.workers, self.heartbeats, self.done, self.clock,
                self.adoptions]
