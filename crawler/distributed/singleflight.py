"""One Redis call of a kind in flight at a time (a take, an acknowledgement, a renewal,
an idle check): while Redis is slow or away, the next of a kind is not put in line
behind the last, and what it would carry goes with a later one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from twisted.internet.defer import Deferred

T = TypeVar("T")


class Calls(Protocol):
    """``calls.RedisCalls`` (not imported: importing it installs the reactor)."""

    def run(self, fn: Callable[..., T], *args: Any) -> Deferred[T]: ...


class SingleFlight:
    def __init__(self, calls: Calls) -> None:
        self._calls = calls
        self.call: Deferred[Any] | None = None  # the call in flight

    @property
    def busy(self) -> bool:
        return self.call is not None

    def run(self, fn: Callable[..., T], *args: Any) -> Deferred[T]:
        """``fn(*args)`` on the Redis thread (``RedisCalls.run``). The call is over for
        the callbacks the caller adds: they may start the next one."""
        assert self.call is None, "a call of this kind is in flight"
        d = self._calls.run(fn, *args)
        self.call = d

        def ended(result: Any) -> Any:
            self.call = None
            return result
        d.addBoth(ended)
        return d
