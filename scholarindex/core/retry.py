"""When to try a request again, and how long to wait: one policy for every dependency.

OpenSearch, arXiv and the crawled sites fail in the same ways: overloaded (429),
restarting (500, 502, 503, 504), timing out (408). Those statuses, dropped
connections and timeouts are worth another try after a backoff; anything else
(400, 401, 403, 404, a rejected document) is not, because the same request gets
the same answer. Waits grow exponentially from ``initial_wait`` (doubling) up to
``max_wait``, with up to ``jitter`` seconds added at random so many clients do not
retry in step.

A server that says how long to wait (``Retry-After`` on a 429 or 503) is obeyed:
the wait is the longer of the backoff and its ``Retry-After``, the latter capped at
``retry_after_max`` so a server asking for an hour cannot stall a run (0: ignored).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from tenacity import RetryCallState
from tenacity.stop import stop_after_attempt, stop_base
from tenacity.wait import wait_base

from scholarindex.core.settings import read_setting

# Statuses worth another try: the server is overloaded, restarting or timed out.
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def is_retryable_status(status: Any) -> bool:
    """Whether an HTTP status (or a missing one: no answer at all) is worth retrying."""
    return not isinstance(status, int) or status in RETRYABLE_STATUSES


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or HTTP-date); None: unreadable.

    A date in the past means "now" (0). ``now`` (epoch seconds) is for tests.
    """
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT; a malformed one may lack the zone
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass(frozen=True)
class RetryPolicy:
    """How many tries, and the backoff between them."""

    attempts: int  # tries in all, the first one included
    initial_wait: float  # seconds before the first retry
    max_wait: float  # cap of the exponential part of one wait
    jitter: float  # up to this many seconds added at random to each wait
    retry_after_max: float = 0.0  # longest Retry-After obeyed, seconds; 0: ignore Retry-After

    @classmethod
    def from_settings(cls, settings: Any, prefix: str) -> RetryPolicy:
        """Read ``{prefix}_MAX_ATTEMPTS``, ``{prefix}_RETRY_INITIAL_WAIT/_MAX_WAIT/_JITTER``
        and ``{prefix}_RETRY_AFTER_MAX``."""
        return cls(attempts=read_setting(settings, f"{prefix}_MAX_ATTEMPTS", int),
                   initial_wait=read_setting(settings, f"{prefix}_RETRY_INITIAL_WAIT", float),
                   max_wait=read_setting(settings, f"{prefix}_RETRY_MAX_WAIT", float),
                   jitter=read_setting(settings, f"{prefix}_RETRY_JITTER", float),
                   retry_after_max=read_setting(settings, f"{prefix}_RETRY_AFTER_MAX", float))

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"a retry policy needs at least one attempt, not {self.attempts}")

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first).

        ``initial_wait * 2**(retry - 1)``, capped at ``max_wait``, plus jitter.
        """
        exponential = self.initial_wait * 2 ** min(retry - 1, 62)
        return min(exponential, self.max_wait) + random.uniform(0, self.jitter)

    def delay_after(self, retry: int, retry_after: float | None) -> float:
        """``delay(retry)``, or the server's ``Retry-After`` (capped) when that is longer."""
        backoff = self.delay(retry)
        if retry_after is None or self.retry_after_max <= 0:
            return backoff
        return max(backoff, min(retry_after, self.retry_after_max))

    def wait(self) -> wait_base:
        """The tenacity wait strategy of this policy (``delay_after``).

        The ``Retry-After`` comes from the failed attempt's exception: its
        ``retry_after`` attribute (seconds), when it has one.
        """
        return _PolicyWait(self)

    def stop(self) -> stop_base:
        """The tenacity stop strategy: after ``attempts`` tries."""
        return stop_after_attempt(self.attempts)


class _PolicyWait(wait_base):
    """A tenacity wait that asks the policy: one formula for loops and ``Retrying`` alike."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None and outcome.failed else None
        return self.policy.delay_after(retry_state.attempt_number, retry_after_of(error))


def retry_after_of(error: BaseException | None) -> float | None:
    """The ``Retry-After`` seconds an exception carries (its ``retry_after``), if any."""
    value = getattr(error, "retry_after", None)
    return float(value) if isinstance(value, (int, float)) else None
