"""Make a JOBDIR reusable by a schedule: resume after an interruption, start afresh after an end.

Scrapy keeps the fingerprints of every request it has seen in
``JOBDIR/requests.seen``, so running the same command again with the same
JOBDIR after a crawl that finished would fetch nothing. A scheduled job wants
one JOBDIR for good: resume a run that was interrupted (close reason
``shutdown``, ``closespider_*``, a dependency down), start a new run after one
that got to its end. So when a crawl finishes (close reason ``finished``,
whatever its verdict), this forgets the seen requests and the run id.
Switch off with ``-s RUN_JOBDIR_RESET=false``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from crawler.job import RUN_FILE

logger = logging.getLogger(__name__)
# What Scrapy's RFPDupeFilter keeps in a JOBDIR (the request queue is empty after an end).
SEEN_FILE = "requests.seen"


class JobdirReset:
    def __init__(self, jobdir: Path) -> None:
        self.jobdir = jobdir

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> JobdirReset:
        jobdir = crawler.settings.get("JOBDIR")
        # No message: Scrapy would log one as a warning on every run without a JOBDIR.
        if not jobdir or not crawler.settings.getbool("RUN_JOBDIR_RESET"):
            raise NotConfigured
        ext = cls(Path(jobdir))
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if reason != "finished":
            logger.info("JOBDIR %s kept (%s): the same command resumes this run",
                        self.jobdir, reason)
            return
        # The scheduler and its dupefilter closed before spider_closed: the file is free.
        for name in (SEEN_FILE, RUN_FILE):
            (self.jobdir / name).unlink(missing_ok=True)
        logger.info("JOBDIR %s reset: the crawl got to its end; the next run starts afresh",
                    self.jobdir)
