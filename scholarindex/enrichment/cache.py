"""A persistent cache of title lookups in ``ARXIV_CACHE_DIR`` (SQLite).

One row per title key: the candidate entries arXiv returned for that title
(verified per listing when read, since two listings of one title may name
different people) and whether any verified. A lookup that verified lives
``hit_ttl`` seconds; one that did not, or that arXiv refused, lives the shorter
``miss_ttl``, so a paper that reaches arXiv later is found by a later crawl.

Several crawls on one machine share the file: WAL lets readers run beside the
one writer, and the busy timeout makes a writer wait instead of failing.
Each thread gets its own connection, opened on first use and kept: opening one
costs more than the lookup, and the reactor thread reads once per work item.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

import orjson

from scholarindex.enrichment.sqlite import ThreadLocalSQLite

FILENAME = "arxiv-lookups.sqlite3"
# Bump when the key or the stored metadata changes shape: old rows are ignored.
_TABLE = "lookups_v1"


class CachedLookup(NamedTuple):
    """What arXiv answered for one title key (a named tuple: the crawl makes one for every
    title of every page, and a frozen dataclass's fields cost a call each to set)."""

    key: str
    candidates: list[dict]
    found: bool
    reason: str
    fetched_at: float


def _decoded(candidates: bytes) -> list[dict]:
    """A row's candidates (the stored JSON's UTF-8 bytes); most titles found nothing on
    arXiv, so skip decoding for those.

    Rows are read on the crawl's reactor thread, every title of every page: orjson reads
    the JSON ``put_many`` writes (and older versions wrote) several times faster than
    ``json``, and from bytes, so SQLite's text needs no ``str`` made of it first.
    """
    return [] if candidates == b"[]" else orjson.loads(candidates)


class LookupStore(Protocol):
    """What the resolver reads and writes: this machine's ``LookupCache``, or the cache
    the workers of a deployment share (``shared_cache.SharedLookupCache``)."""

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedLookup]: ...

    def put_many(self, rows: Iterable[tuple[str, list[dict], bool, str]]) -> None: ...


@runtime_checkable
class ClaimingStore(LookupStore, Protocol):
    """A shared store that also hands out titles to ask arXiv for, one worker each."""

    def claim(self, keys: list[str], hold: float) -> tuple[list[str], list[str]]: ...

    def release(self, keys: list[str]) -> None: ...

    def wait_for(self, keys: list[str], timeout: float) -> list[str]: ...


class LookupCache(ThreadLocalSQLite):
    """Title key -> candidates, with a time-to-live per row."""

    def __init__(self, directory: str | Path, hit_ttl: float, miss_ttl: float,
                 busy_timeout: float = 30.0, clock: Callable[[], float] = time.time) -> None:
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        super().__init__(self.directory / FILENAME, busy_timeout)
        self.hit_ttl = hit_ttl
        self.miss_ttl = miss_ttl
        self._clock = clock
        with closing(self._open()) as conn, conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY,"
                " candidates TEXT NOT NULL, found INTEGER NOT NULL, reason TEXT NOT NULL,"
                " fetched_at REAL NOT NULL, expires_at REAL NOT NULL)"
            )


    def get_many(self, keys: Iterable[str]) -> dict[str, CachedLookup]:
        """The unexpired rows among ``keys``."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CachedLookup] = {}
        now = self._clock()
        conn = self._connection()
        for start in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT key, CAST(candidates AS BLOB), found, reason, fetched_at FROM {_TABLE}"
                f" WHERE key IN ({marks}) AND expires_at > ?", (*chunk, now)
            )
            for key, candidates, hit, reason, fetched_at in rows:
                found[key] = CachedLookup(key, _decoded(candidates), bool(hit), reason,
                                          fetched_at)
        return found

    def get(self, key: str) -> CachedLookup | None:
        """The unexpired row for ``key``, if any."""
        return self.get_many([key]).get(key)

    def put_many(self, rows: Iterable[tuple[str, list[dict], bool, str]]) -> None:
        """Store ``(key, candidates, found, reason)`` rows; ``found`` picks the TTL."""
        now = self._clock()
        values = [
            (key, json.dumps(candidates), int(found), reason, now,
             now + (self.hit_ttl if found else self.miss_ttl))
            for key, candidates, found, reason in rows
        ]
        if not values:
            return
        with self._connection() as conn:  # one transaction
            conn.executemany(f"INSERT OR REPLACE INTO {_TABLE} VALUES (?, ?, ?, ?, ?, ?)", values)
            conn.execute(f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (now,))

    def put(self, key: str, candidates: list[dict], found: bool, reason: str = "") -> None:
        """Store one row (see ``put_many``)."""
        self.put_many([(key, candidates, found, reason)])
