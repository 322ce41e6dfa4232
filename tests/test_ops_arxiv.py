"""``scholarindex arxiv harvest`` and the mirror in ``scholarindex status``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from scholarindex.enrichment.harvest import ScopeReport
from scholarindex.enrichment.mirror import FILENAME, ArxivMirror
from scholarindex.ops.arxiv import Progress, harvest_lock
from scholarindex.ops.cli import main
from scholarindex.ops.status import _render_mirror, mirror_status
from standins.oaipmh import OaiStandIn


@pytest.fixture
def oai() -> Iterator[OaiStandIn]:
    with OaiStandIn(page_size=5) as server:
        yield server


def env(oai: OaiStandIn, cache: Path, **more: str) -> dict[str, str]:
    return {"ARXIV_OAI_URL": oai.base_url, "ARXIV_CACHE_DIR": str(cache),
            "ARXIV_DELAY_SECONDS": "0", "ARXIV_BACKOFF_SECONDS": "0.01", **more}


def test_harvest_prints_a_json_summary_and_status_shows_the_mirror(
        oai: OaiStandIn, tmp_path: Path) -> None:
    assert mirror_status(tmp_path) is None
    result = CliRunner().invoke(main, ["arxiv", "harvest", "--set", "cs", "--json"],
                                env=env(oai, tmp_path))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["ok"] and summary["requests"] == oai.request_count
    assert summary["records"] == len(oai.select("cs", None, None)) == summary["mirror"]["records"]
    assert summary["scopes"][0]["set"] == "cs"
    status = mirror_status(tmp_path)
    assert status is not None and status["records"] == summary["records"]
    assert [s["set"] for s in status["sets"]] == ["cs"]
    text = "\n".join(_render_mirror(status))
    assert f"{summary['records']} records" in text and "cs: complete from the beginning" in text

    oai.reset()
    again = CliRunner().invoke(main, ["arxiv", "harvest", "--set", "cs", "--from", "2026-01-01"],
                               env=env(oai, tmp_path))
    assert again.exit_code == 0, again.output
    assert oai.requests[0].args["from"] == "2026-01-01"
    assert "cs: " in again.stdout and "requests" in again.stdout


def test_harvest_exits_3_when_the_endpoint_stays_down_and_resumes_later(
        oai: OaiStandIn, tmp_path: Path) -> None:
    oai.fail_next("503", times=2, retry_after=0)
    result = CliRunner().invoke(main, ["arxiv", "harvest", "--json"],
                                env=env(oai, tmp_path, ARXIV_MAX_ATTEMPTS="2"))
    assert result.exit_code == 3
    assert "run again to resume" in result.output
    failed = json.loads(result.stdout)
    assert failed["http_requests"] == 2 and failed["retries"] == 1 and failed["requests"] == 0
    result = CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path))
    assert result.exit_code == 0, result.output
    assert mirror_status(tmp_path)["records"] == len(oai.ids)  # type: ignore[index]


def test_a_second_harvest_of_the_same_mirror_exits_75(oai: OaiStandIn, tmp_path: Path) -> None:
    with harvest_lock(tmp_path):
        result = CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path))
    assert result.exit_code == 75
    assert oai.request_count == 0


def test_harvest_rejects_a_bad_day(oai: OaiStandIn, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["arxiv", "harvest", "--from", "23/11/2026"],
                                env=env(oai, tmp_path))
    assert result.exit_code == 2


def _outdate(cache: Path, arxiv_id: str) -> None:
    """Make the mirror look as one written by the arXiv-format harvest: format 1, no
    versions column, and a revised paper dated by its latest version."""
    with sqlite3.connect(cache / FILENAME) as conn:
        (metadata,) = conn.execute("SELECT metadata FROM records WHERE id = ?",
                                   (arxiv_id,)).fetchone()
        wrong = {**json.loads(metadata), "published": "2099-01-01T00:00:00+00:00"}
        conn.execute("UPDATE records SET metadata = ? WHERE id = ?", (json.dumps(wrong), arxiv_id))
        conn.execute("PRAGMA user_version = 1")
        conn.execute("ALTER TABLE records DROP COLUMN versions")


def test_a_mirror_in_the_old_format_is_harvested_again_from_the_beginning(
        oai: OaiStandIn, tmp_path: Path) -> None:
    first = CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path))
    assert first.exit_code == 0, first.output
    _outdate(tmp_path, "2205.14465")
    old = ArxivMirror(tmp_path, create=False)
    assert old.outdated() and not old.answers_misses(86400)  # wrong dates say nothing of misses
    assert "OUTDATED" in "\n".join(_render_mirror(mirror_status(tmp_path)))
    oai.reset()
    repaired = CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path))
    assert repaired.exit_code == 0, repaired.output
    assert "older format: harvesting everything again" in repaired.output
    assert "from" not in oai.requests[0].args  # from the beginning, not since the last run
    mirror = ArxivMirror(tmp_path)
    assert mirror.get("2205.14465")["published"].startswith("2022-05-28")  # type: ignore[index]
    assert len(mirror.versions("2205.14465")) == 3
    assert not mirror.outdated() and mirror.answers_misses(86400)
    oai.reset()
    daily = CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path))
    assert daily.exit_code == 0 and "from" in oai.requests[0].args  # repaired once only


def test_rebuild_empties_the_mirror_and_harvests_it_again(oai: OaiStandIn, tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["arxiv", "harvest"], env=env(oai, tmp_path)).exit_code == 0
    with sqlite3.connect(tmp_path / FILENAME) as conn:  # a record arXiv no longer lists
        conn.execute("UPDATE records SET id = 'gone.00001' WHERE id = '2205.14465'")
    oai.reset()
    result = CliRunner().invoke(main, ["arxiv", "harvest", "--rebuild", "--json"],
                                env=env(oai, tmp_path))
    assert result.exit_code == 0, result.output
    assert "from" not in oai.requests[0].args
    mirror = ArxivMirror(tmp_path)
    assert mirror.get("gone.00001") is None and mirror.size() == len(oai.ids)


def test_the_progress_line_shows_records_and_rate_without_a_total() -> None:
    scope = ScopeReport("cs", None, "2026-11-26", requests=3, records=503)
    line = Progress.line(scope, 2.0)
    assert line == "harvesting cs: 503 records, 252 records/s, 3 requests"
    assert "/" not in line.split("records/s")[0]
