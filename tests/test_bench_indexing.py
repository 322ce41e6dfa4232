"""A small run of the bulk writer benchmark (``python -m bench.indexing`` writes 20,000)."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from bench.indexing import main
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.settings import printed_figures, use_cluster_environment


def test_small_run_from_the_command_line(opensearch_config: OpenSearchConfig,
                                         opensearch_client: OpenSearch,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    use_cluster_environment(monkeypatch, opensearch_config)

    assert main(["--listings", "400", "--batch-size", "100", "--use-env"]) == 0

    printed = printed_figures(capsys.readouterr().out)
    figures = {name: float(value) for name, value in printed.items()}
    assert figures["listings"] == 400 and figures["batch_size"] == 100
    for run in ("first", "recrawl"):
        # 200 works, each listed twice: one write per work and batch it appears in.
        assert 200 <= figures[f"{run}_docs_written"] <= 400
        assert figures[f"{run}_docs_per_s"] > 0 and figures[f"{run}_docs_per_bulk"] > 0
        assert figures[f"{run}_dead_lettered"] == 0
    opensearch_client.indices.refresh(index=f"{opensearch_config.prefix}bench*")
    assert opensearch_client.count(index=f"{opensearch_config.prefix}bench*works")["count"] == 200
