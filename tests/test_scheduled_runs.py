"""``scrapy crawl profiles`` tells its scheduler what happened: exit status, last line, report.

Real ``scrapy crawl`` processes: the exit status a shell sees is the point. What a
run did is read from its run report; the last log line is read where the one-line
reason is what is tested. The verdict's rules themselves (``judge``) are tested
without a crawl in test_scheduled_units.py; a run of non-profile pages (exit 1, "no
profile found") is tried through the cron recipe in test_scheduled_recipes.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pytest
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

from crawler.commands.crawl import Command
from crawler.commands.runlock import RunLock
from crawler.extensions.report import summary_line
from crawler.extensions.verdict import (
    EXIT_ALREADY_RUNNING,
    EXIT_DATA_LOST,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from engine.cluster import free_port
from tests.support.scheduled import (
    SCRAPY,
    SEEDS,
    Run,
    crawl,
    crawl_env,
    crawl_many,
    file_urls,
)

PIPELINES = "tests.support.scheduled"
UNREACHABLE_PORT = free_port()  # nothing listens there


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """One crawl per case, each in its own directory, run side by side."""
    def workdir(name: str) -> Path:
        return tmp_path_factory.mktemp(name)

    gone = workdir("error-rate")
    missing = [gone / f"gone-{i}.txt" for i in range(3)]
    unreachable = workdir("unreachable")
    return crawl_many({
        "clean": (workdir("clean"), file_urls(SEEDS), {"RUN_JOB": "seeds"}),
        "dead-lettered": (workdir("dead-lettered"), file_urls(SEEDS), {
            "ITEM_PIPELINES": json.dumps({f"{PIPELINES}.DeadLetterEveryFifthWork": 100})}),
        "unreachable": (unreachable, file_urls(SEEDS), {
            "INDEX_ENABLED": "true",
            "ITEM_PIPELINES": json.dumps({"pipelines.index.OpenSearchIndexPipeline": 800}),
            "OPENSEARCH_URL": f"http://admin:s3cret@127.0.0.1:{UNREACHABLE_PORT}",
            # The start-up check's retries, quick: what the run ends with is the point here.
            "INDEX_RETRY_INITIAL_WAIT": "0.05", "INDEX_RETRY_MAX_WAIT": "0.2",
            "INDEX_DEADLETTER_PATH": str(unreachable / "deadletter.jsonl")}),
        "error-rate": (gone, file_urls([*SEEDS[:2], *missing]), {"RUN_MAX_ERROR_RATE": "0.5"}),
        "no-urls": (workdir("no-urls"), ""),
    })


@pytest.mark.process
def test_clean_crawl_exits_0_with_the_report(runs: dict[str, Run]) -> None:
    run = runs["clean"]
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
    # The same summary is logged for whoever reads the log instead of the file.
    assert summary_line(report) in run.stderr


@pytest.mark.process
def test_dead_lettered_documents_fail_with_their_own_code(runs: dict[str, Run]) -> None:
    run = runs["dead-lettered"]
    assert run.returncode == EXIT_DATA_LOST, run.stderr[-3000:]
    assert "run failed (exit 4): 5 documents dead-lettered" in run.last_line
    assert run.report is not None
    assert (run.report["exit_code"], run.report["dead_lettered"]) == (EXIT_DATA_LOST, 5)


@pytest.mark.process
def test_unreachable_opensearch_exits_3_naming_the_url_without_its_password(
        runs: dict[str, Run]) -> None:
    run = runs["unreachable"]
    assert run.returncode == EXIT_UNAVAILABLE, run.stderr[-3000:]
    assert f"opensearch unavailable at http://127.0.0.1:{UNREACHABLE_PORT}" in run.last_line
    assert "s3cret" not in run.last_line
    assert run.report is not None and run.report["pages"]["fetched"] == 0
    assert run.report["close_reason"] == "opensearch_unavailable"


@pytest.mark.process
def test_error_rate_over_the_threshold_fails(runs: dict[str, Run]) -> None:
    run = runs["error-rate"]
    assert run.returncode == EXIT_FAILED, run.stderr[-3000:]
    assert "3/5 pages failed (60%, over RUN_MAX_ERROR_RATE=50%)" in run.last_line
    assert run.report is not None
    assert (run.report["pages"]["parsed"], run.report["pages"]["failed"]) == (2, 3)
    # Under the threshold the same failures are reported but the run is ok: judge(), in
    # test_scheduled_units.py.


@pytest.mark.process
def test_usage_errors_exit_2(runs: dict[str, Run], tmp_path: Path) -> None:
    run = runs["no-urls"]
    assert run.returncode == EXIT_USAGE, run.stderr[-3000:]
    assert "no URLs given" in run.last_line
    unknown = subprocess.run([SCRAPY, "crawl", "nosuchspider"], cwd=tmp_path,
                             env=crawl_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert unknown.returncode == EXIT_USAGE
    assert "Spider not found: nosuchspider" in unknown.stderr


@pytest.mark.parametrize(("args", "spargs", "says"), [
    (["profiles"], {"url_file": "missing.txt"}, "url_file 'missing.txt': no such file"),
    (["profiles", "other"], {}, "give one spider name"),
])
def test_usage_errors_are_found_before_the_crawl(args: list[str], spargs: dict[str, str],
                                                 says: str) -> None:
    # A UsageError is exit 2 (Scrapy's cmdline; seen by a shell in the test above).
    command = Command()
    command.settings = Settings()
    with pytest.raises(UsageError, match=says):
        command.run(args, argparse.Namespace(spargs=spargs))


@pytest.mark.process
def test_second_run_of_a_job_exits_at_once(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "state" / "nightly.lock")
    assert lock.acquire()  # this test process is "the first run"
    try:
        # The same job again, and another job (not held up), side by side in one STATE_DIR.
        held = crawl_many({
            "nightly": (tmp_path / "nightly", file_urls(SEEDS), {
                "RUN_JOB": "nightly", "STATE_DIR": str(tmp_path / "state")}),
            "other": (tmp_path / "other", file_urls(SEEDS[:1]), {
                "RUN_JOB": "other", "STATE_DIR": str(tmp_path / "state")}),
        })
    finally:
        lock.release()
    run, other = held["nightly"], held["other"]
    assert run.returncode == EXIT_ALREADY_RUNNING
    assert "job nightly is already running" in run.last_line
    assert "Spider opened" not in run.stderr and run.report is None
    assert other.returncode == EXIT_OK, other.stderr[-3000:]
    # Once the lock is free the job runs.
    assert crawl(tmp_path, file_urls(SEEDS[:1]), {"RUN_JOB": "nightly"}).returncode == EXIT_OK
