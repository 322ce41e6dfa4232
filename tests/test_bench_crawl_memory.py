"""A small run of ``python -m bench.crawl_memory`` (two pipeline crawls into the node)."""

from __future__ import annotations

import pytest

from bench.crawl_memory import main
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.settings import printed_figures, use_cluster_environment


def test_two_crawls_print_their_peaks(opensearch_config: OpenSearchConfig,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    use_cluster_environment(monkeypatch, opensearch_config)

    assert main(["--profiles", "12", "--small", "4", "--use-env"]) == 0

    printed = printed_figures(capsys.readouterr().out)
    assert (printed["small_profiles"], printed["large_profiles"]) == ("4", "12")
    for size in ("small", "large"):
        assert float(printed[f"{size}_peak_mb"]) > 0
        assert float(printed[f"{size}_largest_process_mb"]) > 0
        assert float(printed[f"{size}_writer_cpu_ms_per_page"]) > 0
