"""The scheduler's bookkeeping without Redis or a reactor: one call of a kind in flight
(``SingleFlight``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from crawler.distributed.calls import RedisCalls
from crawler.distributed.singleflight import SingleFlight

T = TypeVar("T")


# --- SingleFlight -----------------------------------------------------------------------


class HeldCalls(RedisCalls):
    """Calls that end when the test fires them."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[Deferred[Any]] = []

    def run(self, fn: Callable[..., T], *args: Any) -> Deferred[T]:
        d: Deferred[T] = Deferred()
        self.pending.append(d)
        return d


def test_a_single_flight_is_over_for_the_callbacks_so_they_may_start_the_next() -> None:
    calls = HeldCalls()
    flight = SingleFlight(calls)
    assert not flight.busy and flight.call is None
    seen: list[tuple[Any, bool]] = []
    d = flight.run(lambda: None)
    assert flight.busy and flight.call is d
    d.addCallback(lambda result: seen.append((result, flight.busy)))
    calls.pending[0].callback("ok")
    assert seen == [("ok", False)] and flight.call is None
    flight.run(lambda: None)
    with pytest.raises(AssertionError):
        flight.run(lambda: None)  # the caller asks busy first


def test_a_single_flight_that_failed_is_over_too() -> None:
    calls = HeldCalls()
    flight = SingleFlight(calls)
    failures: list[Failure] = []

    def failed(failure: Failure) -> None:
        failures.append(failure)
    flight.run(lambda: None).addErrback(failed)
    calls.pending[0].errback(RuntimeError("down"))
    assert not flight.busy and len(failures) == 1
