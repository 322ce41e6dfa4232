"""A stop asked for while the spider closes waits for the close to end.

When the spider has finished and is closing (the index's last flush, the
resolution pass, the run report), Scrapy answers Ctrl-C or SIGTERM by stopping
the engine, which waits only for the pages in progress, not for the close
itself: the reactor stopped with the last flush in flight and the report
unwritten, so the run looked killed. ``engine_stopped`` handlers are waited
for, so this one holds the stop until the engine has let go of the spider.
What is slow in the close and should end sooner on a stop (waiting through an
outage) checks ``crawler.crawling`` itself.
"""

from __future__ import annotations

from scrapy import signals
from scrapy.crawler import Crawler
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall

POLL_SECONDS = 0.1


class CloseBeforeStop:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CloseBeforeStop:
        extension = cls(crawler)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_stopped(self) -> Deferred[LoopingCall] | None:
        if self._closed():
            return None

        # The close has no handle to wait on; the engine drops the spider when it ends.
        def check() -> None:
            if self._closed():
                poll.stop()
        poll = LoopingCall(check)
        return poll.start(POLL_SECONDS)

    def _closed(self) -> bool:
        engine = self.crawler.engine
        return engine is None or engine.spider is None
