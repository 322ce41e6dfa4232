"""The ``profiles`` spider: fetch profile pages, hand them to the extractors.

    scrapy crawl profiles -a urls=URL[,URL...]
    scrapy crawl profiles -a url_file=PATH            # one URL a line, '#' comments
    scrapy crawl profiles -a urls=URL -a follow=true   # also co-authors' profiles

The spider only navigates; ``crawler.extract`` turns each page into items, in
worker processes beside the reactor (``crawler.parse_pool``, ``PARSE_PROCESSES``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import date
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.http import Response
from twisted.python.failure import Failure

from crawler.cpu import CpuTally
from crawler.extract import ProblemKind
from crawler.job import given_urls
from crawler.parse_pool import ParsePool
from crawler.signals import page_failed
from scholarindex.core import stat_keys
from scholarindex.core.flags import as_bool
from scholarindex.core.items import PageItem

_SCHEMES = ("http", "https", "file")
_NOT_PAGES = re.compile(
    r"\.(?:css|js|json|xml|png|jpe?g|gif|svg|ico|webp|pdf|zip|gz|tar|mp4|woff2?)$", re.I
)


def path_shape(url: str) -> tuple[str, str, tuple[str, ...]]:
    """Site and path with the last segment wildcarded: profiles on one site share it."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1].lower() in ("index.html", "index.htm"):
        segments.pop()
    return parts.scheme, parts.netloc, tuple(segments[:-1])


class ProfilesSpider(scrapy.Spider):
    name = "profiles"
    # parse() yields nothing for a page the incremental middleware marks unchanged.
    skips_unchanged = True

    def __init__(
        self,
        urls: str | None = None,
        url_file: str | None = None,
        follow: str | bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        given = given_urls(urls, url_file)
        self.start_urls = given
        self.follow = as_bool(follow)
        self.bad_urls = [u for u in given if urlsplit(u).scheme not in _SCHEMES]
        self.profile_shapes = {path_shape(u) for u in given}
        self.parse_cpu = CpuTally("parse")
        self._parser: ParsePool | None = None

    @property
    def parser(self) -> ParsePool:
        """Where pages are parsed; made at first use, from the crawl's settings."""
        if self._parser is None:
            self._parser = ParsePool(self.settings.getint("PARSE_PROCESSES"),
                                     self.settings.getint("PARSE_PROCESSES_AFTER"))
        return self._parser

    @property
    def today(self) -> date:
        configured = self.settings.get("CRAWL_DATE")
        return date.fromisoformat(configured) if configured else date.today()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        _ = self.parser  # start the workers while the first requests go out
        stats = self.crawler.stats
        stats.set_value(stat_keys.PROFILES_REQUESTED, len(self.start_urls) - len(self.bad_urls))
        if not self.start_urls:
            self.logger.error("no URLs given: use -a urls=URL[,URL...] or -a url_file=PATH")
        for url in self.bad_urls:
            stats.inc_value(stat_keys.PROFILES_BAD_URL)
            self.logger.warning("skipping %r: not an http, https or file URL", url)
        engine = self.crawler.engine
        for url in self.start_urls:
            if url in self.bad_urls:
                continue
            # Scrapy reads start() to the end at once: a long URL list would sit in the
            # scheduler as Request objects, and freeing them while pages come in leaves
            # the heap fragmented. So hand over a request only when the engine has room.
            if engine is not None and engine.needs_backout():
                await self.crawler.signals.wait_for(signals.scheduler_empty)
            yield self._request(url)

    def _request(self, url: str) -> scrapy.Request:
        return scrapy.Request(url, callback=self.parse, errback=self.failed)

    async def parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:
        stats = self.crawler.stats
        if response.meta.get("unchanged"):  # not changed since the last good run
            stats.inc_value(stat_keys.PROFILES_UNCHANGED)
            return
        content_type = (response.headers.get("Content-Type") or b"").decode("latin-1") or None
        if content_type is None and response.url.lower().endswith(".txt"):
            content_type = "text/plain"
        page = await self.parser.parse(response.url, response.body, content_type, self.today)
        for problem in page.problems:
            if problem.kind is ProblemKind.ENCODING:
                stats.inc_value(stat_keys.PROFILES_ENCODING_PROBLEM)
            self.logger.info("%s: %s", response.url, problem)
        if page.researcher is None:
            stats.inc_value(stat_keys.PROFILES_UNRECOGNIZED)
            self.logger.warning("%s: not a profile page in a known layout; no items", response.url)
        else:
            stats.inc_value(stat_keys.PROFILES_PARSED)
            stats.inc_value(f"{stat_keys.PROFILES_BY_LAYOUT}{page.layout}")
            stats.inc_value(stat_keys.PROFILES_LISTINGS, len(page.works))
            if page.truncated:
                stats.inc_value(stat_keys.PROFILES_TRUNCATED)
                stats.inc_value(stat_keys.PROFILES_LISTINGS_UNREAD, page.unread)
                self.logger.warning("%s: %d of the %d listings the page announces not read",
                                    response.url, page.unread, page.researcher.listed_count)
            if page.untitled:
                stats.inc_value(stat_keys.PROFILES_UNTITLED)
                self.logger.warning("%s: listings without a title of their own, left out (%s)",
                                    response.url, "; ".join(map(str, page.untitled)))
            if page.ambiguous:
                stats.inc_value(stat_keys.PROFILES_AMBIGUOUS)
                self.logger.warning("%s: listings split by a guess (%s)", response.url,
                                    "; ".join(map(str, page.ambiguities)))
            # One item a page: Scrapy's item machinery runs once, not once a listing.
            yield PageItem(page.researcher, page.works)
        if self.follow:
            for url in self._profile_links(page.links):
                yield self._request(url)

    def closed(self, reason: str) -> None:
        if self._parser is not None:
            self.crawler.stats.set_value(stat_keys.PARSE_PROCESSES,
                                         0 if self._parser.in_process else self._parser.processes)
            self.crawler.stats.set_value(stat_keys.PARSED_IN_CRAWL_PROCESS,
                                         self._parser.parsed_here)
            self._parser.close()
            self.parse_cpu.add(self._parser.cpu_seconds)
        self.parse_cpu.publish(self.crawler.stats)

    def _profile_links(self, links: Iterable[str]) -> Iterator[str]:
        for url in links:
            if _NOT_PAGES.search(urlsplit(url).path) or urlsplit(url).scheme not in _SCHEMES:
                continue
            if path_shape(url) in self.profile_shapes:
                yield url

    def failed(self, failure: Failure) -> None:
        """Download errors: count and log them; the crawl goes on."""
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        reason = failure.type.__name__ if failure.type else "Error"
        response = getattr(failure.value, "response", None)
        if response is not None:
            reason = f"http_{response.status}"
        self.crawler.stats.inc_value(f"{stat_keys.PROFILES_FAILED_BY_REASON}{reason}")
        self.crawler.stats.inc_value(stat_keys.PROFILES_FAILED)
        self.logger.warning("%s: download failed (%s: %s)", url, reason, failure.getErrorMessage())
        if request is not None:
            self.crawler.signals.send_catch_log(page_failed, request=request)
