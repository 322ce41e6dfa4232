"""One receiver of Scrapy's item signals for the project's extensions that watch every item.

Scrapy sends ``item_scraped``, ``item_dropped`` and ``item_error`` with
``send_catch_log_async``, which runs each receiver in an asyncio task of its own, on
the reactor thread, for every page (measured in docs/performance.md). The record counts
(``records.RecordCounts``) and the run report's distinct works (``report.RunReport``)
register plain callbacks with this extension instead (``watch_items``, once the engine
starts: ``crawler.get_extension``), and it is the one receiver they cost.
A callback that raises is logged, as Scrapy logs a receiver's error, and the others
still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

ITEM_SIGNALS = (signals.item_scraped, signals.item_dropped, signals.item_error)


def watch_items(crawler: Crawler, callback: Callable[..., None], *item_signals: object) -> None:
    """Call ``callback`` on each of ``item_signals``: through the ``ItemSignals`` extension
    when it is enabled, else as a receiver of Scrapy's own."""

    def attach() -> None:
        hub = crawler.get_extension(ItemSignals)
        for signal in item_signals:
            if hub is None:
                crawler.signals.connect(callback, signal=signal)
            else:
                hub.connect(callback, signal)

    crawler.signals.connect(attach, signal=signals.engine_started, weak=False)


class ItemSignals:
    """Extension: callbacks by item signal; each is called with the signal's keyword
    arguments."""

    def __init__(self, crawler: Crawler) -> None:
        self._callbacks: dict[object, list[Callable[..., None]]] = {s: [] for s in ITEM_SIGNALS}
        for signal in ITEM_SIGNALS:
            crawler.signals.connect(self._receiver(signal), signal=signal, weak=False)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ItemSignals:
        return cls(crawler)

    def connect(self, callback: Callable[..., None], signal: object) -> None:
        """Call ``callback(item=..., response=..., spider=..., [exception|failure]=...)``."""
        self._callbacks[signal].append(callback)

    def _receiver(self, signal: object) -> Callable[..., None]:
        callbacks = self._callbacks[signal]

        def receive(**kwargs: Any) -> None:
            kwargs.pop("signal", None)  # pydispatch's own arguments
            kwargs.pop("sender", None)
            for callback in callbacks:
                try:
                    callback(**kwargs)
                except Exception:
                    logger.error("Error caught on signal handler: %s", callback, exc_info=True)

        return receive
