"""A small run of the reindex benchmark (``python -m bench.reindex`` loads 100k works)."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from bench.reindex import run
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_target


@pytest.mark.slow
def test_smoke_run_on_300_works(opensearch_config: OpenSearchConfig,
                               opensearch_client: OpenSearch) -> None:
    lines: list[str] = []
    rows = run(opensearch_config, works=300, batch_size=100, log=lines.append)
    assert [r.label for r in rows] == ["reindex (server-side copy)", "reindex --rebuild"]
    for row in rows:
        assert row.result.ok and row.result.switched and row.result.docs == 300
        assert row.result.seconds["total"] > 0 and row.result.seconds["copy"] > 0
        assert row.searches > 0 and row.failed_searches == 0 and row.empty_searches == 0
    prefix = rows[0].result.alias.removesuffix("works")
    assert alias_target(opensearch_client, prefix, "works") == rows[1].result.new_index
    assert any("docs/s" in line for line in lines)
