"""Incremental runs: a page unchanged since the last good run is not processed again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from crawler.extensions.verdict import EXIT_DATA_LOST, EXIT_OK
from indexing.connection import OpenSearchConfig
from standins.site import SiteServer
from tests.support.scheduled import SEEDS, crawl, file_urls

JOB = {"RUN_JOB": "incremental"}


def test_unchanged_site_over_http_sends_next_to_nothing(tmp_path: Path) -> None:
    site_root = tmp_path / "site"
    site_root.mkdir()
    for seed in SEEDS:
        shutil.copy(seed, site_root / seed.name)
    with SiteServer(site_root) as site:
        urls = ",".join(site.url(seed.name) for seed in SEEDS)

        first = crawl(tmp_path / "run", urls, JOB)
        assert first.returncode == EXIT_OK, first.stderr[-3000:]
        assert len(first.items) == 31 and first.stat("incremental/committed") == 5
        assert first.report is not None

        # SimpleHTTPRequestHandler sends Last-Modified and answers If-Modified-Since with 304.
        second = crawl(tmp_path / "run", urls, JOB)
        assert second.returncode == EXIT_OK, second.stderr[-3000:]
        assert second.items == []
        assert second.report is not None
        assert second.report["pages"]["unchanged"] == 5
        assert second.report["pages"]["not_modified"] == 5
        assert second.report["pages"]["bytes"] < first.report["pages"]["bytes"] / 10
        assert len(second.items) <= 0.10 * len(first.items)

        # One page changes: only it is processed again.
        changed = site_root / SEEDS[0].name
        changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        later = changed.stat().st_mtime + 60  # Last-Modified has one-second resolution
        os.utime(changed, (later, later))
        third = crawl(tmp_path / "run", urls, JOB)
        assert third.returncode == EXIT_OK
        assert third.report is not None and third.report["pages"]["unchanged"] == 4
        assert {item["researcher_url"] for item in third.items if item["kind"] == "work"} == {
            site.url(SEEDS[0].name)}

        # -a full=true processes every page again.
        full = crawl(tmp_path / "run", urls, JOB, "-a", "full=true")
        assert full.returncode == EXIT_OK and len(full.items) == 31


def test_unchanged_site_sends_next_to_nothing_to_the_index(
        tmp_path: Path, opensearch_config: OpenSearchConfig) -> None:
    indexing = {**JOB, "INDEX_ENABLED": "true", "INCREMENTAL_ENABLED": "auto",
                "ITEM_PIPELINES": json.dumps({"pipelines.index.OpenSearchIndexPipeline": 800}),
                "OPENSEARCH_URL": opensearch_config.url, "INDEX_PREFIX": opensearch_config.prefix,
                "INDEX_DEADLETTER_PATH": str(tmp_path / "deadletter.jsonl")}
    urls = file_urls(SEEDS)
    first = crawl(tmp_path, urls, indexing)
    assert first.returncode == EXIT_OK, first.stderr[-3000:]
    assert first.stat("index/listings_delivered") == 26
    assert first.report is not None and first.report["indexed"] > 0

    second = crawl(tmp_path, urls, indexing)
    assert second.returncode == EXIT_OK, second.stderr[-3000:]
    assert second.stat("profiles/unchanged") == 5
    assert second.stat("index/listings_delivered") == 0
    assert second.stat("index/docs") == 0


def test_pages_of_a_failed_run_are_processed_again(tmp_path: Path) -> None:
    urls = file_urls(SEEDS)  # file:// has no validators: unchanged is told by content hash
    lossy = {**JOB, "ITEM_PIPELINES": json.dumps(
        {"tests.support.scheduled.DeadLetterEveryFifthWork": 100})}

    failed = crawl(tmp_path, urls, lossy)
    assert failed.returncode == EXIT_DATA_LOST
    assert "run not ok; the state of 5 pages stays uncommitted" in failed.stderr

    retried = crawl(tmp_path, urls, JOB)
    assert retried.returncode == EXIT_OK and len(retried.items) == 31

    skipped = crawl(tmp_path, urls, JOB)
    assert skipped.returncode == EXIT_OK and skipped.items == []
    assert skipped.stat("incremental/same_hash") == 5


def test_incremental_off_processes_everything_and_keeps_no_state(tmp_path: Path) -> None:
    urls = file_urls(SEEDS[:2])
    first = crawl(tmp_path, urls, JOB)
    assert first.returncode == EXIT_OK
    # "auto" is off for a parse-only run: its export must hold every item.
    for mode in ("false", "auto"):
        off = crawl(tmp_path, urls, {**JOB, "INCREMENTAL_ENABLED": mode})
        assert off.returncode == EXIT_OK and len(off.items) == len(first.items) > 0
        assert off.stat("incremental/recorded") is None
    assert [p.name for p in (tmp_path / "state").glob("*.sqlite")] == ["incremental.export.sqlite"]
