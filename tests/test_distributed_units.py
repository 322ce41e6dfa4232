"""The distributed crawl's rules that need no Redis: verdict, report, job name, settings."""

from __future__ import annotations

from datetime import UTC, datetime

from crawler.distributed.addon import DistributedCrawl
from crawler.extensions.report import build_report, report_to_document, run_document_id
from crawler.extensions.verdict import judge
from crawler.job import job_name
from scholarindex.core.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_UNAVAILABLE
from tests.support.crawl import project_settings

WORKER = {"profiles/requested": 100, "run/worker": "host:1:ab"}


def test_a_worker_that_found_every_page_taken_or_was_drained_is_ok() -> None:
    assert judge(WORKER, "finished", max_error_rate=0.5).exit_code == EXIT_OK
    assert judge(WORKER, "shutdown", max_error_rate=0.5).exit_code == EXIT_OK
    # Without the distributed crawl both stay failures.
    alone = {"profiles/requested": 100}
    assert judge(alone, "finished", max_error_rate=0.5).exit_code == EXIT_FAILED
    assert judge(alone, "shutdown", max_error_rate=0.5).exit_code == EXIT_FAILED


def test_redis_gone_for_good_is_a_dependency_unavailable() -> None:
    verdict = judge({**WORKER, "profiles/parsed": 3}, "redis_unavailable", max_error_rate=0.5)
    assert verdict.exit_code == EXIT_UNAVAILABLE and "redis unavailable" in verdict.reason


def test_each_worker_has_its_own_crawl_runs_document_under_the_jobs_run_id() -> None:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    stats = {**WORKER, "run/job": "nightly", "run/id": "r1", "profiles/parsed": 40}
    report = build_report(stats, verdict=judge(stats, "finished", max_error_rate=0.5),
                          close_reason="finished", started_at=now, finished_at=now,
                          duration_seconds=1.0, distinct_works=3, distinct_works_exact=True,
                          spider="profiles")
    assert report["worker"] == "host:1:ab"
    assert run_document_id(report) == "r1@2026-11-22T00:00:00+00:00@host:1:ab"
    assert "worker" not in report_to_document(report)  # the crawl-runs mapping is strict
    del report["worker"]
    assert run_document_id(report) == "r1@2026-11-22T00:00:00+00:00"


def test_the_job_argument_names_the_job() -> None:
    assert job_name(project_settings({}), {"job": "night ly", "url_file": "x"}) == "night-ly"
    assert job_name(project_settings({"RUN_JOB": "set"}), {"job": "arg"}) == "set"


def test_the_addon_switches_the_scheduler_only_with_redis_url() -> None:
    plain = project_settings({})
    DistributedCrawl().update_settings(plain)
    assert plain["SCHEDULER"] == "scrapy.core.scheduler.Scheduler"
    shared = project_settings({"REDIS_URL": "redis://127.0.0.1:1/0"})
    DistributedCrawl().update_settings(shared)
    assert shared["SCHEDULER"] == "crawler.distributed.scheduler.RedisScheduler"
    assert "crawler.distributed.tracking.PageTracking" in shared.getdict("SPIDER_MIDDLEWARES")


def test_without_redis_url_the_crawl_imports_no_redis() -> None:
    import subprocess
    import sys

    code = ("import sys; from crawler.commands import crawl; from crawler.distributed import addon;"
            " import scholarindex.enrichment.resolver, pipelines.enrich;"
            " print('redis' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
