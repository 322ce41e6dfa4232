"""A small run of the crawl-side CPU benchmark (``python -m bench.crawl_cpu`` crawls 1,500)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.crawl_cpu import main
from engine.cluster import free_port


def test_small_run_prints_every_stage_and_dumps_the_same_records_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    assert main(["--profiles", "12", "--repeats", "1", "--workdir", str(work)]) == 0
    median = capsys.readouterr().out.splitlines()[-1]
    figures = dict(zip(median.split()[5::2], map(float, median.split()[6::2]), strict=True))
    assert figures["parse"] > 0 and figures["enrichment"] > 0 and figures["total"] > 0

    port = str(free_port())  # the same for both dumps; outside the range outgoing ports take
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    for dump in (first, second):
        assert main(["--profiles", "12", "--workdir", str(work), "--dump", str(dump),
                     "--port", port]) == 0
    records = [json.loads(line) for line in first.read_text("utf-8").splitlines()]
    assert sum(r["kind"] == "researcher" for r in records) == 12
    assert all(r["enrichment"]["status"] in ("done", "none") for r in records
               if r["kind"] == "work")
    assert first.read_bytes() == second.read_bytes()
