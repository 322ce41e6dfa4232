"""``scholarindex arxiv harvest`` and the mirror in ``scholarindex status``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ops.arxiv import harvest_lock
from ops.cli import main
from ops.status import _render_mirror, mirror_status
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
