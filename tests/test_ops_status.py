"""``scholarindex status``: aliases, versions, mapping drift, dead letters, pending, crawl runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from crawler.extensions.report import build_report, store_report, write_report
from crawler.extensions.verdict import Verdict
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import enrichment_change
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile, dead_letter
from scholarindex.indexing.indices import alias_name
from tests.support.index_contents import snapshot
from tests.support.ops import cli_env, json_out, mappings_dir, run_cli

T0 = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)


def report(job: str, day: int, listings: int, parsed: int = 100, ok: bool = True,
           hour: int = 0) -> dict[str, Any]:
    """A run report as a crawl writes it (the real builder)."""
    stats = {"run/job": job, "run/id": f"{job}-{day}", "profiles/parsed": parsed,
             "profiles/requested": parsed, "profiles/listings": listings,
             "index/docs": listings // 2, "response_received_count": parsed}
    finished = T0 + timedelta(days=day, hours=hour)
    verdict = Verdict(ok, 0 if ok else 3, "ok" if ok else "opensearch unavailable")
    return build_report(stats, verdict=verdict, close_reason="finished",
                        started_at=finished - timedelta(minutes=5), finished_at=finished,
                        duration_seconds=300.0, distinct_works=listings // 2,
                        distinct_works_exact=True, spider="profiles")


RUNS = [report("nightly", 0, 1000), report("weekly", 0, 50, hour=6), report("nightly", 1, 1100),
        report("nightly", 2, 300), report("weekly", 2, 52, ok=False, hour=6)]


def test_status_of_a_fresh_index(indexed: OpenSearchConfig, opensearch_client: OpenSearch,
                                 tmp_path: Path) -> None:
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")
    result = run_cli(["status", "--json"], env)
    assert result.exit_code == 0, result.output
    status = json_out(result)
    works, researchers = status["indices"]
    prefix = indexed.prefix
    assert works["alias"] == f"{prefix}works" and works["index"] == f"{prefix}works-v1"
    assert works["version"] == 1
    assert works["docs"] == opensearch_client.count(index=f"{prefix}works")["count"] > 0
    assert researchers["docs"] == opensearch_client.count(index=f"{prefix}researchers")["count"]
    for entry in (works, researchers):
        assert entry["mapping"]["same"] is True, entry["mapping"]
        assert entry["older_versions"] == [] and entry["write_blocked"] is False
    assert status["dead_letters"]["waiting"] == 0
    assert status["enrichment_pending"] == 0
    assert status["crawl_runs"] == {"source": None, "runs": []}
    assert status["warnings"] == []

    text = run_cli(["status", "--check"], env)
    assert text.exit_code == 0
    assert f"{prefix}works -> {prefix}works-v1 (v1), {works['docs']} documents" in text.stdout
    assert "mapping: matches" in text.stdout and "crawl runs: none recorded" in text.stdout


def test_status_after_a_reindex_shows_the_kept_version(indexed: OpenSearchConfig,
                                                       tmp_path: Path) -> None:
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")
    assert run_cli(["reindex", "--yes", "--index", "works"], env).exit_code == 0
    works = json_out(run_cli(["status", "--json"], env))["indices"][0]
    assert works["index"] != f"{indexed.prefix}works-v1"
    older = works["older_versions"]
    assert [o["index"] for o in older] == [f"{indexed.prefix}works-v1"]
    assert older[0]["write_blocked"] is True and older[0]["docs"] == works["docs"]


def test_status_names_mapping_differences(indexed: OpenSearchConfig, tmp_path: Path) -> None:
    def edit(body: dict[str, Any]) -> None:
        props = body["mappings"]["properties"]
        props["new_field"] = {"type": "keyword"}
        props["abstract"]["analyzer"] = "standard"
        del props["score"]
        body["mappings"]["_meta"]["version"] = 2
    env = cli_env(indexed, INDEX_MAPPINGS_DIR=mappings_dir(tmp_path, edit),
                  INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")
    status = json_out(run_cli(["status", "--json"], env))
    mapping = status["indices"][0]["mapping"]
    assert mapping["same"] is False
    assert mapping["added"] == ["new_field"]
    assert mapping["removed"] == ["score"]
    assert mapping["changed"] == ["abstract"]
    assert mapping["other"] == ["mapping version: live v1, file v2"]
    assert status["indices"][1]["mapping"]["same"] is True
    assert any("reindex --index works" in w for w in status["warnings"])
    text = run_cli(["status"], env).stdout
    assert "added: new_field" in text and "changed: abstract" in text


def test_status_counts_dead_letters_and_pending_works(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, tmp_path: Path,
        make_writer: Callable[..., BulkWriter]) -> None:
    work_ids = sorted(snapshot(opensearch_client, alias_name(indexed.prefix, "works")))[:3]
    report_ = make_writer().write([enrichment_change(w, status="pending", reason="queued")
                                   for w in work_ids])
    assert report_.enrichments_delivered == 3
    dead = tmp_path / "dl" / "index.jsonl"
    letters = DeadLetterFile(dead)
    letters.write([dead_letter(enrichment_change(w, status="pending"), "unavailable", "down")
                   for w in work_ids[:2]])
    (dead.parent / "index.jsonl.replay-20260101T000000-1").write_text(
        dead.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")

    status = json_out(run_cli(["status", "--json"], cli_env(indexed, INDEX_DEADLETTER_PATH=dead)))
    assert status["enrichment_pending"] == 3
    assert status["dead_letters"]["waiting"] == 3  # two waiting, one in an unfinished replay
    assert any("scholarindex replay" in w for w in status["warnings"])
    assert any("enrich --pending" in w for w in status["warnings"])
    checked = run_cli(["status", "--check"], cli_env(indexed, INDEX_DEADLETTER_PATH=dead))
    assert checked.exit_code == 1 and "thing(s) to do" in checked.stderr


def test_status_reads_crawl_runs_from_the_index_and_flags_drops(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, tmp_path: Path) -> None:
    runs_index = f"{indexed.prefix}crawl-runs"
    for run in RUNS:  # stored as crawls store them (alias, strict mapping)
        store_report(opensearch_client, indexed.prefix, run, budget=30)
    opensearch_client.indices.refresh(index=runs_index)
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")

    status = json_out(run_cli(["status", "--json", "--runs", "3"], env))
    runs = status["crawl_runs"]
    assert runs["source"] == f"index {runs_index}"
    assert [(r["job"], r["listings"]) for r in runs["runs"]] == [
        ("weekly", 52), ("nightly", 300), ("nightly", 1100)]
    assert runs["runs"][1]["drops"] == ["listings 1100 -> 300 (-73%)",
                                        "distinct works 550 -> 150 (-73%)",
                                        "documents indexed 550 -> 150 (-73%)"]
    assert runs["runs"][0]["drops"] == [] and runs["runs"][2]["drops"] == []
    assert any("nightly" in w and "listings 1100 -> 300" in w for w in status["warnings"])
    assert any("weekly" in w and "failed" in w for w in status["warnings"])
    text = run_cli(["status"], env).stdout
    assert "! dropped: listings 1100 -> 300 (-73%)" in text


def test_the_parts_of_a_resumed_run_count_as_one_run(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, tmp_path: Path) -> None:
    first = report("nightly", 0, 1000)
    part_one = report("nightly", 1, 600) | {"run_id": "resumed-run", "ok": False}
    part_two = report("nightly", 1, 500, hour=2) | {
        "run_id": "resumed-run", "resumed": True,
        "started_at": (T0 + timedelta(days=1, hours=1)).isoformat(timespec="seconds")}
    for run in (first, part_one, part_two):
        store_report(opensearch_client, indexed.prefix, run, budget=30)
    opensearch_client.indices.refresh(index=f"{indexed.prefix}crawl-runs")
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")

    runs = json_out(run_cli(["status", "--json"], env))["crawl_runs"]["runs"]
    assert [(r["run_id"], r["listings"], r.get("parts")) for r in runs] == [
        ("resumed-run", 1100, 2), ("nightly-0", 1000, None)]
    assert runs[0]["ok"] is True and runs[0]["drops"] == []  # the last part's verdict
    assert runs[0]["pages"]["parsed"] == 200


def test_status_reads_run_report_files_when_no_index_holds_them(
        indexed: OpenSearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    for run in RUNS:
        write_report(run, folder / f"{run['job']}-{run['finished_at'][:10]}.json")
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl",
                  RUN_REPORT=folder / "%(job)s-%(time)s.json")

    runs = json_out(run_cli(["status", "--json"], env))["crawl_runs"]
    assert runs["source"] == f"reports in {folder}"
    assert [r["listings"] for r in runs["runs"]] == [52, 300, 1100, 50, 1000]
    assert runs["runs"][1]["drops"][0].startswith("listings 1100 -> 300")
    explicit = json_out(run_cli(["status", "--json", "--reports", str(folder)],
                                cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "x.jsonl")))
    assert explicit["crawl_runs"]["source"] == f"reports in {folder}"
    assert json.loads((folder / "nightly-2026-11-22.json").read_text())["listings"] == 300
