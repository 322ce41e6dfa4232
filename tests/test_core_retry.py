"""The one retry rule: which statuses are worth another try, and how long to wait."""

import pytest
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from scholarindex.core.retry import RetryPolicy, is_retryable_status, parse_retry_after


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504, None, "N/A"])
def test_overload_restarts_timeouts_and_no_answer_are_retried(status: object) -> None:
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [200, 400, 401, 403, 404, 409, 413, 501])
def test_the_same_request_would_get_the_same_answer(status: int) -> None:
    assert not is_retryable_status(status)


def _waits(policy: RetryPolicy, retries: int) -> list[float]:
    wait = policy.wait()
    states = []
    for number in range(1, retries + 1):
        state = RetryCallState(Retrying(), None, (), {})
        state.attempt_number = number
        states.append(state)
    return [wait(state) for state in states]


def test_the_wait_doubles_from_the_initial_wait_and_is_capped() -> None:
    policy = RetryPolicy(attempts=8, initial_wait=0.5, max_wait=3.0, jitter=0)
    assert _waits(policy, 6) == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_jitter_adds_at_most_its_own_length() -> None:
    policy = RetryPolicy(attempts=8, initial_wait=1.0, max_wait=4.0, jitter=0.5)
    for _ in range(50):
        waits = _waits(policy, 5)
        for exact, waited in zip([1.0, 2.0, 4.0, 4.0, 4.0], waits, strict=True):
            assert exact <= waited <= exact + 0.5


def test_it_stops_after_its_attempts() -> None:
    policy = RetryPolicy(attempts=3, initial_wait=0.1, max_wait=1.0, jitter=0)
    calls: list[int] = []
    slept: list[float] = []

    def fail() -> None:
        calls.append(1)
        raise ConnectionError("down")

    retrying = Retrying(stop=policy.stop(), wait=policy.wait(), sleep=slept.append,
                        retry=retry_if_exception_type(ConnectionError), reraise=True)
    with pytest.raises(ConnectionError):
        retrying(fail)
    assert len(calls) == 3
    assert slept == [0.1, 0.2]


def test_a_policy_needs_one_attempt() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0, initial_wait=1, max_wait=1, jitter=0)


@pytest.mark.parametrize(("header", "seconds"), [
    ("120", 120.0), (" 0 ", 0.0),
    ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),  # 30 s after NOW
    ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past: at once
    (None, None), ("", None), ("soon", None), ("-5", None), ("1.5", None),
])
def test_retry_after_is_delta_seconds_or_an_http_date(header: str | None,
                                                      seconds: float | None) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert parse_retry_after(header, now=now) == seconds


class _Refused(Exception):
    def __init__(self, retry_after: float | None) -> None:
        super().__init__("429")
        self.retry_after = retry_after


def test_retry_after_longer_than_the_backoff_wins_up_to_its_cap() -> None:
    policy = RetryPolicy(attempts=5, initial_wait=1.0, max_wait=4.0, jitter=0,
                         retry_after_max=10.0)
    assert policy.delay_after(1, None) == 1.0
    assert policy.delay_after(1, 0.2) == 1.0  # shorter than the backoff: the backoff
    assert policy.delay_after(1, 7.0) == 7.0
    assert policy.delay_after(1, 3600.0) == 10.0  # capped
    off = RetryPolicy(attempts=5, initial_wait=1.0, max_wait=4.0, jitter=0)
    assert off.delay_after(1, 7.0) == 1.0  # retry_after_max 0: ignored


def test_the_tenacity_wait_reads_retry_after_from_the_failure() -> None:
    policy = RetryPolicy(attempts=3, initial_wait=0.1, max_wait=1.0, jitter=0,
                         retry_after_max=5.0)
    answers = iter([_Refused(2.5), _Refused(None)])
    slept: list[float] = []

    def fail() -> None:
        raise next(answers, _Refused(None))

    retrying = Retrying(stop=policy.stop(), wait=policy.wait(), sleep=slept.append,
                        retry=retry_if_exception_type(_Refused), reraise=True)
    with pytest.raises(_Refused):
        retrying(fail)
    assert slept == [2.5, 0.2]
