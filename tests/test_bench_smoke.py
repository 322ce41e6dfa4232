"""The benchmark keeps working: a 30-profile ``python -m bench.run --quick`` writes every key.

The full run (``make bench``) is outside the test suite; this only checks that the
generator, the servers and every measured crawl still run end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.arxiv import IndexedArxivStandIn
from bench.generate import (
    TitleLookup,
    Work,
    arxiv_entries,
    build_site,
    check_sample,
    load_entries,
    write_site,
)
from bench.run import REQUIRED_KEYS, TARGETS, read_stats
from scholarindex.enrichment.query import build_query, query_key
from standins.arxiv import ArxivStandIn

ROOT = Path(__file__).resolve().parent.parent


def test_generated_site_is_deterministic_and_parses_as_generated(tmp_path: Path) -> None:
    site = build_site(60, seed=3)
    again = build_site(60, seed=3)
    assert [p.path for p in site.profiles] == [p.path for p in again.profiles]
    assert [w.title for w in site.works] == [w.title for w in again.works]
    summary = write_site(site, tmp_path, "http://127.0.0.1:1")
    assert summary.layout_a and summary.layout_b
    assert all(10 <= len(p.listings) <= 30 for p in site.profiles)
    assert 0.2 <= summary.share_on_2_plus <= 0.4
    assert summary.title_variant_listings > 0
    # Every page of both layouts reads back as generated (titles, work ids, authors, dates).
    assert check_sample(site, tmp_path, per_layout=60) == 60
    assert len((tmp_path / "urls.txt").read_text().splitlines()) == 60


def _work(index: int, title: str, year: int, authors: list[str]) -> Work:
    return Work(index, title, None, authors, year, 1, 1, "Conference", "V", "LG", None, False)


def test_no_arxiv_entry_verifies_for_a_second_generated_work() -> None:
    inner = _work(0, "Revisiting Optimal Transport for Fault-Tolerant Diffusion Models", 2023,
                  ["Chloe Ferreira", "Qishen Gao"])
    outer = _work(1, "Revisiting Optimal Transport for Fault-Tolerant Protein Structure "
                     "Prediction for Diffusion Models", 2023, ["Qishen Gao", "Ning Berg"])
    stranger = _work(2, outer.title.replace("Protein", "Graph"), 2023, ["Ning Berg"])
    titles = TitleLookup([inner, outer, stranger])
    # The inner title's words all sit in the outer one's, by a shared author, a year
    # apart at most: by the matching rules, a renamed paper; the outer entry is left out.
    assert titles.claimed(outer.title, outer.year, outer.authors, outer.index)
    # No author in common, or years apart: two papers, the entry stays.
    assert not titles.claimed(stranger.title, 2023, ["Ada Arxivson"], stranger.index)
    assert not titles.claimed(outer.title, 2019, outer.authors, outer.index)
    # A work's own entry is its own.
    assert not titles.claimed(inner.title, inner.year, inner.authors, inner.index)


def test_generated_entries_verify_only_for_their_own_work() -> None:
    site = build_site(120, seed=6)
    titles = TitleLookup(site.works)
    entries = arxiv_entries(site.works)
    assert len(entries) > sum(w.arxiv for w in site.works)  # decoys too
    for work in site.works:
        if work.arxiv:
            assert not titles.claimed(work.title, work.year, work.authors, work.index)


def test_indexed_stand_in_answers_as_the_scanning_one(tmp_path: Path) -> None:
    write_site(build_site(40, seed=5), tmp_path, "http://127.0.0.1:1")
    entries = load_entries(tmp_path)
    fast, slow = IndexedArxivStandIn(entries), ArxivStandIn(entries=entries)
    keys = [query_key(e["title"]) for e in entries[::7]] + ["graph neural", "nothing like this"]
    for start in range(0, len(keys), 20):
        query = build_query(keys[start:start + 20])
        assert fast.matches(query) == slow.matches(query)


def test_read_stats_takes_the_numbers_of_the_last_dump() -> None:
    log = ("x INFO: Dumping Scrapy stats:\n{'a/b': 1,\n 'elapsed_time_seconds': 2.5,\n"
           " 'finish_time': datetime.datetime(2026, 1, 1, 0, 0),\n 'z': 3}\nlater line\n")
    assert read_stats(log) == {"a/b": 1, "elapsed_time_seconds": 2.5, "z": 3}


@pytest.mark.slow
@pytest.mark.timeout(330)
def test_quick_bench_writes_every_key(tmp_path: Path) -> None:
    out = tmp_path / "bench-results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--profiles", "30", "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)  # a hang, not a speed check
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    missing = [key for key in REQUIRED_KEYS if key not in results]
    assert not missing, missing
    assert set(results["targets"]) == set(TARGETS)
    assert results["details"]["checks_failed"] == [], results["details"]["checks_failed"]
    assert results["raw_pages_per_s"] > 0 and results["pipeline_pages_per_s"] > 0
    assert results["arxiv_requests_warm"] == 0
    assert results["machine"]["cores"] >= 1
    assert "pipeline_to_raw_ratio" in proc.stdout  # the table was printed
