"""When a leased page is done: its callback's output consumed and its items through
every pipeline (scraped, dropped or failed), or its errback run.

Scrapy has no hook for "this response is fully processed", so the page's output is
followed here: a spider middleware counts the items each page yields and notes the end
of its output; the item signals (which carry the response) count them back. A page is
done when its output ended and no item of it is still in the pipelines. The spider's
errback sends ``page_failed``: a failed page is done at once.

Pages are told apart by the lease's fingerprint in ``request.meta`` (``FP_META``),
which a retry or a redirect of the request keeps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from itemadapter import is_item
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from crawler.signals import page_failed

FP_META = "frontier_fingerprint"


def fingerprint_of(source: Any) -> str | None:
    """The lease fingerprint of a request, or of the response or failure that carries one."""
    request = source if isinstance(source, Request) else getattr(source, "request", None)
    return request.meta.get(FP_META) if request is not None else None


class PageTracker:
    """Extension: counts each leased page's items in flight; calls ``on_done(fp, items)``
    once per page (the scheduler sets it)."""

    def __init__(self, crawler: Crawler) -> None:
        self.on_done: Callable[[str, int], None] = lambda fp, items: None
        # Each item of a leased page out of the pipelines, before the page can be done.
        self.on_item: Callable[[str, Any], None] = lambda fp, item: None
        # Each item that came through every pipeline (scraped, not dropped or failed),
        # with the page's URL: what the index stage holds of the page.
        self.on_scraped: Callable[[str, str, Any], None] = lambda fp, url, item: None
        self._in_flight: dict[str, int] = {}  # items handed on, not yet out of the pipelines
        self._items: dict[str, int] = {}  # items the page yielded
        self._ended: set[str] = set()  # pages whose output is consumed
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._item_finished, signal=signal)
        crawler.signals.connect(self._failed, signal=page_failed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageTracker:
        return cls(crawler)

    @classmethod
    def of(cls, crawler: Crawler) -> PageTracker:
        """The crawl's tracker (an extension the distributed add-on enables)."""
        tracker = crawler.get_extension(cls)
        if tracker is None:
            raise NotConfigured("the distributed crawl needs the PageTracker extension "
                                "(crawler.distributed.addon enables it with REDIS_URL)")
        return tracker

    def item_started(self, fp: str) -> None:
        self._in_flight[fp] = self._in_flight.get(fp, 0) + 1
        self._items[fp] = self._items.get(fp, 0) + 1

    def output_ended(self, fp: str) -> None:
        self._ended.add(fp)
        self._check(fp)

    def _item_finished(self, response: Any = None, item: Any = None, **kwargs: Any) -> None:
        fp = fingerprint_of(response)
        if fp is not None and self._in_flight.get(fp):
            if kwargs.get("signal") is signals.item_scraped:
                self.on_scraped(fp, response.url, item)
            self.on_item(fp, item)
            self._in_flight[fp] -= 1
            self._check(fp)

    def _failed(self, request: Request, **kwargs: Any) -> None:
        fp = fingerprint_of(request)
        if fp is not None:
            self.output_ended(fp)

    def _check(self, fp: str) -> None:
        if fp in self._ended and not self._in_flight.get(fp):
            self._ended.discard(fp)
            self._in_flight.pop(fp, None)
            self.on_done(fp, self._items.pop(fp, 0))


class PageTracking:
    """Spider middleware: counts the items of each leased page, notes the end of its output."""

    def __init__(self, tracker: PageTracker) -> None:
        self.tracker = tracker

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageTracking:
        return cls(PageTracker.of(crawler))

    async def process_spider_output(self, response: Response,
                                    result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        fp = fingerprint_of(response)
        try:
            async for output in result:
                if fp is not None and is_item(output):
                    self.tracker.item_started(fp)
                yield output
        finally:
            if fp is not None:
                self.tracker.output_ended(fp)
