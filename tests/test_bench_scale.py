"""A small run of the scale benchmark (``make bench-scale`` builds 1,000,000 works)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from bench.generate import build_site
from bench.scale import change_pages, checks, run_scale, summary, truth_of, typo
from scholarindex.core.identity import work_id
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_name


def test_the_recrawl_changes_pages_as_planned() -> None:
    site = build_site(40, seed=3)
    before = truth_of(site)
    recrawl = change_pages(site, 0.25, seed=4)
    after = truth_of(site)
    assert len(recrawl.profiles) == 10
    for typoed, paper in recrawl.typos:
        assert typoed not in before and after[typoed] == paper
        # The paper keeps its other listings: the pass has something to join it to.
        assert len(site.works[paper].owners) > 1
    assert sum(1 for wid in after if wid not in before) == len(recrawl.typos) + recrawl.new_works
    assert work_id(typo(random.Random(1), "Scalable Inference")) != work_id("Scalable Inference")


@pytest.mark.slow
@pytest.mark.process
def test_smoke_run_on_300_works(opensearch_config: OpenSearchConfig,
                               opensearch_client: OpenSearch, tmp_path: Path) -> None:
    r = run_scale(opensearch_config, works=300, share=0.2, passes="both", work=tmp_path)
    # The bulk build wrote one document per paper (their printed variants share a work_id).
    assert r["size_after_build"]["works"] == r["site"]["papers"]
    assert r["build"]["listings"] > r["site"]["papers"]
    assert r["recrawl"]["pages_parsed"] == r["recrawl"]["profiles"] > 0
    assert r["recrawl"]["dead_lettered"] == 0
    for mode in ("incremental", "full"):
        ran = r["passes"][mode]
        assert ran["peak_memory_mb"] > 0 and ran["cpu_seconds"] > 0
    assert r["passes"]["full"]["report"]["documents"] >= r["size"]["works"]
    assert r["passes"]["incremental"]["report"]["mode"] == "incremental"
    assert r["same_clusters"] is True  # a full pass after it changed nothing
    assert r["search"]["crawl"]["searches"] > 0 and not r["search"]["errors"]
    assert r["size"]["bytes_per_work"] > 0
    assert r["size"]["works"] == (r["site"]["papers"] + r["recrawl"]["new_papers"]
                                  + r["recrawl"]["typo_listings"] - r["typos_joined"])
    assert [c for c in checks(r) if "shown twice" not in c] == []


@pytest.mark.slow
@pytest.mark.process
def test_a_build_kept_serves_a_later_recrawl(opensearch_config: OpenSearchConfig,
                                            opensearch_client: OpenSearch,
                                            tmp_path: Path) -> None:
    built = run_scale(opensearch_config, works=300, share=0.2, passes="none", work=tmp_path,
                      settle="marks", stage="build")
    assert "recrawl" not in built
    r = run_scale(opensearch_config, works=300, share=0.2, passes="incremental",
                  work=tmp_path, stage="recrawl", days=2)
    assert "build" not in r and len(r["days"]) == 2 and r["recrawl"] == r["days"][1]["recrawl"]
    for day in r["days"]:  # each day another share of the profiles, and its pass
        assert day["recrawl"]["pages_parsed"] == day["recrawl"]["profiles"] > 0
        assert 0 < day["typos_joined"] <= day["recrawl"]["typo_listings"]
        assert day["passes"]["incremental"]["report"]["mode"] == "incremental"
    assert (tmp_path / "pass-incremental.log").exists()
    assert (tmp_path / "pass-incremental-day2.log").exists()
    assert "day 2:" in summary(r)
    # The re-crawled pages are the built profiles, not new ones.
    researchers = alias_name(opensearch_config.prefix, "researchers")
    opensearch_client.indices.refresh(index=researchers)
    assert opensearch_client.count(index=researchers)["count"] == built["site"]["profiles"]
