"""HeapWatch: the writer child's memory diagnostic, off unless the environment asks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from scholarindex.runtime.heapwatch import (
    EVERY_VARIABLE,
    PATH_VARIABLE,
    HeapWatch,
    pymalloc,
)


def test_off_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATH_VARIABLE, raising=False)
    assert HeapWatch.from_environment() is None


def test_a_line_every_few_jobs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "heap.jsonl"
    monkeypatch.setenv(PATH_VARIABLE, str(out))
    monkeypatch.setenv(EVERY_VARIABLE, "2")
    watch = HeapWatch.from_environment()
    assert watch is not None
    for _ in range(5):
        watch.done({"changes": 3})
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["jobs"] for line in lines] == [2, 4]
    line = lines[0]
    assert line["changes"] == 3 and line["rss_mb"] > 0 and line["tracked"] > 0
    assert set(line["mappings_mb"]) == {"heap", "anonymous", "files"}
    assert line["types"] and "collected" not in line


@pytest.mark.skipif(sys.platform != "linux", reason="glibc and /proc")
def test_pymalloc_accounts_for_live_and_free_blocks() -> None:
    held = [(n, str(n)) for n in range(200_000)]
    before = pymalloc()
    del held[::2]  # half the blocks freed inside arenas that the rest keeps
    after = pymalloc()
    assert before["arenas"] > 0 and before["live_mb"] > after["live_mb"]
    assert after["free_mb"] > before["free_mb"]
