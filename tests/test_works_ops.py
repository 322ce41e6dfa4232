"""``scholarindex works`` and ``GET /api/works/{id}``: why listings are one work, and
decisions that overrule the matcher."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient
from opensearchpy import OpenSearch

from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.ops import cli_env, run_cli
from tests.support.search_site import app_for
from tests.support.works import CUT, LISTINGS, ORIGINAL, OTHER, T1, TYPO


def indexed(make_writer: Callable[..., BulkWriter]) -> None:
    report = make_writer().write([change_from_item(item, T1) for item in LISTINGS])
    assert not report.fatal


def test_resolve_explain_keep_apart_and_forget(
        tmp_path: Path, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    indexed(make_writer)
    env = cli_env(opensearch_config)

    dry = run_cli(["works", "resolve", "--dry-run", "--json"], env)
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.output)["changes"]
    done = json.loads(run_cli(["works", "resolve", "--json"], env).output)
    assert done["groups_changed"] >= 1 and done["conflicts"] == 0

    explained = json.loads(run_cli(["works", "explain", TYPO["work_id"], "--json"], env).output)
    assert {ORIGINAL["work_id"], TYPO["work_id"]} <= set(explained["work_ids"])
    why = {j["work_id"]: j for j in explained["joined"]}
    joined_id = max(ORIGINAL["work_id"], TYPO["work_id"])
    assert why[joined_id]["by"] == "match" and why[joined_id]["evidence"]
    assert "joined" in run_cli(["works", "explain", TYPO["work_id"]], env).output

    apart = run_cli(["works", "keep-apart", ORIGINAL["work_id"], TYPO["work_id"],
                     "--note", "two editions"], env)
    assert apart.exit_code == 0, apart.output
    split = json.loads(run_cli(["works", "explain", TYPO["work_id"], "--json"], env).output)
    assert ORIGINAL["work_id"] not in split["work_ids"]
    listed = json.loads(run_cli(["works", "decisions", "--json"], env).output)
    assert [(d["kind"], d["note"]) for d in listed] == [("apart", "two editions")]

    forgot = run_cli(["works", "forget", TYPO["work_id"], ORIGINAL["work_id"]], env)
    assert "forgot 1 decision" in forgot.output
    assert run_cli(["works", "decisions"], env).output.strip() == "no decisions"


def test_compare_gives_the_matchers_verdict_and_ops_decisions_on_a_pair(
        opensearch_config: OpenSearchConfig, make_writer: Callable[..., BulkWriter]) -> None:
    indexed(make_writer)
    env = cli_env(opensearch_config)
    run_cli(["works", "resolve"], env)

    def compare(first: str, second: str) -> dict:
        result = run_cli(["works", "compare", first, second, "--json"], env)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    joined = compare(ORIGINAL["work_id"], TYPO["work_id"])
    assert joined["one_work"] and joined["verdict"]["match"]
    assert joined["first"]["work"] == joined["second"]["work"]
    assert joined["second"]["titles"] == [TYPO["title"]]
    assert joined["second"]["authors"] == ["Ann Lee", "Bob Stone"]

    other = compare(ORIGINAL["work_id"], OTHER["work_id"])
    assert not other["one_work"] and not other["verdict"]["match"]
    assert other["verdict"]["evidence"] and other["decisions"] == []
    shown = run_cli(["works", "compare", ORIGINAL["work_id"], OTHER["work_id"]], env).output
    assert "matcher: apart" in shown and "now: two works" in shown

    run_cli(["works", "keep-apart", TYPO["work_id"], ORIGINAL["work_id"], "--note", "editions"],
            env)
    kept = compare(ORIGINAL["work_id"], TYPO["work_id"])
    assert not kept["one_work"] and kept["verdict"]["match"]
    assert [(d["kind"], d["note"]) for d in kept["decisions"]] == [("apart", "editions")]
    shown = run_cli(["works", "compare", ORIGINAL["work_id"], TYPO["work_id"]], env).output
    assert "now: two works, as ops decided: apart" in shown


def test_review_lists_the_matchers_joins_thinnest_evidence_first(
        opensearch_config: OpenSearchConfig, make_writer: Callable[..., BulkWriter]) -> None:
    indexed(make_writer)
    env = cli_env(opensearch_config)
    assert "no joins made by the matcher" in run_cli(["works", "review"], env).output
    run_cli(["works", "resolve"], env)

    rows = json.loads(run_cli(["works", "review", "--json"], env).output)
    one_paper = {ORIGINAL["work_id"], TYPO["work_id"], CUT["work_id"]}
    assert len(rows) == 2 and {r["work_id"] for r in rows} < one_paper
    assert all(r["work"] == min(one_paper) and r["evidence"] for r in rows)
    assert rows == sorted(rows, key=lambda r: (r["strong"], r["score"], r["work_id"]))
    title_of = {item["work_id"]: item["title"] for item in (ORIGINAL, TYPO, CUT)}
    assert all(r["titles"] == [title_of[r["work_id"]]] for r in rows)

    first = json.loads(run_cli(["works", "review", "--limit", "1", "--json"], env).output)
    assert first == rows[:1]
    shown = run_cli(["works", "review"], env).output
    assert "works keep-apart WORK_ID JOINED_TO" in shown and rows[0]["work_id"] in shown
    assert run_cli(["works", "review", "--limit", "0"], env).exit_code == 2


def test_explaining_an_unknown_id_and_a_bad_decision_fail_clearly(
        opensearch_config: OpenSearchConfig, make_writer: Callable[..., BulkWriter]) -> None:
    indexed(make_writer)
    env = cli_env(opensearch_config)
    missing = run_cli(["works", "explain", "0000000000000000"], env)
    assert missing.exit_code == 1 and "no work holds 0000000000000000" in missing.output
    unknown = run_cli(["works", "compare", TYPO["work_id"], "0000000000000000"], env)
    assert unknown.exit_code == 1
    assert "no work holds listings of 0000000000000000" in unknown.output
    same = run_cli(["works", "join", TYPO["work_id"], TYPO["work_id"]], env)
    assert same.exit_code == 2 and "two different work ids" in same.output


def test_the_work_api_says_why_each_listing_joined(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    indexed(make_writer)
    run_cli(["works", "resolve"], cli_env(opensearch_config))
    http = TestClient(app_for(opensearch_config))
    work = http.get(f"/api/works/{TYPO['work_id']}").json()
    assert {item["work_id"] for item in work["listings"]} >= {ORIGINAL["work_id"],
                                                              TYPO["work_id"]}
    by = {item["work_id"]: item["joined"] for item in work["listings"]}
    assert by[work["id"]]["by"] == "title"
    other = next(wid for wid in by if wid != work["id"] and wid in (ORIGINAL["work_id"],
                                                                    TYPO["work_id"]))
    assert by[other]["by"] == "match" and by[other]["score"] > 0
    assert http.get("/api/works/nothing-here").status_code == 404
