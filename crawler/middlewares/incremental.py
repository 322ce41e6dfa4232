"""Incremental runs: do not process a page that has not changed since the last good run.

A downloader middleware with the page state store (``crawler.state``):

* on the way out, a page with a committed ETag or Last-Modified gets
  ``If-None-Match`` / ``If-Modified-Since``; the server may answer 304;
* on the way back, a 304, or a body whose SHA-256 equals the committed hash,
  sets ``response.meta["unchanged"] = True``: the spider counts
  ``profiles/unchanged`` and yields no items for it;
* any other page's hash and validators are recorded as pending, and promoted
  to committed only when the run's verdict is ok (``run_verdict``), so a page
  whose documents were lost is processed again next run. A page whose
  callback raised is un-recorded at once.

The spider opts in with ``skips_unchanged = True`` (it must honour the flag).
``-a full=true`` processes every page (and refreshes the state);
``-s INCREMENTAL_ENABLED=false`` leaves the state alone altogether. With
``-a follow=true`` pages are always processed: an unchanged page's links to
co-authors would otherwise not be followed.

``INCREMENTAL_ENABLED=auto`` (the default) means: on when the run indexes
(``INDEX_ENABLED``). A parse-only run's product is its export file, so it must
hold every item: ``-O items.jsonl`` run twice gives the same file twice.

The state is kept per job *and per destination* (``<job>.<target>.sqlite``; the
target is the OpenSearch URL and INDEX_PREFIX, or ``export``): "committed" means
"that destination has these documents", so pointing a job at another cluster or
prefix starts with a full run. After wiping or restoring an index in place, run
once with ``-a full=true``. In the distributed crawl (``REDIS_URL``) the state is the
job's, in Redis, shared by its workers (``crawler.distributed.pagestate``).
"""

from __future__ import annotations

import hashlib
import logging

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure

from crawler.distributed.addon import distributed_enabled
from crawler.extensions.verdict import RunVerdict, Verdict
from crawler.job import run_identity, state_dir
from crawler.signals import run_verdict
from crawler.state import PageStateStore
from scholarindex.core import stat_keys
from scholarindex.core.flags import as_bool
from scholarindex.core.urls import redact_url

logger = logging.getLogger(__name__)

_CONDITIONAL_SCHEMES = ("http", "https")


class IncrementalMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.store: PageStateStore | None = None
        self.run_id = ""
        self.skip_unchanged = True
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_error, signal=signals.spider_error)
        crawler.signals.connect(self.on_verdict, signal=run_verdict)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IncrementalMiddleware:
        if not incremental_enabled(crawler.settings):
            raise NotConfigured  # switched off on purpose: no warning
        if crawler.get_extension(RunVerdict) is None:
            # Without a verdict nothing would ever be committed: every run would be full.
            raise NotConfigured("incremental runs need the RunVerdict extension")
        return cls(crawler)

    def spider_opened(self, spider: Spider) -> None:
        job, self.run_id = run_identity(self.crawler)
        # Opt-in: a spider that ignored the flag would parse an empty 304 body as a page.
        if not getattr(spider, "skips_unchanged", False):
            logger.info("incremental: off (spider %s does not set skips_unchanged)", spider.name)
            return
        full = as_bool(getattr(spider, "full", None))
        follow = bool(getattr(spider, "follow", False))
        self.skip_unchanged = not (full or follow)
        target = state_target(self.crawler.settings)
        self.store = self._open_store(job, target)
        stale = self.store.drop_stale_pending(self.run_id)
        if not self.skip_unchanged:
            logger.info("incremental: processing every page (%s); still recording page state",
                        "-a full=true" if full else "-a follow=true")
        logger.info("incremental: page state in %s (%d entries of unfinished runs dropped)",
                    self.store.path, stale)

    def _open_store(self, job: str, target: str) -> PageStateStore:
        settings = self.crawler.settings
        if not distributed_enabled(settings):
            return PageStateStore(state_dir(settings) / f"{job}.{target}.sqlite")
        # The distributed crawl: the job's page state is shared by its workers, in Redis.
        from crawler.distributed.pagestate import RedisPageStateStore
        from scholarindex.distributed.connection import RedisConfig, RedisLink
        from scholarindex.distributed.keys import JobKeys

        config = RedisConfig.from_settings(settings)
        worker = str(self.crawler.stats.get_value(stat_keys.RUN_WORKER) or "")
        # The same methods as the local store, kept in Redis; no common base class.
        return RedisPageStateStore(RedisLink.from_config(config),  # type: ignore[return-value]
                                   JobKeys(config.key_prefix, job), target, worker)

    def _tracked(self, request: Request) -> bool:
        # Robots.txt and other engine-internal fetches have NO_CALLBACK: not pages.
        return self.store is not None and request.callback is not NO_CALLBACK

    def process_request(self, request: Request) -> None:
        if not self._tracked(request):
            return
        assert self.store is not None
        # The URL as first requested keys the state, also after redirects.
        url = request.meta.setdefault("page_state_url", request.url)
        if (not self.skip_unchanged or request.meta.get("page_state_conditional")
                or not url.startswith(_CONDITIONAL_SCHEMES)):
            return
        state = self.store.committed(url)
        if state is None or not (state.etag or state.last_modified):
            return
        if state.etag:
            request.headers.setdefault("If-None-Match", state.etag)
        if state.last_modified:
            request.headers.setdefault("If-Modified-Since", state.last_modified)
        # Let the 304 reach the spider instead of HttpErrorMiddleware's errback.
        request.meta["handle_httpstatus_list"] = [
            *request.meta.get("handle_httpstatus_list", []), 304]
        request.meta["page_state_conditional"] = True
        self.stats.inc_value(stat_keys.INCREMENTAL_CONDITIONAL)

    def process_response(self, request: Request, response: Response) -> Response:
        if not self._tracked(request):
            return response
        assert self.store is not None
        url = request.meta.get("page_state_url", request.url)
        if response.status == 304 and request.meta.get("page_state_conditional"):
            request.meta["unchanged"] = True
            self.stats.inc_value(stat_keys.INCREMENTAL_NOT_MODIFIED)
            return response
        if not 200 <= response.status < 300:
            return response
        digest = hashlib.sha256(response.body).hexdigest()
        etag = _header(response, b"ETag")
        last_modified = _header(response, b"Last-Modified")
        state = self.store.committed(url)
        if state is not None and state.hash == digest:
            if self.skip_unchanged:
                request.meta["unchanged"] = True
                self.stats.inc_value(stat_keys.INCREMENTAL_SAME_HASH)
            if (state.etag, state.last_modified) == (etag, last_modified):
                return response  # nothing new to remember
        self.store.record_pending(self.run_id, url, digest, etag, last_modified)
        self.stats.inc_value(stat_keys.INCREMENTAL_RECORDED)
        return response

    def spider_error(self, failure: Failure, response: Response, spider: Spider) -> None:
        # The callback raised: this page's items may be missing, so process it again next run.
        if self.store is not None:
            self.store.discard_pending(response.meta.get("page_state_url", response.url))

    def on_verdict(self, verdict: Verdict, reason: str) -> None:
        if self.store is None:
            return
        if verdict.ok:
            committed = self.store.commit(self.run_id)
            self.stats.set_value(stat_keys.INCREMENTAL_COMMITTED, committed)
            logger.info("incremental: committed the state of %d pages", committed)
        else:
            # A JOBDIR resume of this run commits them if it ends well; any other run
            # drops them and processes those pages again.
            logger.info("incremental: run not ok; the state of %d pages stays uncommitted",
                        self.store.pending_count(self.run_id))
        self.store.close()
        self.store = None


def incremental_enabled(settings: BaseSettings) -> bool:
    """INCREMENTAL_ENABLED: true, false, or auto (the default): on when the run indexes."""
    if str(settings["INCREMENTAL_ENABLED"]).strip().lower() == "auto":
        return settings.getbool("INDEX_ENABLED")
    return settings.getbool("INCREMENTAL_ENABLED")


def state_target(settings: BaseSettings) -> str:
    """Which destination the committed state describes (see the module docstring)."""
    if not settings.getbool("INDEX_ENABLED"):
        return "export"
    url = redact_url(settings.get("OPENSEARCH_URL") or "")
    where = f"{url}\n{settings.get('INDEX_PREFIX') or ''}"
    return "os-" + hashlib.sha1(where.encode()).hexdigest()[:10]


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
