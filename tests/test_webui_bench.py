"""A small run of the search latency benchmark (``python -m bench.search`` does 100k)."""

from __future__ import annotations

import pytest

from bench.search import figures, queries, run
from bench.search_data import synthetic_works
from webui.params import SearchRequest


def test_synthetic_works_have_the_index_shape():
    docs = list(synthetic_works(50, seed=3))
    assert docs == list(synthetic_works(50, seed=3))  # reproducible
    assert len({d["work_id"] for d in docs}) == 50
    assert any(d["profile_count"] == 2 for d in docs)
    assert {"title", "abstract", "year", "authors", "profiles", "categories", "arxiv_id"} <= set(
        docs[0])


def test_queries_are_valid_requests_and_reproducible():
    made = queries(200, ("graph", "learning"), (2000, 2026), ["LG"])
    assert len(made) == 200 and all(isinstance(r, SearchRequest) for r in made)
    assert made == queries(200, ("graph", "learning"), (2000, 2026), ["LG"])
    assert any(r.filters for r in made) and any(r.sort == "newest" for r in made)


def test_percentiles():
    row = figures("x", [i / 1000 for i in range(1, 101)])  # 1..100 ms
    assert (row.p50, row.p95, row.max) == (50.0, 95.0, 100.0)


@pytest.mark.slow
def test_smoke_run_on_300_works(opensearch_config):
    rows = run(opensearch_config, works=300, count=10, log=lambda _: None)
    labels = [r.label for r in rows]
    assert labels == ["fixtures (42 works): SearchService.search",
                      "fixtures (42 works): GET / (HTML)",
                      "synthetic (300 works): SearchService.search"]
    for row in rows:
        assert row.count == 10 and 0 < row.p50 <= row.p95 <= row.max
