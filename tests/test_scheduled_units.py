"""The scheduled-run parts that need no crawl: verdict, counters, page state, report, lock."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.commands.runlock import RunLock
from crawler.extensions.report import build_report, report_to_document, summary_line
from crawler.extensions.verdict import judge
from crawler.job import derive_job_name, run_id, safe_name
from crawler.state import PageStateStore
from scholarindex.core.distinct import DistinctCounter
from scholarindex.core.exit_codes import (
    EXIT_ALREADY_RUNNING,
    EXIT_DATA_LOST,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from scholarindex.core.urls import redact_url

CLEAN = {"profiles/requested": 5, "profiles/parsed": 5, "profiles/listings": 26}


@pytest.mark.parametrize(("stats", "reason", "code", "says"), [
    (CLEAN, "finished", EXIT_OK, "run ok (exit 0): 5 profiles parsed"),
    ({"profiles/requested": 5, "profiles/unchanged": 5}, "finished", EXIT_OK, "5 unchanged"),
    ({**CLEAN, "index/dead_lettered": 3}, "finished", EXIT_DATA_LOST, "3 documents dead-lettered"),
    ({}, "opensearch_unavailable", EXIT_UNAVAILABLE, "opensearch unavailable at http://os:9200"),
    ({**CLEAN, "index/dead_lettered": 1}, "opensearch_unavailable", EXIT_UNAVAILABLE,
     "; 1 documents dead-lettered"),
    # Paused past OPENSEARCH_OUTAGE_WAIT while the crawl was closing anyway.
    ({**CLEAN, "index/outage_expired": 1, "index/dead_lettered": 4}, "finished",
     EXIT_UNAVAILABLE, "opensearch unavailable at http://os:9200; 4 documents dead-lettered"),
    (CLEAN, "shutdown", EXIT_FAILED, "interrupted (shutdown)"),
    (CLEAN, "closespider_timeout", EXIT_FAILED, "closed early (closespider_timeout)"),
    ({}, "already_running", EXIT_ALREADY_RUNNING, "in progress"),
    ({"profiles/requested": 0}, "finished", EXIT_USAGE, "no URLs given"),
    ({"profiles/requested": 2, "profiles/unrecognized": 2}, "finished", EXIT_FAILED,
     "no profile found in 2 pages"),
    ({"profiles/requested": 4, "profiles/parsed": 1, "profiles/failed": 3}, "finished",
     EXIT_FAILED, "3/4 pages failed (75%"),
    ({"profiles/requested": 2, "profiles/bad_url": 2, "profiles/parsed": 2}, "finished",
     EXIT_OK, "2 of 4 pages failed"),
    # At or under RUN_MAX_ERROR_RATE, failed pages are reported and the run is ok.
    ({"profiles/requested": 6, "profiles/parsed": 5, "profiles/failed": 1}, "finished",
     EXIT_OK, "1 of 6 pages failed"),
    ({**CLEAN, "spider_exceptions/ValueError": 6}, "finished", EXIT_FAILED, "6/11 pages"),
    # A resumed run does not fetch again what its first part did: not "no profile found".
    ({"profiles/requested": 5, "dupefilter/filtered": 5, "run/resumed": True}, "finished",
     EXIT_OK, "run ok"),
])
def test_judge(stats: dict, reason: str, code: int, says: str) -> None:
    verdict = judge(stats, reason, max_error_rate=0.5,
                    dependency_urls={"opensearch": "http://u:p@os:9200"})
    assert verdict.exit_code == code
    assert verdict.ok is (code == EXIT_OK)
    assert says in verdict.reason
    assert "\n" not in verdict.reason
    assert verdict.reason.startswith(f"run {'ok' if code == EXIT_OK else 'failed'} (exit {code})")


def test_redact_url() -> None:
    assert redact_url("https://admin:secret@search.example:9200/x") == \
        "https://search.example:9200/x"
    assert redact_url("http://localhost:9200") == "http://localhost:9200"


def test_distinct_counter_is_exact_while_small_and_close_when_large() -> None:
    counter = DistinctCounter(exact_limit=1000)
    for i in range(800):
        counter.add(f"{i:016x}")
        counter.add(f"{i:016x}")
    assert counter.exact and len(counter) == 800
    for i in range(800, 200_000):
        counter.add(f"{i:016x}")
    assert not counter.exact
    assert abs(len(counter) - 200_000) / 200_000 < 0.03
    assert len(counter._registers) == 1 << 14  # memory stays fixed from here on


def test_page_state_commits_only_its_own_run(tmp_path: Path) -> None:
    store = PageStateStore(tmp_path / "job.sqlite")
    store.record_pending("run1", "http://a/", "h1", '"e1"', None)
    assert store.committed("http://a/") is None  # pending is not committed
    assert store.commit("run2") == 0
    assert store.commit("run1") == 1
    state = store.committed("http://a/")
    assert state is not None and (state.hash, state.etag) == ("h1", '"e1"')

    store.record_pending("run3", "http://a/", "h2", None, "Sat, 21 Nov 2026 10:00:00 GMT")
    store.record_pending("run3", "http://b/", "hb", None, None)
    store.close()
    store = PageStateStore(tmp_path / "job.sqlite")  # pending survives a restart (resume)
    assert store.pending_count("run3") == 2
    store.discard_pending("http://b/")  # its callback raised
    assert store.drop_stale_pending("run4") == 1  # run3 will not resume
    assert store.commit("run3") == 0
    assert store.committed("http://a/").hash == "h1"  # type: ignore[union-attr]
    assert store.committed("http://b/") is None


def test_report_document_is_a_copy() -> None:
    stats = {**CLEAN, "run/job": "nightly", "run/id": "r1", "item_dropped_reasons_count/Junk": 2,
             "profiles/failed/http_404": 1, "profiles/failed": 1, "index/paused_seconds": 61.25}
    now = datetime(2026, 11, 22, tzinfo=UTC)
    verdict = judge(stats, "finished", max_error_rate=0.5)
    report = build_report(stats, verdict=verdict, close_reason="finished",
                          started_at=now, finished_at=now, duration_seconds=1.5,
                          distinct_works=25, distinct_works_exact=True, spider="profiles")
    before = copy.deepcopy(report)
    doc = report_to_document(report)
    assert report == before
    assert doc["dropped"] == [{"reason": "Junk", "count": 2}]
    assert doc["pages"]["failed_by_reason"] == [{"reason": "http_404", "count": 1}]
    assert doc["@timestamp"] == "2026-11-22T00:00:00+00:00"
    assert json.loads(json.dumps(doc)) == doc
    assert (report["job"], report["run_id"], report["listings"]) == ("nightly", "r1", 26)
    # The pause is in the JSON report and its log line, not in the strict crawl-runs mapping.
    assert report["index_paused_seconds"] == 61.25 and "index_paused_seconds" not in doc
    assert "paused 61.2 s while OpenSearch was unavailable" in summary_line(report)


def test_pages_read_with_a_problem_are_in_the_report_and_its_line() -> None:
    stats = {**CLEAN, "profiles/truncated": 2, "profiles/listings_unread": 3,
             "profiles/untitled": 1, "profiles/ambiguous": 1}
    now = datetime(2026, 11, 22, tzinfo=UTC)
    report = build_report(stats, verdict=judge(stats, "finished", max_error_rate=0.5),
                          close_reason="finished", started_at=now, finished_at=now,
                          duration_seconds=1.5, distinct_works=25, distinct_works_exact=True,
                          spider="profiles")
    assert (report["pages"]["truncated"], report["pages"]["untitled"],
            report["pages"]["ambiguous"], report["listings_unread"]) == (2, 1, 1, 3)
    assert ("page problems: 2 short of their listing count (3 listings unread), 1 with "
            "untitled listings left out, 1 split by a guess") in summary_line(report)
    # The crawl-runs mapping is strict and predates the new counts: the JSON holds them.
    doc = report_to_document(report)
    assert doc["pages"]["truncated"] == 2
    assert not {"untitled", "ambiguous"} & doc["pages"].keys() and "listings_unread" not in doc
    clean = build_report(CLEAN, verdict=judge(CLEAN, "finished", max_error_rate=0.5),
                         close_reason="finished", started_at=now, finished_at=now,
                         duration_seconds=1.5, distinct_works=25, distinct_works_exact=True,
                         spider="profiles")
    assert "page problems" not in summary_line(clean)


def test_job_names_are_stable_and_safe(tmp_path: Path) -> None:
    listing = tmp_path / "nightly urls.txt"
    assert derive_job_name(url_file=str(listing)) == derive_job_name(url_file=str(listing))
    assert derive_job_name(url_file=str(listing)).startswith("nightly-urls-")
    assert derive_job_name("http://b/,http://a/") == derive_job_name("http://a/, http://b/")
    assert safe_name("../etc/passwd") == "etc-passwd"


def test_run_id_survives_in_the_jobdir(tmp_path: Path) -> None:
    first, resumed = run_id(str(tmp_path))
    assert not resumed
    assert run_id(str(tmp_path)) == (first, True)
    assert run_id(None)[0] != run_id(None)[0]


def test_run_lock_is_exclusive(tmp_path: Path) -> None:
    first, second = RunLock(tmp_path / "job.lock"), RunLock(tmp_path / "job.lock")
    assert first.acquire()
    assert not second.acquire()
    assert second.holder().startswith("pid ")
    first.release()
    assert second.acquire()
    second.release()
