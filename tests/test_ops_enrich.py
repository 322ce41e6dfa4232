"""``scholarindex enrich --pending`` against the stand-in arXiv and the real local server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

import scholarindex.ops.enrich
from bench.search_data import index_fixtures
from scholarindex.core.identity import work_id
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import enrichment_change
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_name
from scholarindex.ops import console
from standins.arxiv import ARXIV_ID_OF_SEED, ArxivStandIn
from tests.support.index_contents import snapshot
from tests.support.ops import cli_env, json_out, last_line, run_cli
from tests.support.settings import LAYOUT

EXPECTED = {work_id(title): arxiv_id for title, arxiv_id in ARXIV_ID_OF_SEED.items()}


@pytest.fixture
def arxiv_api() -> Iterator[ArxivStandIn]:
    with ArxivStandIn(hang_seconds=3) as server:
        yield server


@pytest.fixture
def pending(opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
            make_writer: Callable[..., BulkWriter], tmp_path: Path) -> list[str]:
    """The fixture pages indexed, every work marked pending as a crawl with arXiv down leaves it."""
    index_fixtures(opensearch_client, opensearch_config.prefix, tmp_path / "fixtures-dl.jsonl",
                   layout=LAYOUT)
    works = sorted(snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works")))
    report = make_writer().write([
        enrichment_change(w, status="pending", reason="arXiv unavailable: HTTP 503",
                          at="2026-11-22T00:00:00Z") for w in works])
    assert report.enrichments_delivered == len(works)
    return works


def arxiv_env(config: OpenSearchConfig, api: ArxivStandIn, tmp_path: Path,
              **extra: str) -> dict[str, str]:
    return cli_env(config, ARXIV_API_URL=api.api_url, ARXIV_DELAY_SECONDS="0.02",
                   ARXIV_CACHE_DIR=tmp_path / "arxiv-cache", ARXIV_BACKOFF_SECONDS="0.02",
                   ARXIV_BACKOFF_MAX_SECONDS="0.1", ARXIV_TIMEOUT_SECONDS="2",
                   INDEX_DEADLETTER_PATH=tmp_path / "dl.jsonl", **extra)


def test_enrich_pending_completes_every_pending_work(
        pending: list[str], arxiv_api: ArxivStandIn, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    env = arxiv_env(opensearch_config, arxiv_api, tmp_path)

    result = run_cli(["enrich", "--pending", "--json"], env)

    assert result.exit_code == 0, result.output
    report = json_out(result)
    assert report["ok"] and report["pending_before"] == len(pending)
    assert report["attempted"] == len(pending) == report["written"]
    assert report["still_pending"] == 0
    docs = snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works"))
    matched = {w: d["arxiv_id"] for w, d in docs.items() if d["enrichment"]["status"] == "done"}
    assert report["matched"] == len(matched) > 0
    for work, arxiv_id in matched.items():  # every id attached is the right one
        assert arxiv_id in {EXPECTED.get(w) for w in docs[work]["work_ids"]}
    assert all(d["enrichment"]["status"] in ("done", "none") for d in docs.values())
    assert arxiv_api.request_count >= 1
    status = json_out(run_cli(["status", "--json"], env))
    assert status["enrichment_pending"] == 0


def test_limit_and_a_second_run(pending: list[str], arxiv_api: ArxivStandIn,
                                opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    env = arxiv_env(opensearch_config, arxiv_api, tmp_path)
    first = json_out(run_cli(["enrich", "--pending", "--limit", "5", "--json"], env))
    assert first["attempted"] == 5 and first["pending_before"] == len(pending)
    second = json_out(run_cli(["enrich", "--pending", "--json"], env))
    assert second["pending_before"] == len(pending) - 5 == second["attempted"]
    third = run_cli(["enrich", "--pending"], env)
    assert third.exit_code == 0 and "0 of 0 pending" in third.stdout


def test_arxiv_down_leaves_works_pending_and_exits_non_zero(
        pending: list[str], arxiv_api: ArxivStandIn, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # several chunks from the fixture's works
    monkeypatch.setattr(scholarindex.ops.enrich, "CHUNK", 10)
    arxiv_api.fail_next("503", times=1000)
    env = arxiv_env(opensearch_config, arxiv_api, tmp_path, ARXIV_MAX_ATTEMPTS="2")

    result = run_cli(["enrich", "--pending", "--json"], env)

    assert result.exit_code == console.EXIT_FAILED
    report = json_out(result)
    assert report["still_pending"] == report["attempted"] > 0
    assert report["attempted"] < len(pending)  # stopped at the first chunk arXiv failed
    assert "still pending" in last_line(result.stderr) and "503" in last_line(result.stderr)
    docs = snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works"))
    assert all(d["enrichment"]["status"] == "pending" for d in docs.values())


def test_enrich_needs_pending_and_valid_settings(opensearch_config: OpenSearchConfig,
                                                 tmp_path: Path) -> None:
    plain = run_cli(["enrich"], cli_env(opensearch_config))
    assert plain.exit_code == console.EXIT_USAGE and "--pending" in last_line(plain.stderr)
    bad = run_cli(["enrich", "--pending"], cli_env(opensearch_config, ARXIV_BATCH_SIZE="lots"))
    assert bad.exit_code == console.EXIT_USAGE and "ARXIV_BATCH_SIZE" in last_line(bad.stderr)
