"""One asyncio Twisted reactor for the whole test session, in a background thread.

A Twisted reactor starts once per process and cannot be restarted, so every
in-process crawl of a session shares this one: the asyncio reactor the project
configures (``TWISTED_REACTOR``). It runs in its own daemon thread, the way
pytest-twisted runs it in a greenlet, except that the test thread never holds a
running asyncio loop: tests elsewhere that call ``asyncio.run`` or Playwright's
sync API are unaffected. ``call_in_reactor`` runs a function there and waits for
its result; threads the reactor starts (``deferToThread``) are daemons too.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from scrapy.utils.reactor import is_asyncio_reactor_installed, is_reactor_installed
from twisted.internet.defer import maybeDeferred
from twisted.python.failure import Failure
from twisted.python.log import PythonLoggingObserver

T = TypeVar("T")

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _reactor() -> Any:
    from twisted.internet import reactor  # installed by _start before this import

    return reactor


def _start() -> None:
    global _thread
    with _lock:
        if _thread is not None:
            return
        if not is_reactor_installed():
            from twisted.internet import asyncioreactor

            # A loop of the reactor's own, not set as the test thread's current loop.
            asyncioreactor.install(eventloop=asyncio.new_event_loop())
        elif not is_asyncio_reactor_installed():
            raise RuntimeError("another Twisted reactor was installed before the in-process "
                               "crawls could install the project's asyncio reactor")
        reactor = _reactor()
        # Twisted's own log messages (unhandled errors in Deferreds) to Python logging,
        # where the tests read a crawl's log, as Scrapy's configure_logging would.
        PythonLoggingObserver("twisted").start()

        def run() -> None:
            asyncio.set_event_loop(reactor._asyncioEventloop)
            reactor.run(installSignalHandlers=False)  # signals belong to the main thread

        _thread = threading.Thread(target=run, name="twisted-reactor", daemon=True)
        _thread.start()
        atexit.register(_stop)


def _stop() -> None:
    if _thread is not None and _thread.is_alive():
        _reactor().callFromThread(_reactor().stop)
        _thread.join(10)


def call_in_reactor(function: Callable[..., Any], *args: Any, timeout: float,
                    on_timeout: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` on the reactor thread; its (Deferred's) result.

    Raises what it raised, or ``TimeoutError`` after ``timeout`` seconds, having
    first called ``on_timeout`` on the reactor thread and waited a little for the
    function to wind down.
    """
    _start()
    results: queue.Queue[Any] = queue.Queue()

    def call() -> None:
        maybeDeferred(function, *args, **kwargs).addBoth(results.put)

    reactor = _reactor()
    reactor.callFromThread(call)
    try:
        result = results.get(timeout=timeout)
    except queue.Empty:
        if on_timeout is not None:
            reactor.callFromThread(on_timeout)
            with contextlib.suppress(queue.Empty):  # raise the timeout either way
                results.get(timeout=30)
        raise TimeoutError(f"{getattr(function, '__name__', function)} took over "
                           f"{timeout:g} s") from None
    if isinstance(result, Failure):
        result.raiseException()
    return result
