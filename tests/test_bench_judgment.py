"""A small run of the judgment benchmark (``python -m bench.judgment`` writes 400 profiles)."""

from __future__ import annotations

import pytest

from bench.judgment import main
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.settings import printed_figures, use_cluster_environment


def test_small_run_from_the_command_line(opensearch_config: OpenSearchConfig,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    use_cluster_environment(monkeypatch, opensearch_config)

    assert main(["--profiles", "20", "--batch-size", "100", "--use-env"]) == 0

    printed = printed_figures(capsys.readouterr().out)
    assert int(printed["listings"]) > 0
    assert 0 < int(printed["works"]) <= int(printed["listings"])
    assert 0 <= int(printed["hidden"]) < int(printed["works"])
    assert float(printed["writer_cpu_s"]) > 0
