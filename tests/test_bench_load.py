"""The load benchmark's parts, and short runs (``python -m bench.load`` does 50 clients, 60 s)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.load import Probe, failures, request_pool, run, verdict
from bench.search_data import index_fixtures
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.ops import cli_env
from tests.support.settings import LAYOUT

TITLES = ["Load balancing for mixture of experts", "Variational inference at scale",
          "Graph neural networks for storage"]
FACETS = {"year": [2024, 2025], "category": ["LG", "DC"], "venue": ["arXiv"]}


def test_the_request_pool_is_reproducible_and_mixed():
    pool = request_pool(TITLES, FACETS, ["Chao Jin"], count=200)
    assert pool == request_pool(TITLES, FACETS, ["Chao Jin"], count=200)
    assert {p.endpoint for p in pool} == {"api", "html"}
    assert all(p.path.startswith("/api/search?" if p.endpoint == "api" else "/?") for p in pool)
    assert any("year=" in p.path for p in pool) and any("sort=newest" in p.path for p in pool)
    assert any("page=2" in p.path for p in pool)
    assert any(not p.text for p in pool)  # facet browsing, no text


def test_a_wrong_total_or_an_empty_answer_is_caught():
    api = Probe("/api/search?q=graph", "api", True, total=3)
    assert verdict(api, json.dumps({"total": 3}), check_totals=True) is None
    assert "total 4" in verdict(api, json.dumps({"total": 4}), check_totals=True)
    assert verdict(api, json.dumps({"total": 4}), check_totals=False) is None
    assert "no results" in verdict(api, json.dumps({"total": 0}), check_totals=False)
    page = Probe("/?q=graph", "html", True, total=3)
    assert verdict(page, "<a>Show the 3 works ↓</a>", check_totals=True) is None
    assert "total 2" in verdict(page, "<a>Show the 2 works ↓</a>", check_totals=True)
    assert "no results" in verdict(page, '<div class="no-results">', check_totals=False)
    assert "neither" in verdict(page, "<html>Internal error</html>", check_totals=False)


def _env(config: OpenSearchConfig, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, **cli_env(config, INDEX_DEADLETTER_PATH=tmp_path / "dl.jsonl")}


@pytest.mark.slow
@pytest.mark.process
def test_a_short_load_answers_every_request_right(opensearch_client, opensearch_config,
                                                  tmp_path):
    index_fixtures(opensearch_client, opensearch_config.prefix, tmp_path / "fixtures-dl.jsonl",
                   layout=LAYOUT)
    figures = run(_env(opensearch_config, tmp_path), clients=4, seconds=2, max_requests=400,
                  log=lambda _: None)
    assert figures["failed"] == [] and failures(figures) == []
    assert figures["errors"] == 0 and figures["wrong_answers"] == 0
    assert 0 < figures["requests"] <= 400 and figures["rps"] > 0
    overall = figures["latency_ms"]["all"]
    assert overall["count"] == figures["requests"]
    assert 0 < overall["p50"] <= overall["p95"] <= overall["p99"] <= overall["max"]
    assert figures["works"] == 42


@pytest.mark.slow
@pytest.mark.process
def test_a_load_through_writes_and_a_reindex_switch_stays_right(
        opensearch_client, opensearch_config, tmp_path):
    index_fixtures(opensearch_client, opensearch_config.prefix, tmp_path / "fixtures-dl.jsonl",
                   layout=LAYOUT)
    figures = run(_env(opensearch_config, tmp_path), clients=3, seconds=4, max_requests=2000,
                  during_reindex=True, work_dir=tmp_path, log=lambda _: None)
    assert figures["failed"] == [], figures["failed"]
    reindexed, writes = figures["reindex"], figures["writes"]
    assert reindexed["exit_status"] == 0 and reindexed["switched"]
    assert reindexed["alias_after"] != reindexed["alias_before"]
    assert writes["works"] > 0 and writes["lost"] == []
    assert figures["errors"] == 0 and figures["wrong_answers"] == 0 and figures["requests"] > 0
