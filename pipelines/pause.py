"""Pause a running crawl and resume it: no new page fetched meanwhile.

Scrapy's ``engine.pause()`` stops the scheduler feeding the downloader, but the
requests the downloader already took (up to ``CONCURRENT_REQUESTS``, waiting out
``DOWNLOAD_DELAY`` in their slot's queue) would still be fetched, one after the
other. So the download slots are held too: their concurrency is 0 until the
crawl resumes. Only what is already on the wire completes.
"""

from __future__ import annotations

from scrapy.core.engine import ExecutionEngine


class CrawlPause:
    """``pause()`` and ``resume()`` the crawl of ``engine``; each is safe to repeat."""

    def __init__(self, engine: ExecutionEngine) -> None:
        self.engine = engine
        self._held: dict[str, int] = {}  # slot key -> its concurrency before the hold
        self.paused = False

    def pause(self) -> None:
        if self.paused:
            return
        self.paused = True
        self.engine.pause()
        for key, slot in self.engine.downloader.slots.items():
            self._held[key] = slot.concurrency
            slot.concurrency = 0

    def resume(self) -> None:
        if not self.paused:
            return
        self.paused = False
        downloader = self.engine.downloader
        held, self._held = self._held, {}
        for key, concurrency in held.items():
            slot = downloader.slots.get(key)
            if slot is not None:
                slot.concurrency = concurrency
                # Nothing else wakes a queue that stopped while held (Scrapy has no public
                # call for it): send what waits there, delay permitting.
                downloader._process_queue(slot)
        self.engine.unpause()
