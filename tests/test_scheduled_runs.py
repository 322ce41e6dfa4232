"""``scrapy crawl profiles`` tells its scheduler what happened: exit status, last line, report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from crawler.commands.runlock import RunLock
from crawler.extensions.verdict import (
    EXIT_ALREADY_RUNNING,
    EXIT_DATA_LOST,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from tests.support.scheduled import (
    HELDOUT,
    SCRAPY,
    SEEDS,
    crawl,
    crawl_env,
    file_urls,
    free_port,
)

PIPELINES = "tests.support.scheduled"


def test_clean_crawl_exits_0_with_the_report(tmp_path: Path) -> None:
    run = crawl(tmp_path, file_urls(SEEDS), {"RUN_JOB": "seeds"})
    assert run.returncode == EXIT_OK, run.stderr[-3000:]
    assert "[scholarindex.run] INFO: run ok (exit 0)" in run.last_line
    report = run.report
    assert report is not None
    assert report["ok"] is True and report["exit_code"] == 0
    assert report["job"] == "seeds" and report["close_reason"] == "finished"
    assert report["pages"]["fetched"] == 5 and report["pages"]["parsed"] == 5
    assert (report["researchers"], report["listings"], report["distinct_works"]) == (5, 26, 25)
    assert report["distinct_works_exact"] is True
    assert report["items_scraped"] == len(run.items) == 31
    assert report["dead_lettered"] == 0 and report["dropped"] == {}
    assert report["exit_reason"] in run.last_line
    assert "run report for job seeds: pages fetched 5" in run.stderr


def test_non_profile_pages_fail(tmp_path: Path) -> None:
    junk = [p for p in HELDOUT if p.name.startswith("junk_")]
    assert len(junk) == 2
    run = crawl(tmp_path, file_urls(junk))
    assert run.returncode == EXIT_FAILED
    assert "no profile found in 2 pages" in run.last_line
    assert run.report is not None and run.report["pages"]["unrecognized"] == 2


def test_dead_lettered_documents_fail_with_their_own_code(tmp_path: Path) -> None:
    pipelines = json.dumps({f"{PIPELINES}.DeadLetterEveryFifthWork": 100})
    run = crawl(tmp_path, file_urls(SEEDS), {"ITEM_PIPELINES": pipelines})
    assert run.returncode == EXIT_DATA_LOST, run.stderr[-3000:]
    assert "run failed (exit 4): 5 documents dead-lettered" in run.last_line
    assert run.report is not None and run.report["dead_lettered"] == 5


def test_dependency_unavailable_names_the_url(tmp_path: Path) -> None:
    pipelines = json.dumps({f"{PIPELINES}.OpenSearchDown": 100})
    run = crawl(tmp_path, file_urls(SEEDS), {
        "ITEM_PIPELINES": pipelines,
        "OPENSEARCH_URL": "http://admin:s3cret@127.0.0.1:9/",
    })
    assert run.returncode == EXIT_UNAVAILABLE, run.stderr[-3000:]
    assert "opensearch unavailable at http://127.0.0.1:9/" in run.last_line
    assert "s3cret" not in run.last_line
    assert run.report is not None and run.report["pages"]["fetched"] == 0


def test_unreachable_opensearch_exits_3_naming_the_url(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    run = crawl(tmp_path, file_urls(SEEDS), {
        "INDEX_ENABLED": "true",
        "ITEM_PIPELINES": json.dumps({"pipelines.index.OpenSearchIndexPipeline": 800}),
        "OPENSEARCH_URL": f"http://127.0.0.1:{port}",
        "INDEX_DEADLETTER_PATH": str(tmp_path / "deadletter.jsonl"),
    }, timeout=60)
    assert run.returncode == EXIT_UNAVAILABLE, run.stderr[-3000:]
    assert f"opensearch unavailable at http://127.0.0.1:{port}" in run.last_line
    assert run.report is not None and run.report["pages"]["fetched"] == 0


def test_error_rate_over_the_threshold_fails(tmp_path: Path) -> None:
    missing = [tmp_path / f"gone-{i}.txt" for i in range(3)]
    run = crawl(tmp_path, file_urls([*SEEDS[:2], *missing]), {"RUN_MAX_ERROR_RATE": "0.5"})
    assert run.returncode == EXIT_FAILED
    assert "3/5 pages failed (60%, over RUN_MAX_ERROR_RATE=50%)" in run.last_line
    # Under the threshold the same failures are reported but the run is ok.
    run = crawl(tmp_path, file_urls([*SEEDS, missing[0]]), {"RUN_MAX_ERROR_RATE": "0.5"})
    assert run.returncode == EXIT_OK
    assert "1 of 6 pages failed" in run.last_line


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    run = crawl(tmp_path, "")
    assert run.returncode == EXIT_USAGE
    assert "no URLs given" in run.last_line
    run = crawl(tmp_path, "", {}, "-a", f"url_file={tmp_path / 'missing.txt'}")
    assert run.returncode == EXIT_USAGE
    assert "no such file" in run.stderr
    unknown = subprocess.run([SCRAPY, "crawl", "nosuchspider"], cwd=tmp_path,
                             env=crawl_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert unknown.returncode == EXIT_USAGE
    assert "Spider not found: nosuchspider" in unknown.stderr


def test_second_run_of_a_job_exits_at_once(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "state" / "nightly.lock")
    assert lock.acquire()  # this test process is "the first run"
    try:
        run = crawl(tmp_path, file_urls(SEEDS), {"RUN_JOB": "nightly"})
    finally:
        lock.release()
    assert run.returncode == EXIT_ALREADY_RUNNING
    assert "job nightly is already running" in run.last_line
    assert "Spider opened" not in run.stderr and run.report is None
    # Another job is not held up, and once the lock is free the job runs.
    assert crawl(tmp_path, file_urls(SEEDS[:1]), {"RUN_JOB": "other"}).returncode == EXIT_OK
    assert crawl(tmp_path, file_urls(SEEDS[:1]), {"RUN_JOB": "nightly"}).returncode == EXIT_OK
