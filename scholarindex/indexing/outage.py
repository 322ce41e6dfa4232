"""``Outage``: the bookkeeping of one period the cluster would not take writes (pure).

The crawl's indexer pauses the crawl when the writer hands batches back
(``BulkWriter.write(hold=True)``), probes the cluster with the writer's backoff
(``scholarindex.core.retry``) and resumes when it answers; an outage that outlasts
``OPENSEARCH_OUTAGE_WAIT`` ends the run. This class only counts and decides;
the pipeline (``pipelines.index``) does the waiting and the requests.
"""

from __future__ import annotations

from dataclasses import dataclass

from scholarindex.core.retry import RetryPolicy


@dataclass
class Outage:
    """When the outage began (monotonic seconds), the probes so far, the last error."""

    started: float
    max_wait: float  # OPENSEARCH_OUTAGE_WAIT: give up once it has lasted this long
    last_error: str = ""
    probes: int = 0
    # The index refuses writes (disk flood stage) while the cluster answers: a probe must
    # find the block lifted, not only the cluster up.
    write_blocked: bool = False

    def lasted(self, now: float) -> float:
        """Seconds since it began."""
        return max(0.0, now - self.started)

    def expired(self, now: float) -> bool:
        """Whether it has lasted ``max_wait`` seconds: time to give up."""
        return self.lasted(now) >= self.max_wait

    def next_probe_in(self, policy: RetryPolicy, now: float) -> float:
        """Seconds until the next probe: the policy's backoff, never past the deadline."""
        self.probes += 1
        return max(0.0, min(policy.delay(self.probes), self.max_wait - self.lasted(now)))
