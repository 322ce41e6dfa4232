"""The local arXiv mirror: harvested records, a full-text index over their titles, and
where each harvest stands. One SQLite file in ``ARXIV_CACHE_DIR``.

* ``records``: one row per article (id, datestamp, OAI sets, the metadata dict of
  ``scholarindex.enrichment.metadata``, every version's submission time), upserted by id, so a
  record harvested twice (an overlapping incremental run, a restart, a paper in two
  sets) is held once;
* ``titles``: an FTS5 index (external content, kept by triggers) over each title's
  plain words (``query.query_key``), Porter-stemmed, so "Rollouts" finds "Rollout";
* ``harvests``: per scope (an OAI set, or "" for all of arXiv) the days fully
  harvested and the run in progress: its window, the last resumption token and the
  checkpoint datestamp to restart from when the token has expired.

``candidates(key)`` finds the entries whose title holds every word of a title key
(stop words aside, in any order): as loose as the query API's phrase search, so
verification (``matching``) sees the same candidates it would get from arXiv.

Readers (the enricher's worker thread, ``scholarindex status``) and the one
harvester share the file through WAL; each thread gets its own connection.

``RECORDS_FORMAT`` (SQLite's ``user_version``) says how the records were read. Format
1 came from arXiv's ``arXiv`` metadata format, whose date on the current endpoint is
the latest version's, so its ``published`` dates are wrong for every revised paper.
A mirror in an older format does not answer "not on arXiv" (``answers_misses``), and
when the harvester opens it every scope's harvest state is forgotten (``repair``), so
the next harvest asks for everything again and overwrites each record; ``rebuild``
also drops the records first.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scholarindex.enrichment.oaipmh import Record
from scholarindex.enrichment.query import query_key
from scholarindex.enrichment.sqlite import ThreadLocalSQLite

FILENAME = "arxiv-mirror.sqlite3"
ALL = ""  # the scope of a harvest without a set: all of arXiv
# Words arXiv's search ignores; requiring them would miss "a"/"the" edits in a title.
STOP_WORDS = frozenset("a an and are as at be by for from in into is it of on or the to via "
                       "with".split())
MAX_CANDIDATES = 100
# How records are read (see the module doc); raise it when a change makes held rows wrong.
RECORDS_FORMAT = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, datestamp TEXT NOT NULL,
    sets TEXT NOT NULL, title_key TEXT NOT NULL, metadata TEXT NOT NULL,
    versions TEXT NOT NULL DEFAULT '[]');
CREATE VIRTUAL TABLE IF NOT EXISTS titles USING fts5(
    title_key, content='records', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
    INSERT INTO titles(rowid, title_key) VALUES (new.rowid, new.title_key);
END;
CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
    INSERT INTO titles(titles, rowid, title_key) VALUES ('delete', old.rowid, old.title_key);
END;
CREATE TRIGGER IF NOT EXISTS records_au AFTER UPDATE ON records BEGIN
    INSERT INTO titles(titles, rowid, title_key) VALUES ('delete', old.rowid, old.title_key);
    INSERT INTO titles(rowid, title_key) VALUES (new.rowid, new.title_key);
END;
CREATE TABLE IF NOT EXISTS harvests (
    scope TEXT PRIMARY KEY, complete_from TEXT, complete_until TEXT, finished_at TEXT,
    run_from TEXT, run_until TEXT, token TEXT, token_expires TEXT, checkpoint TEXT,
    ordered INTEGER NOT NULL DEFAULT 1, run_records INTEGER NOT NULL DEFAULT 0,
    run_requests INTEGER NOT NULL DEFAULT 0, complete INTEGER NOT NULL DEFAULT 0);
"""


@dataclass(frozen=True)
class HarvestState:
    """Where the harvest of one scope stands.

    complete: some harvest of this scope has finished; it then covers the days from
    ``complete_from`` (None: from arXiv's first record) to ``complete_until``.
    A run in progress has ``run_until`` set; it restarts with ``token`` while that is
    valid, else from ``checkpoint``, the datestamp before which every record of the
    run is stored (its ``run_from`` unless records came in datestamp order).
    """

    scope: str
    complete: bool = False
    complete_from: str | None = None
    complete_until: str | None = None
    finished_at: str | None = None
    run_from: str | None = None
    run_until: str | None = None
    token: str | None = None
    token_expires: str | None = None
    checkpoint: str | None = None
    ordered: bool = True
    run_records: int = 0
    run_requests: int = 0

    @property
    def running(self) -> bool:
        return self.run_until is not None

    def token_valid(self, now: datetime) -> bool:
        """Whether the saved token can still be used (not past its expiry)."""
        if not self.token:
            return False
        if not self.token_expires:
            return True
        return now < datetime.fromisoformat(self.token_expires)

    def begin(self, run_from: str | None, run_until: str) -> HarvestState:
        """A new run over ``[run_from, run_until]`` (None: from the beginning)."""
        return replace(self, run_from=run_from, run_until=run_until, token=None,
                       token_expires=None, checkpoint=run_from, ordered=True, run_records=0,
                       run_requests=0)

    def after_page(self, records: list[Record], token: str | None,
                   token_expires: datetime | None) -> HarvestState:
        """The state once a page is stored: its token, and the checkpoint moved on.

        While datestamps never go down, every record before the page's latest day is
        stored, so a restart may ask from that day; once one goes down, the order is
        unknown and a restart must ask from the start of the run.
        """
        stamps = [r.datestamp for r in records if r.datestamp]
        ordered = self.ordered and stamps == sorted(stamps) and (
            not stamps or self.checkpoint is None or stamps[0] >= self.checkpoint)
        checkpoint = (max(stamps, default=self.checkpoint) if ordered else self.run_from)
        return replace(self, token=token, ordered=ordered, checkpoint=checkpoint,
                       token_expires=token_expires.isoformat() if token_expires else None,
                       run_records=self.run_records + len(records),
                       run_requests=self.run_requests + 1)

    def abandoned(self) -> HarvestState:
        """This state without its run in progress (what was complete stays complete)."""
        return replace(self, run_from=None, run_until=None, token=None, token_expires=None,
                       checkpoint=None, ordered=True, run_records=0, run_requests=0)

    def finished(self, at: datetime) -> HarvestState:
        """The run done: the days it covered join the complete range when they touch it."""
        run_from, run_until = self.run_from, self.run_until
        joins = self.complete and (run_from is None or (self.complete_until or "") >= run_from)
        start = (None if self.complete_from is None or run_from is None
                 else min(self.complete_from, run_from)) if joins else run_from
        until = max(self.complete_until or "", run_until or "") if joins else run_until
        return replace(self, complete=True, complete_from=start, complete_until=until,
                       finished_at=at.isoformat(timespec="seconds"), run_from=None,
                       run_until=None, token=None, token_expires=None, checkpoint=None,
                       ordered=True)


def _row_values(record: Record) -> tuple[str, str, str, str, str, str]:
    metadata = record.metadata or {}
    return (record.id, record.datestamp, " ".join(record.sets),
            query_key(metadata.get("title", "")), json.dumps(metadata, ensure_ascii=False),
            json.dumps(list(record.versions)))


def match_expression(key: str) -> str | None:
    """The FTS5 query for a title key: every word but stop words (all if only those)."""
    words = key.split()
    wanted = [w for w in words if w not in STOP_WORDS] or words
    # Keys are plain ASCII words ([a-z0-9]), safe inside double quotes.
    return " ".join(f'"{w}"' for w in dict.fromkeys(wanted)) or None


class ArxivMirror(ThreadLocalSQLite):
    """The mirror's SQLite file in ``directory``."""

    def __init__(self, directory: str | Path, busy_timeout: float = 30.0,
                 create: bool = True) -> None:
        self.directory = Path(directory).expanduser()
        super().__init__(self.directory / FILENAME, busy_timeout)
        if create:
            self.directory.mkdir(parents=True, exist_ok=True)
            with closing(self._open()) as conn, conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
                if "versions" not in columns:  # a mirror made before versions were kept
                    conn.execute("ALTER TABLE records ADD COLUMN versions TEXT NOT NULL"
                                 " DEFAULT '[]'")
                held = conn.execute("SELECT EXISTS (SELECT 1 FROM records)").fetchone()[0]
                if not held:
                    conn.execute(f"PRAGMA user_version = {RECORDS_FORMAT}")

    def records_format(self) -> int:
        """How the held records were read (``RECORDS_FORMAT`` for a current mirror)."""
        return int(self._connection().execute("PRAGMA user_version").fetchone()[0])

    def outdated(self) -> bool:
        """Whether the held records were read in an older format (see the module doc)."""
        return self.records_format() < RECORDS_FORMAT

    def repair(self) -> bool:
        """Forget every scope's harvest state when the records are outdated, so the next
        harvest asks for everything again; True if it did. The records stay (still better
        than nothing for finding a paper) until each is harvested again."""
        if not self.outdated():
            return False
        with self._connection() as conn:
            conn.execute("DELETE FROM harvests")
            conn.execute(f"PRAGMA user_version = {RECORDS_FORMAT}")
        return True

    def rebuild(self) -> None:
        """Drop every record and every harvest state: the next harvest starts afresh."""
        with self._connection() as conn:
            conn.execute("DELETE FROM records")
            conn.execute("DELETE FROM harvests")
            conn.execute(f"PRAGMA user_version = {RECORDS_FORMAT}")

    @classmethod
    def existing(cls, directory: str | Path) -> ArxivMirror | None:
        """The mirror in ``directory`` if a harvest has stored anything there, else None.

        Reads only (one indexed row), so it may run on a thread that must not wait.
        """
        if not (Path(directory).expanduser() / FILENAME).exists():
            return None
        mirror = cls(directory, create=False)
        try:
            held = mirror._connection().execute(
                "SELECT EXISTS (SELECT 1 FROM records)").fetchone()[0]
        except sqlite3.Error:  # not a mirror yet (no tables)
            held = False
        if not held:
            mirror.close()
            return None
        return mirror


    # --- records -------------------------------------------------------------------

    def size(self) -> int:
        """Records held."""
        return int(self._connection().execute("SELECT count(*) FROM records").fetchone()[0])

    def get(self, arxiv_id: str) -> dict | None:
        """One record's metadata."""
        row = self._connection().execute("SELECT metadata FROM records WHERE id = ?",
                                         (arxiv_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def versions(self, arxiv_id: str) -> list[str]:
        """Every version's submission time (ISO 8601, UTC), v1 first; [] when not held."""
        row = self._connection().execute("SELECT versions FROM records WHERE id = ?",
                                         (arxiv_id,)).fetchone()
        return json.loads(row[0]) if row else []

    def candidates(self, key: str, limit: int = MAX_CANDIDATES) -> list[dict]:
        """Metadata of the records whose title holds the key's words, best ranked first."""
        expression = match_expression(key)
        if expression is None:
            return []
        query = ("SELECT records.metadata FROM titles JOIN records ON records.rowid = titles.rowid"
                 " WHERE titles MATCH ?")
        conn = self._connection()
        rows = conn.execute(query + " LIMIT ?", (expression, limit + 1)).fetchall()
        if len(rows) > limit:  # too many: keep the best ranked (ranking all costs twice as much)
            rows = conn.execute(query + " ORDER BY titles.rank LIMIT ?",
                                (expression, limit)).fetchall()
        return [json.loads(metadata) for (metadata,) in rows]

    def store_page(self, records: Iterable[Record], state: HarvestState) -> None:
        """Upsert a page of records and save the harvest state, in one transaction."""
        records = list(records)
        with self._connection() as conn:
            conn.executemany(
                "INSERT INTO records (id, datestamp, sets, title_key, metadata, versions)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " datestamp = excluded.datestamp, sets = excluded.sets,"
                " title_key = excluded.title_key, metadata = excluded.metadata,"
                " versions = excluded.versions",
                [_row_values(r) for r in records if not r.deleted])
            conn.executemany("DELETE FROM records WHERE id = ?",
                             [(r.id,) for r in records if r.deleted])
            self._save_state(conn, state)

    # --- harvest state ---------------------------------------------------------------

    def state(self, scope: str) -> HarvestState:
        """The harvest state of ``scope`` (a fresh one if never harvested)."""
        conn = self._connection()
        conn.row_factory = sqlite3.Row
        try:
            row = conn.execute("SELECT * FROM harvests WHERE scope = ?", (scope,)).fetchone()
        finally:
            conn.row_factory = None
        if row is None:
            return HarvestState(scope)
        values = dict(row)
        values["ordered"] = bool(values["ordered"])
        values["complete"] = bool(values["complete"])
        return HarvestState(**values)

    def states(self) -> list[HarvestState]:
        """Every scope ever harvested."""
        scopes = [s for (s,) in self._connection().execute(
            "SELECT scope FROM harvests ORDER BY scope")]
        return [self.state(s) for s in scopes]

    def restore_state(self, state: HarvestState) -> None:
        """Put ``state`` back as it was read: saved, or no row at all for a scope never
        harvested (``state`` fresh), so a refused first run leaves no trace."""
        if state == HarvestState(state.scope):
            with self._connection() as conn:
                conn.execute("DELETE FROM harvests WHERE scope = ?", (state.scope,))
        else:
            self.save_state(state)

    def save_state(self, state: HarvestState) -> None:
        with self._connection() as conn:
            self._save_state(conn, state)

    @staticmethod
    def _save_state(conn: sqlite3.Connection, state: HarvestState) -> None:
        values = asdict(state)
        values["ordered"] = int(state.ordered)
        values["complete"] = int(state.complete)
        names = ", ".join(values)
        marks = ", ".join(f":{name}" for name in values)
        conn.execute(f"INSERT OR REPLACE INTO harvests ({names}) VALUES ({marks})", values)

    def answers_misses(self, max_age_seconds: float, now: datetime | None = None) -> bool:
        """Whether a title the mirror lacks is not on arXiv: all of arXiv is harvested,
        from its first record, in the current format, and the last harvest ended within
        ``max_age_seconds``."""
        if self.outdated():
            return False
        state = self.state(ALL)
        if not (state.complete and state.complete_from is None and state.finished_at):
            return False
        age = (now or datetime.now(UTC)) - datetime.fromisoformat(state.finished_at)
        return age.total_seconds() <= max_age_seconds

    def summary(self) -> dict[str, Any]:
        """Size, sets and last harvest, for ``scholarindex status``."""
        scopes = []
        for state in self.states():
            scopes.append({
                "set": state.scope or "(all of arXiv)",
                "complete_from": state.complete_from if state.complete else None,
                "complete_until": state.complete_until, "finished_at": state.finished_at,
                "interrupted": state.running,
            })
        finished = [s["finished_at"] for s in scopes if s["finished_at"]]
        return {"path": str(self.path), "records": self.size(), "sets": scopes,
                "last_harvest": max(finished) if finished else None,
                "outdated": self.outdated()}
