"""The cron and systemd recipes in docs/deploy/, tried: the script runs a job, the units load."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crawler.extensions.verdict import EXIT_FAILED, EXIT_OK
from tests.support.scheduled import HELDOUT, REPO, SCRAPY, SEEDS, crawl_env

DEPLOY = REPO / "docs" / "deploy"
SCRIPT = DEPLOY / "scholarindex-crawl.sh"


@pytest.mark.process
def test_env_file_reads_the_same_in_sh_and_systemd() -> None:
    lines = [line for line in (DEPLOY / "scholarindex.env").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    # KEY="value" only: systemd's EnvironmentFile and sh's `.` then agree on every value.
    assert all(re.fullmatch(r'[A-Z_]+="[^"$`\\]*"', line) for line in lines), lines
    env = subprocess.run(["sh", "-c", f'set -a; . "{DEPLOY / "scholarindex.env"}"; env'],
                         capture_output=True, text=True, check=True, env={}).stdout
    values = dict(line.split("=", 1) for line in env.splitlines() if "=" in line)
    assert values["RUN_REPORT"] == "/var/lib/scholarindex/reports/%(job)s-%(time)s.json"
    assert {"OPENSEARCH_URL", "OPENSEARCH_PASSWORD", "STATE_DIR"} <= set(values)


def test_crontab_runs_the_script() -> None:
    entries = [line for line in (DEPLOY / "crontab").read_text().splitlines()
               if line[:1].isdigit()]
    assert entries and all(line.split()[5].endswith("docs/deploy/scholarindex-crawl.sh")
                           for line in entries)
    assert SCRIPT.stat().st_mode & 0o111


def run_script(tmp_path: Path, job: str, urls: list[Path]) -> subprocess.CompletedProcess[str]:
    etc, var = tmp_path / "etc", tmp_path / "var"
    etc.mkdir(exist_ok=True)
    (etc / "scholarindex.env").write_text(
        'INDEX_ENABLED="false"\nARXIV_ENABLED="false"\nCRAWL_DATE="2026-11-22"\n'
        f'STATE_DIR="{var}/state"\nRUN_REPORT="{var}/reports/%(job)s.json"\n')
    (etc / f"{job}.urls").write_text("\n".join(p.as_uri() for p in urls) + "\n")
    env = {**crawl_env(tmp_path), "SCHOLARINDEX_HOME": str(REPO), "SCHOLARINDEX_ETC": str(etc),
           "SCHOLARINDEX_VAR": str(var), "SCHOLARINDEX_LOGS": str(tmp_path / "log"),
           "SCHOLARINDEX_SCRAPY": SCRAPY}
    return subprocess.run([str(SCRIPT), job], env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.process
def test_cron_script_is_silent_on_success_and_says_why_on_failure(tmp_path: Path) -> None:
    ok = run_script(tmp_path, "nightly", SEEDS[:1])
    assert ok.returncode == EXIT_OK, (tmp_path / "log" / "nightly.log").read_text()[-3000:]
    assert ok.stdout == "" and ok.stderr == ""
    log = (tmp_path / "log" / "nightly.log").read_text()
    assert "run ok (exit 0)" in log.strip().splitlines()[-1]
    report = json.loads((tmp_path / "var" / "reports" / "nightly.json").read_text())
    assert report["job"] == "nightly" and report["researchers"] == 1
    assert (tmp_path / "var" / "jobdir" / "nightly").is_dir()

    # Pages that are not profiles: the run fails, and the script says why on stdout.
    junk = [p for p in HELDOUT if p.name.startswith("junk_")]
    assert len(junk) == 2
    failed = run_script(tmp_path, "junk", junk)
    assert failed.returncode == EXIT_FAILED
    assert failed.stdout.startswith("scholarindex crawl junk: exit 1: ")
    assert "run failed (exit 1): no profile found in 2 pages" in failed.stdout
    report = json.loads((tmp_path / "var" / "reports" / "junk.json").read_text())
    assert (report["exit_code"], report["pages"]["unrecognized"]) == (EXIT_FAILED, 2)


@pytest.mark.process
@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_units_verify(tmp_path: Path) -> None:
    for name in ("scholarindex-crawl@.service", "scholarindex-crawl@.timer"):
        text = (DEPLOY / name).read_text().replace("/srv/scholarindex/.venv/bin/scrapy", SCRAPY)
        (tmp_path / name.replace("@", "@nightly")).write_text(text)
    units = sorted(str(p) for p in tmp_path.glob("scholarindex-crawl@nightly.*"))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *units],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
