"""Incremental runs: a page unchanged since the last good run is not processed again.

The rules of the page state are tested in-process on the middleware itself; real
``scrapy crawl`` runs show the whole path (304s over HTTP, content hashes on file://,
the index, a failed run) and are read from their run reports and the page state.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured

from crawler.extensions.verdict import EXIT_DATA_LOST, EXIT_OK
from scholarindex.indexing.connection import OpenSearchConfig
from standins.site import SiteServer
from tests.support.incremental import DATA_LOST, IncrementalRun
from tests.support.scheduled import SEEDS, Run, crawl, file_urls, page_state, side_by_side

JOB = {"RUN_JOB": "incremental"}
PAGE = "http://site.example/chao-jin.html"
VALIDATORS = {"ETag": '"v1"', "Last-Modified": "Sat, 21 Nov 2026 10:00:00 GMT"}


# --- the middleware, in-process -----------------------------------------------------------

def test_validators_make_the_next_request_conditional_and_a_304_unchanged(
        tmp_path: Path) -> None:
    first = IncrementalRun(tmp_path)
    assert "If-None-Match" not in first.request(PAGE).headers  # nothing committed yet
    assert not first.fetch(PAGE, b"v1", headers=VALIDATORS).meta.get("unchanged")
    first.end()
    assert first.stat("incremental/committed") == 1

    second = IncrementalRun(tmp_path)
    request = second.request(PAGE)
    assert request.headers["If-None-Match"] == b'"v1"'
    assert request.headers["If-Modified-Since"] == VALIDATORS["Last-Modified"].encode()
    assert 304 in request.meta["handle_httpstatus_list"]  # the spider gets the 304
    assert second.fetch(PAGE, status=304).meta["unchanged"] is True
    # A page that did change answers 200 and is processed.
    assert not second.fetch(PAGE, b"v2", headers={"ETag": '"v2"'}).meta.get("unchanged")
    assert second.stat("incremental/not_modified") == 1
    assert second.stat("incremental/recorded") == 1


def test_without_validators_the_content_hash_tells(tmp_path: Path) -> None:
    url = SEEDS[0].as_uri()
    first = IncrementalRun(tmp_path)
    first.fetch(url, b"same")
    first.end()
    second = IncrementalRun(tmp_path)
    assert not second.request(url).headers  # file:// cannot be asked conditionally
    assert second.fetch(url, b"same").meta["unchanged"] is True
    assert second.stat("incremental/same_hash") == 1


@pytest.mark.parametrize("spider_args", [{"full": "true"}, {"follow": "true"}])
def test_full_and_follow_process_every_page_and_still_record(
        tmp_path: Path, spider_args: dict[str, str]) -> None:
    first = IncrementalRun(tmp_path)
    first.fetch(PAGE, b"v1", headers=VALIDATORS)
    first.end()
    again = IncrementalRun(tmp_path, spider_args=spider_args)  # -a full=true / -a follow=true
    assert "If-None-Match" not in again.request(PAGE).headers
    assert not again.fetch(PAGE, b"v1", headers={"ETag": '"v1b"'}).meta.get("unchanged")
    again.end()
    # The state is refreshed: the next plain run asks with the new validator.
    assert IncrementalRun(tmp_path).request(PAGE).headers["If-None-Match"] == b'"v1b"'


def test_a_failed_run_commits_nothing_and_the_next_processes_its_pages(tmp_path: Path) -> None:
    failed = IncrementalRun(tmp_path)
    failed.fetch(PAGE, b"v1")
    failed.end(DATA_LOST)
    assert failed.stat("incremental/committed") is None
    retried = IncrementalRun(tmp_path)
    assert not retried.fetch(PAGE, b"v1").meta.get("unchanged")
    retried.end()
    assert IncrementalRun(tmp_path).fetch(PAGE, b"v1").meta["unchanged"] is True


@pytest.mark.parametrize(("mode", "indexing", "on"), [
    ("true", "false", True), ("false", "true", False), ("false", "false", False),
    # auto: on when the run indexes; a parse-only run's export must hold every item.
    ("auto", "true", True), ("auto", "false", False),
])
def test_incremental_enabled_switch(tmp_path: Path, mode: str, indexing: str, on: bool) -> None:
    if on:
        IncrementalRun(tmp_path, INCREMENTAL_ENABLED=mode, INDEX_ENABLED=indexing).end()
    else:
        with pytest.raises(NotConfigured):
            IncrementalRun(tmp_path, INCREMENTAL_ENABLED=mode, INDEX_ENABLED=indexing)


# --- real crawls --------------------------------------------------------------------------
# Three jobs, each run by a scheduler several times, side by side (each its own directory):
# a site over HTTP (304s), the same pages indexed, and file:// pages (no validators:
# unchanged is told by content hash) with a run that loses documents.

def http_job(root: Path) -> dict[str, Any]:
    """Crawl a site, again unchanged, again after one page changed."""
    site_root, workdir = root / "site", root / "run"
    site_root.mkdir()
    for seed in SEEDS:
        shutil.copy(seed, site_root / seed.name)
    found: dict[str, Any] = {}
    with SiteServer(site_root) as site:
        urls = ",".join(site.url(seed.name) for seed in SEEDS)
        found["urls"] = {seed.name: site.url(seed.name) for seed in SEEDS}
        found["first"] = crawl(workdir, urls, JOB)
        found["state after first"] = page_state(workdir / "state", "incremental")
        found["second"] = crawl(workdir, urls, JOB)
        changed = site_root / SEEDS[0].name
        changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        later = changed.stat().st_mtime + 60  # Last-Modified has one-second resolution
        os.utime(changed, (later, later))
        found["third"] = crawl(workdir, urls, JOB)
    return found


def index_job(root: Path, config: OpenSearchConfig) -> dict[str, Any]:
    """Crawl into the index, then again unchanged (INCREMENTAL_ENABLED=auto: on)."""
    indexing = {**JOB, "INDEX_ENABLED": "true", "INCREMENTAL_ENABLED": "auto",
                "ITEM_PIPELINES": json.dumps({"pipelines.index.OpenSearchIndexPipeline": 800}),
                "OPENSEARCH_URL": config.url, "INDEX_PREFIX": config.prefix,
                "INDEX_DEADLETTER_PATH": str(root / "deadletter.jsonl")}
    return {"first": crawl(root, file_urls(SEEDS), indexing),
            "second": crawl(root, file_urls(SEEDS), indexing)}


def file_job(root: Path) -> dict[str, Any]:
    """A run that loses documents, a good run, an unchanged one, a parse-only one (auto)."""
    state, urls = root / "state", file_urls(SEEDS)
    lossy = {**JOB, "ITEM_PIPELINES": json.dumps(
        {"tests.support.scheduled.DeadLetterEveryFifthWork": 100})}
    found: dict[str, Any] = {}
    found["failed"] = crawl(root, urls, lossy)
    found["state after failed"] = page_state(state, "incremental")
    found["retried"] = crawl(root, urls, JOB)
    found["state after retried"] = page_state(state, "incremental")
    found["skipped"] = crawl(root, urls, JOB)
    found["state after skipped"] = page_state(state, "incremental")
    found["auto"] = crawl(root, urls, {**JOB, "INCREMENTAL_ENABLED": "auto"})
    found["state after auto"] = page_state(state, "incremental")
    found["state files"] = sorted(p.name for p in state.glob("*.sqlite"))
    return found


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory,
         module_opensearch_config: OpenSearchConfig) -> dict[str, dict[str, Any]]:
    return side_by_side({
        "http": partial(http_job, tmp_path_factory.mktemp("http-job")),
        "index": partial(index_job, tmp_path_factory.mktemp("index-job"),
                         module_opensearch_config),
        "file": partial(file_job, tmp_path_factory.mktemp("file-job")),
    }, workers=3)


@pytest.mark.process
def test_unchanged_site_over_http_sends_next_to_nothing(jobs: dict[str, dict[str, Any]]) -> None:
    http = jobs["http"]
    first: Run = http["first"]
    assert first.returncode == EXIT_OK, first.stderr[-3000:]
    assert len(first.items) == 31 and first.report is not None
    committed = http["state after first"]
    assert set(committed) == set(http["urls"].values())
    assert all(page["committed"] and not page["pending"] for page in committed.values())

    # SimpleHTTPRequestHandler sends Last-Modified and answers If-Modified-Since with 304.
    second: Run = http["second"]
    assert second.returncode == EXIT_OK, second.stderr[-3000:]
    assert second.items == []
    assert second.report is not None
    assert second.report["pages"]["unchanged"] == 5
    assert second.report["pages"]["not_modified"] == 5
    assert second.report["pages"]["bytes"] < first.report["pages"]["bytes"] / 10

    # One page changed: only it is processed again.
    third: Run = http["third"]
    assert third.returncode == EXIT_OK, third.stderr[-3000:]
    assert third.report is not None and third.report["pages"]["unchanged"] == 4
    assert {item["researcher_url"] for item in third.items if item["kind"] == "work"} == {
        http["urls"][SEEDS[0].name]}


@pytest.mark.process
def test_unchanged_site_sends_next_to_nothing_to_the_index(
        jobs: dict[str, dict[str, Any]]) -> None:
    first: Run = jobs["index"]["first"]
    assert first.returncode == EXIT_OK, first.stderr[-3000:]
    assert first.report is not None
    assert first.report["listings_delivered"] == 26 and first.report["indexed"] > 0

    second: Run = jobs["index"]["second"]
    assert second.returncode == EXIT_OK, second.stderr[-3000:]
    assert second.report is not None
    assert second.report["pages"]["unchanged"] == 5
    assert second.report["listings_delivered"] == 0
    assert second.report["indexed"] == 0


@pytest.mark.process
def test_a_failed_run_leaves_its_page_state_uncommitted(jobs: dict[str, dict[str, Any]]) -> None:
    runs = jobs["file"]
    failed: Run = runs["failed"]
    assert failed.returncode == EXIT_DATA_LOST, failed.stderr[-3000:]
    state = runs["state after failed"]
    assert len(state) == 5
    assert all(page["pending"] and not page["committed"] for page in state.values())


@pytest.mark.process
def test_pages_of_a_failed_run_are_processed_again_then_skipped(
        jobs: dict[str, dict[str, Any]]) -> None:
    runs = jobs["file"]
    retried: Run = runs["retried"]
    skipped: Run = runs["skipped"]
    assert retried.returncode == EXIT_OK and len(retried.items) == 31
    state = runs["state after retried"]
    assert len(state) == 5
    assert all(page["committed"] and not page["pending"] for page in state.values())
    assert skipped.returncode == EXIT_OK and skipped.items == []
    assert skipped.report is not None
    assert (skipped.report["pages"]["unchanged"], skipped.report["pages"]["not_modified"]) == \
        (5, 0)  # all five by content hash


@pytest.mark.process
def test_a_parse_only_run_processes_everything_and_keeps_no_state(
        jobs: dict[str, dict[str, Any]]) -> None:
    runs = jobs["file"]
    auto: Run = runs["auto"]
    assert auto.returncode == EXIT_OK
    assert len(auto.items) == 31  # its export holds every item
    assert runs["state after auto"] == runs["state after skipped"]
    assert runs["state files"] == ["incremental.export.sqlite"]
