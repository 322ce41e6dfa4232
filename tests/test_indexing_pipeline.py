"""The Scrapy pipeline in real crawls, run in this process (``tests.support.crawl``).

The spider below reads hand-built pages (JSON files behind ``file://`` URLs) and
yields ResearcherItem/WorkItem objects, so these tests do not depend on the
parsers. The index writes from a thread (``INDEX_WRITER_PROCESS = false``);
tests/test_indexing_process.py covers the writer's child process.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
import scrapy
from opensearchpy import OpenSearch
from twisted.internet.task import LoopingCall
from twisted.python import threadable

from crawler.signals import work_enriched
from scholarindex.core.items import PageItem, ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.crawl import CrawlResult, project_settings, run_spider
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot

PIPELINE = {"pipelines.index.OpenSearchIndexPipeline": 800}


# --- the crawl --------------------------------------------------------------------------------

class PagesSpider(scrapy.Spider):
    """Fetches page JSON files; each yields a researcher and the works it lists."""

    name = "indexing_pages"

    def __init__(self, pages_dir: str, page_items: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.pages = sorted(Path(pages_dir).glob("page-*.json"))
        self.page_items = page_items  # one PageItem a page, as the profiles spider yields

    async def start(self) -> AsyncIterator[scrapy.Request]:
        self.ticks: list[float] = []  # when the reactor ran the heartbeat
        self._heartbeat = LoopingCall(lambda: self.ticks.append(time.monotonic()))
        self._heartbeat.start(0.01)
        for page in self.pages:
            yield scrapy.Request(page.as_uri(), callback=self.parse)

    def closed(self, reason: str) -> None:
        heartbeat = getattr(self, "_heartbeat", None)  # absent when the crawl never started
        if heartbeat is not None and heartbeat.running:
            heartbeat.stop()

    def parse(self, response: scrapy.http.Response) -> Iterator[Any]:
        page = json.loads(response.text)
        if self.page_items:
            yield PageItem(ResearcherItem(**page["researcher"]),
                           [WorkItem(**work) for work in page["works"]])
        else:
            yield ResearcherItem(**page["researcher"])
            for work in page["works"]:
                yield WorkItem(**work)
        if page.get("enrich"):  # after the listings: as the enrichment pipeline would
            yield response.follow(response.url + "#enrich", callback=self.enrich,
                                  dont_filter=True, cb_kwargs={"page": page})

    def enrich(self, response: scrapy.http.Response, page: dict[str, Any]) -> None:
        for patch in page["enrich"]:
            self.crawler.signals.send_catch_log(work_enriched, **patch)


# --- helpers for the tests ----------------------------------------------------------------

def make_pages(directory: Path, count: int = 5, works_per_page: int = 5,
               enrich: bool = False) -> list[dict[str, Any]]:
    """Page i lists works i .. i+works_per_page-1: neighbouring pages share works."""
    directory.mkdir(parents=True, exist_ok=True)
    pages = []
    for i in range(count):
        rid = f"res-{i}"
        researcher = asdict(ResearcherItem(id=rid, url=f"https://bz.example/{rid}",
                                           name=f"Researcher {i}", source="bzpeer",
                                           works_count=works_per_page))
        works = [asdict(WorkItem(
            work_id=f"work-{w}", title=f"Work number {w}", researcher_id=rid,
            researcher_name=f"Researcher {i}", authors=[f"Researcher {i}", "Shared Author"],
            year=2020 + w % 6, abstract=f"Abstract of work {w} " * (1 + i % 3),
            researcher_url=f"https://bz.example/{rid}", source="bzpeer", position=p + 1))
            for p, w in enumerate(range(i, i + works_per_page))]
        page = {"researcher": researcher, "works": works}
        if enrich and i == count - 1:
            page["enrich"] = [{"work_id": works[0]["work_id"], "status": "done", "reason": None,
                               "arxiv": {"id": "2601.00042", "title": works[0]["title"]},
                               "updated_at": "2026-01-01T00:00:00Z"}]
        (directory / f"page-{i:03d}.json").write_text(json.dumps(page))
        pages.append(page)
    return pages


def crawl(pages_dir: Path, config: OpenSearchConfig, tmp_path: Path, page_items: bool = False,
          **settings: Any) -> CrawlResult:
    merged = {
        "ITEM_PIPELINES": PIPELINE, "OPENSEARCH_URL": config.url, "INDEX_PREFIX": config.prefix,
        "OPENSEARCH_USER": config.user, "OPENSEARCH_PASSWORD": config.password,
        "OPENSEARCH_VERIFY_CERTS": config.verify_certs, "OPENSEARCH_CA_CERTS": config.ca_certs,
        "INDEX_DEADLETTER_PATH": str(tmp_path / "deadletter.jsonl"),
        "STATE_DIR": str(tmp_path / "state"), "INDEX_WRITER_PROCESS": False,
        "ROBOTSTXT_OBEY": False, "AUTOTHROTTLE_ENABLED": False, "TELNETCONSOLE_ENABLED": False,
        "INDEX_RETRY_INITIAL_WAIT": 0.05, "INDEX_RETRY_MAX_WAIT": 0.2, "INDEX_MAX_ATTEMPTS": 3,
        **settings,
    }
    return run_spider(PagesSpider, project_settings(merged), timeout=90,
                      pages_dir=str(pages_dir), page_items=page_items)


def listings_in(client: OpenSearch, alias: str) -> set[tuple[str, str]]:
    return {(doc_id, e["researcher_id"])
            for doc_id, doc in snapshot(client, alias).items() for e in doc["listings"]}


def untimed(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    docs = json.loads(json.dumps(docs))
    for doc in docs.values():
        for entry in [doc, *doc.get("listings", [])]:
            entry.pop("last_seen", None)
    return docs


# --- tests --------------------------------------------------------------------------------

def test_crawl_indexes_merges_and_recrawl_changes_only_last_seen(
        tmp_path: Path, opensearch_config: OpenSearchConfig,
        opensearch_client: OpenSearch) -> None:
    pages = make_pages(tmp_path / "pages", enrich=True)
    listings = sum(len(p["works"]) for p in pages)
    # A slow crawl and a batch bigger than the crawl: only the timer can flush mid-crawl.
    first = crawl(tmp_path / "pages", opensearch_config, tmp_path, DOWNLOAD_DELAY=0.25,
                  INDEX_BATCH_SIZE=1000, INDEX_FLUSH_INTERVAL=0.2)
    stats = first.stats
    assert stats["finish_reason"] == "finished", first.log[-3000:]
    assert stats["index/listings_delivered"] == listings == 25
    assert stats["index/researchers_delivered"] == 5
    assert stats["index/enrichments_delivered"] == 1
    assert stats["index/dead_lettered"] == 0 and not first.errors()
    assert stats["index/bulk_requests"] >= 2, "the timer never flushed mid-crawl"
    assert stats["index/merged"] == listings - 9
    # Documents, not writes: 9 works and 5 profiles, however many flushes rewrote a shared
    # work (work-4 is on every page, and enriched after them).
    assert stats["index/docs"] == 14 < stats["index/doc_writes"]
    works = snapshot(opensearch_client, f"{opensearch_config.prefix}works")
    assert len(works) == 9
    assert [p["id"] for p in works["work-4"]["profiles"]] == [f"res-{i}" for i in range(5)]
    assert sorted(works["work-4"]["authors"]) == [*(f"Researcher {i}" for i in range(5)),
                                                  "Shared Author"]
    assert works["work-4"]["arxiv_id"] == "2601.00042"

    second = crawl(tmp_path / "pages", opensearch_config, tmp_path)
    assert second.stats["index/listings_delivered"] == listings
    assert second.stats.get("index/docs_created", 0) == 0
    assert second.stats["index/docs"] == 14
    again = snapshot(opensearch_client, f"{opensearch_config.prefix}works")
    assert untimed(again) == untimed(works)
    assert all(d["last_seen"] > works[i]["last_seen"] for i, d in again.items())


def test_unreachable_opensearch_stops_before_any_page(
        tmp_path: Path, opensearch_config: OpenSearchConfig) -> None:
    make_pages(tmp_path / "pages", count=2)
    down = replace(opensearch_config, url="http://indexer:s3cret@127.0.0.1:9")
    result = crawl(tmp_path / "pages", down, tmp_path)
    assert result.stats["finish_reason"] == "opensearch_unavailable"
    assert "downloader/request_count" not in result.stats
    assert "item_scraped_count" not in result.stats
    errors = result.errors()
    assert len(errors) == 1, errors
    assert "http://127.0.0.1:9" in errors[0] and "Connection refused" in errors[0]
    assert "s3cret" not in result.log


def test_unauthorised_stops_before_any_page(tmp_path: Path, fault_proxy: FaultProxy,
                                            opensearch_config: OpenSearchConfig) -> None:
    make_pages(tmp_path / "pages", count=2)
    fault_proxy.fail_next(1, 401)
    result = crawl(tmp_path / "pages", replace(opensearch_config, url=fault_proxy.url), tmp_path)
    assert result.stats["finish_reason"] == "opensearch_unavailable"
    assert "downloader/request_count" not in result.stats
    assert "authentication failed" in result.errors()[0]


def test_faults_and_an_outage_mid_crawl_lose_nothing(
        tmp_path: Path, fault_proxy: FaultProxy, opensearch_config: OpenSearchConfig,
        opensearch_client: OpenSearch) -> None:
    pages = make_pages(tmp_path / "pages", count=12, works_per_page=4)
    expected = {(w["work_id"], w["researcher_id"]) for p in pages for w in p["works"]}
    fault_proxy.fail_next(2, 429, match="/_bulk")
    fault_proxy.fail_next(1, 503, match="/_mget")
    fault_proxy.drop_next(1, match="/_bulk")

    def outage_after_some_bulks() -> None:
        deadline = time.monotonic() + 30
        while fault_proxy.count("/_bulk") < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        fault_proxy.refuse()
        time.sleep(1.5)  # longer than the writer's retries: the crawl pauses
        fault_proxy.pass_through()

    watcher = threading.Thread(target=outage_after_some_bulks, daemon=True)
    watcher.start()
    result = crawl(tmp_path / "pages", replace(opensearch_config, url=fault_proxy.url),
                   tmp_path, DOWNLOAD_DELAY=0.1, INDEX_BATCH_SIZE=4, INDEX_FLUSH_INTERVAL=0.1,
                   OPENSEARCH_OUTAGE_WAIT=30)
    watcher.join()
    stats = result.stats
    assert stats["finish_reason"] == "finished", result.log[-3000:]
    assert stats["item_scraped_count"] == len(expected) + len(pages)
    assert stats["index/retries"] > 0 and stats["index/pauses"] >= 1  # 429s may add one
    assert stats["index/dead_lettered"] == 0 and not (tmp_path / "deadletter.jsonl").exists()
    assert stats["index/listings_delivered"] == len(expected)
    assert listings_in(opensearch_client, f"{opensearch_config.prefix}works") == expected
    researchers = snapshot(opensearch_client, f"{opensearch_config.prefix}researchers")
    assert len(researchers) == len(pages)


def test_page_items_through_faults_lose_nothing_but_an_unindexable_listing(
        tmp_path: Path, fault_proxy: FaultProxy, opensearch_config: OpenSearchConfig,
        opensearch_client: OpenSearch) -> None:
    pages = make_pages(tmp_path / "pages", count=8, works_per_page=4)
    broken = pages[3]["works"][1]
    broken["work_id"] = ""  # no id: not indexable, taken out of its page's items
    (tmp_path / "pages" / "page-003.json").write_text(json.dumps(pages[3]))
    expected = {(w["work_id"], w["researcher_id"]) for p in pages for w in p["works"]
                if w["work_id"]}
    fault_proxy.fail_next(2, 429, match="/_bulk")
    fault_proxy.drop_next(1, match="/_bulk")
    result = crawl(tmp_path / "pages", replace(opensearch_config, url=fault_proxy.url),
                   tmp_path, page_items=True, INDEX_BATCH_SIZE=10, INDEX_FLUSH_INTERVAL=0.1)
    stats = result.stats
    assert stats["finish_reason"] == "finished", result.log[-3000:]
    # Counted as records, as the feed has them: researchers and listings, the broken one out.
    assert stats["item_scraped_count"] == len(expected) + len(pages) == len(result.items)
    assert stats["index/invalid_items"] == 1
    assert stats["item_dropped_reasons_count/UnindexableItem"] == 1
    assert not any(item.get("work_id") == "" for item in result.items)
    assert stats["index/retries"] > 0
    assert stats["index/dead_lettered"] == 0
    assert stats["index/listings_delivered"] == len(expected)
    assert stats["index/researchers_delivered"] == len(pages)
    assert listings_in(opensearch_client, f"{opensearch_config.prefix}works") == expected


def test_slow_cluster_applies_backpressure_and_loses_nothing(
        tmp_path: Path, fault_proxy: FaultProxy, opensearch_config: OpenSearchConfig,
        opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = make_pages(tmp_path / "pages", count=10, works_per_page=6)
    writes: list[tuple[float, float, bool]] = []  # (start, end, on the reactor thread)
    write = BulkWriter.write

    def timed_write(self: BulkWriter, changes: Any, **options: Any) -> Any:
        start = time.monotonic()
        try:
            return write(self, changes, **options)
        finally:
            writes.append((start, time.monotonic(), threadable.isInIOThread()))

    monkeypatch.setattr(BulkWriter, "write", timed_write)
    fault_proxy.delay_next(50, 0.4, match="/_bulk")  # OpenSearch is slow to index
    result = crawl(tmp_path / "pages", replace(opensearch_config, url=fault_proxy.url),
                   tmp_path, INDEX_BATCH_SIZE=12, INDEX_MAX_BUFFER=16)
    stats = result.stats
    assert stats["index/backpressure_waits"] > 0
    # Each flush waited 0.4 s on OpenSearch off the reactor thread, which kept ticking.
    spider = result.crawler.spider
    assert isinstance(spider, PagesSpider)
    ticks = spider.ticks
    assert writes and not any(on_reactor for _, _, on_reactor in writes)
    for start, end, _ in writes:
        assert any(start < tick < end for tick in ticks), "the reactor stalled during a flush"
    assert stats["index/listings_delivered"] == 60 and stats["index/dead_lettered"] == 0
    expected = {(w["work_id"], w["researcher_id"]) for p in pages for w in p["works"]}
    assert listings_in(opensearch_client, f"{opensearch_config.prefix}works") == expected


def test_disabled_pipeline_is_not_configured(tmp_path: Path) -> None:
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler

    from pipelines.index import OpenSearchIndexPipeline

    crawler = get_crawler(settings_dict={"INDEX_ENABLED": "false"})
    with pytest.raises(NotConfigured):
        OpenSearchIndexPipeline.from_crawler(crawler)


