"""The run report stored in ``{INDEX_PREFIX}crawl-runs``, from real crawls.

One document per run part, with the report's counts; a report the cluster will not
take is a warning and ``run/report_not_indexed``, never a failed run; the two parts
of a paused and resumed run share ``run_id`` and keep a document each. The crawls
run in-process, except the interrupted one: a signal and a resume need processes.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from crawler.extensions.report import run_document_id
from crawler.extensions.verdict import EXIT_FAILED, EXIT_OK
from scholarindex.indexing.indices import load_mapping
from standins.site import SiteServer
from tests.support.crawl import ROOT, CrawlResult, crawl_profiles
from tests.support.scheduled import HELDOUT, SEEDS, crawl_args, crawl_env, wait_for

SITE = ROOT / "fixtures" / "site"
SEED_PATHS = [p for p in (SITE / "urls.txt").read_text().splitlines() if p.startswith("/")]


def index_settings(url: str, prefix: str) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": prefix}


def runs(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    client.indices.refresh(index=f"{prefix}crawl-runs")
    hits = client.search(index=f"{prefix}crawl-runs",
                         body={"size": 100, "sort": [{"started_at": "asc"}]})["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(SITE) as server:
        yield server


def seed_crawl(tmp_path: Path, site: SiteServer, url: str, prefix: str,
               **extra: str) -> CrawlResult:
    urls = ",".join(site.url(p) for p in SEED_PATHS)
    return crawl_profiles(tmp_path, {**index_settings(url, prefix), "RUN_JOB": "seeds", **extra},
                          urls=urls)


def test_a_crawl_stores_its_report_in_crawl_runs(site, tmp_path, opensearch_url, index_prefix,
                                                 opensearch_client) -> None:
    report_file = tmp_path / "report.json"
    result = seed_crawl(tmp_path, site, opensearch_url, index_prefix, RUN_REPORT=str(report_file))
    assert result.returncode == EXIT_OK, result.log[-3000:]
    assert "run/report_not_indexed" not in result.stats
    [(doc_id, doc)] = runs(opensearch_client, index_prefix).items()
    assert (doc["researchers"], doc["listings"], doc["distinct_works"]) == (5, 26, 25)
    assert (doc["job"], doc["ok"], doc["exit_code"], doc["close_reason"]) == \
        ("seeds", True, 0, "finished")
    # Documents written: 25 works + 5 researchers, once each, even when a timed flush puts
    # a shared work's two listings in different bulk requests (then it is written twice).
    assert doc["pages"]["parsed"] == 5 and doc["indexed"] == 30
    assert 30 <= result.stats["index/doc_writes"] <= 31
    assert doc["dead_lettered"] == 0 and doc["dropped"] == []
    # The same report as the JSON file, under its run part's id.
    written = json.loads(report_file.read_text())
    assert doc_id == run_document_id(written) == f"{written['run_id']}@{written['started_at']}"
    assert doc["report_id"] == written["report_id"] and doc["@timestamp"] == doc["finished_at"]
    # Versioned and aliased like works and researchers; strict.
    target = opensearch_client.indices.get_alias(name=f"{index_prefix}crawl-runs")
    assert list(target) == [f"{index_prefix}crawl-runs-v1"]
    mapping = load_mapping("works")  # same conventions as the others
    runs_mapping = opensearch_client.indices.get_mapping(
        index=f"{index_prefix}crawl-runs-v1")[f"{index_prefix}crawl-runs-v1"]["mappings"]
    assert runs_mapping["dynamic"] == mapping["mappings"]["dynamic"] == "strict"
    assert runs_mapping["_meta"]["version"] == 1

    # The next run of the job adds its own document (here an incremental one: all unchanged).
    again = seed_crawl(tmp_path, site, opensearch_url, index_prefix)
    assert again.returncode == EXIT_OK, again.log[-3000:]
    first, second = runs(opensearch_client, index_prefix).values()
    assert first["run_id"] != second["run_id"] and second["job"] == "seeds"
    assert (second["researchers"], second["pages"]["unchanged"]) == (0, 5)


def test_a_report_the_index_refuses_never_fails_the_run(site, tmp_path, opensearch_url,
                                                        index_prefix, opensearch_client) -> None:
    # An index squatting on the alias's name: the alias cannot be created.
    opensearch_client.indices.create(index=f"{index_prefix}crawl-runs")
    result = seed_crawl(tmp_path, site, opensearch_url, index_prefix)
    assert result.returncode == EXIT_OK, result.log[-3000:]
    assert result.stats["run/report_not_indexed"] == 1
    assert f"WARNING: run report not stored in {index_prefix}crawl-runs" in result.log
    assert result.stats["run/reason"].startswith("run ok (exit 0)")


@pytest.mark.process
def test_a_paused_and_resumed_run_stores_one_document_per_part(tmp_path: Path, opensearch_url,
                                                               index_prefix,
                                                               opensearch_client) -> None:
    pages = [*SEEDS, *(p for p in HELDOUT if not p.name.startswith("junk_"))]
    root = tmp_path / "site"
    root.mkdir()
    for page in pages:
        shutil.copy(page, root / page.name)
    workdir = tmp_path / "run"
    workdir.mkdir()
    with SiteServer(root) as server:
        # One page at a time, half a second apart: slow enough to interrupt mid-crawl.
        settings = {**index_settings(opensearch_url, index_prefix), "RUN_JOB": "resume",
                    "STATE_DIR": str(workdir / "state"), "JOBDIR": str(workdir / "jobdir"),
                    "DOWNLOAD_DELAY": "0.5", "DOWNLOAD_DELAY_JITTER": "0",
                    "CONCURRENT_REQUESTS": "1", "INDEX_WRITER_PROCESS": "false"}
        args = crawl_args(",".join(server.url(p.name) for p in pages), settings)
        first = subprocess.Popen(args, cwd=workdir, env=crawl_env(workdir),
                                 stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: len([r for r in server.requests if r != "/robots.txt"]) >= 2,
                     timeout=60, what="the first pages")  # a crawl starts slowly under load
            first.send_signal(signal.SIGINT)
            _, log = first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
        assert first.returncode == EXIT_FAILED, log[-3000:]
        # The rest at full speed: nothing needs interrupting any more.
        rest = crawl_args(",".join(server.url(p.name) for p in pages),
                          {**settings, "DOWNLOAD_DELAY": "0", "CONCURRENT_REQUESTS": "16"})
        second = subprocess.run(rest, cwd=workdir, env=crawl_env(workdir), capture_output=True,
                                text=True, timeout=60)
        assert second.returncode == EXIT_OK, second.stderr[-3000:]
    parts = list(runs(opensearch_client, index_prefix).values())
    assert [(p["close_reason"], p["resumed"]) for p in parts] == [("shutdown", False),
                                                                  ("finished", True)]
    assert parts[0]["run_id"] == parts[1]["run_id"]
    assert 0 < parts[0]["researchers"] < len(pages)
    assert sum(p["researchers"] for p in parts) == len(pages)  # status can add them up
