"""The SQLite lookup cache: TTLs for hits and misses, shared by processes."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

from scholarindex.enrichment.cache import FILENAME, LookupCache

HIT = [{"id": "2205.14465", "title": "ByteComp"}]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_hits_and_misses_expire_after_their_own_ttl(tmp_path: Path) -> None:
    clock = Clock()
    cache = LookupCache(tmp_path, hit_ttl=7 * 86400, miss_ttl=86400, clock=clock)
    cache.put("bytecomp revisiting", HIT, found=True)
    cache.put("not on arxiv at all", [], found=False, reason="")
    cache.put("refused title", [], found=False, reason="arXiv rejected this title's query")
    clock.now += 86400 - 1
    hit, miss, refused = (cache.get(k) for k in ("bytecomp revisiting", "not on arxiv at all",
                                                  "refused title"))
    assert hit is not None and hit.candidates == HIT and hit.found
    assert miss is not None and miss.candidates == [] and not miss.found
    assert refused is not None and refused.reason.startswith("arXiv rejected")
    clock.now += 2
    assert cache.get("not on arxiv at all") is None  # a miss is asked again after a day
    assert cache.get("bytecomp revisiting") is not None
    clock.now += 6 * 86400
    assert cache.get("bytecomp revisiting") is None


def test_get_many_returns_only_known_keys(tmp_path: Path) -> None:
    cache = LookupCache(tmp_path, hit_ttl=60, miss_ttl=60)
    cache.put_many([(f"title {i}", HIT, True, "") for i in range(700)])
    found = cache.get_many([f"title {i}" for i in range(0, 1400, 2)])
    assert len(found) == 350
    assert cache.get("never stored") is None


def test_database_is_in_wal_mode(tmp_path: Path) -> None:
    LookupCache(tmp_path, hit_ttl=60, miss_ttl=60)
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _writer(directory: str, prefix: str, count: int) -> None:
    cache = LookupCache(directory, hit_ttl=600, miss_ttl=60)
    for i in range(count):
        cache.put(f"{prefix} {i}", HIT, found=True)
        cache.get(f"{prefix} {i // 2}")


def test_processes_write_concurrently_without_losing_rows(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), name, 150)) for name in "abc"]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    cache = LookupCache(tmp_path, hit_ttl=600, miss_ttl=60)
    assert len(cache.get_many(f"{p} {i}" for p in "abc" for i in range(150))) == 450


def test_rows_written_as_json_text_read_back_equal(tmp_path: Path) -> None:
    """Rows are read with orjson from the stored text's bytes: what ``json`` wrote, in this
    or an older version (escaped or raw non-ASCII, spaces after separators), reads the same."""
    candidates = [{"id": "2401.00001", "title": "Lévy — α-stable", "authors": ["José Núñez"],
                   "published": "2024-01-01T00:00:00+00:00", "doi": None, "categories": ["cs.LG"]}]
    cache = LookupCache(tmp_path, hit_ttl=86400, miss_ttl=86400)
    cache.put("escaped", candidates, found=True)  # json.dumps: ASCII with \u escapes
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        conn.execute("INSERT INTO lookups_v1 VALUES (?, ?, 1, '', 1.0, 1e18)",
                     ("raw utf-8", json.dumps(candidates, ensure_ascii=False, indent=1)))
        conn.execute("INSERT INTO lookups_v1 VALUES ('empty', '[]', 0, '', 1.0, 1e18)")
    rows = cache.get_many(["escaped", "raw utf-8", "empty"])
    assert rows["escaped"].candidates == rows["raw utf-8"].candidates == candidates
    assert rows["empty"].candidates == []
