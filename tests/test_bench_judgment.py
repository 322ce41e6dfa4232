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


def test_memory_figures_every_few_profiles(opensearch_config: OpenSearchConfig,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    use_cluster_environment(monkeypatch, opensearch_config)

    assert main(["--profiles", "30", "--stop-at", "20", "--batch-size", "100",
                 "--memory-every", "10", "--use-env"]) == 0

    out = capsys.readouterr().out
    marks = [dict(zip(line.split()[1::2], line.split()[2::2], strict=True))
             for line in out.splitlines() if line.startswith("memory ")]
    assert [mark["profiles"] for mark in marks] == ["0", "10", "20"]
    assert all(float(mark["rss_mb"]) > 0 for mark in marks)
    assert int(marks[-1]["cache_entries"]) > int(marks[0]["cache_entries"])
    caches = {line.split()[1]: line for line in out.splitlines() if line.startswith("cache ")}
    assert "core.resolution.similarity.title_words" in caches
