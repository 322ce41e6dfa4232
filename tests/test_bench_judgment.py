"""A small run of the judgment benchmark (``python -m bench.judgment`` writes 400 profiles)."""

from __future__ import annotations

import pytest

from bench.judgment import main
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.settings import cluster_environment


def test_small_run_from_the_command_line(opensearch_config: OpenSearchConfig,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = opensearch_config
    for name, value in cluster_environment(config).items():
        monkeypatch.setenv(name, value)

    assert main(["--profiles", "20", "--batch-size", "100", "--use-env"]) == 0

    printed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines()
                   if not line.startswith("OpenSearch "))
    assert int(printed["listings"]) > 0
    assert 0 < int(printed["works"]) <= int(printed["listings"])
    assert 0 <= int(printed["hidden"]) < int(printed["works"])
    assert float(printed["writer_cpu_s"]) > 0
