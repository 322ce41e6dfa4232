"""The incremental middleware driven by hand: one "run" at a time, no crawl, no reactor.

``IncrementalRun`` opens the middleware the way a crawl does (``from_crawler``,
``spider_opened``), passes pages through ``process_request``/``process_response``
and ends the run with a verdict, so the page-state rules are tested in-process.
This module holds no tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy import Request
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from crawler.extensions.verdict import RunVerdict, Verdict
from crawler.middlewares.incremental import IncrementalMiddleware
from crawler.spiders.profiles import ProfilesSpider

OK = Verdict(True, 0, "run ok (exit 0)")
DATA_LOST = Verdict(False, 4, "run failed (exit 4): 1 documents dead-lettered")


class IncrementalRun:
    """One run of job ``job`` with its page state in ``state_dir``."""

    def __init__(self, state_dir: Path, job: str = "incremental",
                 spider_args: dict[str, str] | None = None, **settings: Any) -> None:
        crawler = get_crawler(ProfilesSpider, {
            "STATE_DIR": str(state_dir), "RUN_JOB": job, "INDEX_ENABLED": "false",
            "INCREMENTAL_ENABLED": "true", "EXTENSIONS": {RunVerdict: 500}, **settings})
        self.spider = ProfilesSpider.from_crawler(crawler, **(spider_args or {}))
        crawler.spider = self.spider
        self.stats = crawler.stats
        self.middleware = IncrementalMiddleware.from_crawler(crawler)
        self.middleware.spider_opened(self.spider)

    def request(self, url: str) -> Request:
        """A page request on its way out (conditional headers added where they apply)."""
        request = Request(url, callback=self.spider.parse)
        self.middleware.process_request(request)
        return request

    def fetch(self, url: str, body: bytes = b"", status: int = 200,
              headers: dict[str, str] | None = None) -> Request:
        """Request ``url`` and get this answer; the request's meta says what was decided."""
        request = self.request(url)
        response = Response(url, status=status, body=body, headers=headers, request=request)
        assert self.middleware.process_response(request, response) is response
        return request

    def end(self, verdict: Verdict = OK) -> None:
        self.middleware.on_verdict(verdict, "finished")

    def stat(self, name: str) -> Any:
        return self.stats.get_value(name)
