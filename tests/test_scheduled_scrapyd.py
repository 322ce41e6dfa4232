"""Scrapyd recipe, tried: start a local Scrapyd, deploy with scrapyd-deploy, schedule, finish.

The project is deployed from a copy of the repository (scrapyd-deploy writes
setup.py, build/ and *.egg-info where it runs), to a Scrapyd on 127.0.0.1 with a
free port and its own directories.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from engine.cluster import free_port
from tests.support.scheduled import (
    FAST,
    REPO,
    SEEDS,
    file_urls,
    read_items,
    wait_for,
)

BIN = Path(sys.executable).parent
PROJECT = "scholarindex"
# The egg must say where the settings are; scrapyd-deploy's own setup.py cannot when
# pyproject.toml has a [project] table (setuptools ignores its entry_points then).
ENTRY_POINT = '\n[project.entry-points.scrapy]\nsettings = "crawler.settings"\n'


def api(base: str, endpoint: str, data: list[tuple[str, str]] | None = None) -> Any:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    # scrapyd answers slowly on a loaded machine
    with urllib.request.urlopen(f"{base}/{endpoint}", data=body, timeout=60) as response:
        return json.loads(response.read())


def copy_project(dest: Path, port: int) -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    includes = tomllib.loads(pyproject)["tool"]["setuptools"]["packages"]["find"]["include"]
    for name in {pattern.rstrip("*") for pattern in includes}:
        if (REPO / name / "__init__.py").exists():
            shutil.copytree(REPO / name, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if "entry-points.scrapy" not in pyproject:
        pyproject += ENTRY_POINT
    (dest / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    shutil.copy(REPO / "README.md", dest / "README.md")
    cfg = (REPO / "scrapy.cfg").read_text(encoding="utf-8")
    (dest / "scrapy.cfg").write_text(
        cfg + f"\n[deploy:scrapyd-test]\nurl = http://127.0.0.1:{port}/\nproject = {PROJECT}\n",
        encoding="utf-8")


@pytest.mark.slow
@pytest.mark.process
def test_deploy_schedule_and_finish_on_scrapyd(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server, project = tmp_path / "scrapyd", tmp_path / "project"
    server.mkdir()
    project.mkdir()
    copy_project(project, port)
    (server / "scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 127.0.0.1\n"
        f"http_port = {port}\npoll_interval = 0.2\n"
        + "".join(f"{name}_dir = {server / name}\n" for name in ("eggs", "logs", "items", "dbs")),
        encoding="utf-8")
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}

    scrapyd = subprocess.Popen([str(BIN / "scrapyd")], cwd=server, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        def up() -> bool:
            try:
                return api(base, "daemonstatus.json")["status"] == "ok"
            except OSError:
                assert scrapyd.poll() is None, scrapyd.stderr.read() if scrapyd.stderr else ""
                return False

        wait_for(up, timeout=20, what="scrapyd to answer")
        deploy = subprocess.run([str(BIN / "scrapyd-deploy"), "scrapyd-test"], cwd=project,
                                env=env, capture_output=True, text=True, timeout=60)
        assert deploy.returncode == 0, deploy.stderr
        assert json.loads(deploy.stdout)["status"] == "ok", deploy.stdout

        report = tmp_path / "report.json"
        settings = {**FAST, "STATE_DIR": str(tmp_path / "state"), "RUN_REPORT": str(report)}
        job = api(base, "schedule.json", [
            ("project", PROJECT), ("spider", "profiles"), ("urls", file_urls(SEEDS)),
            *(("setting", f"{name}={value}") for name, value in settings.items()),
        ])
        assert job["status"] == "ok", job

        def finished() -> bool:
            jobs = api(base, f"listjobs.json?project={PROJECT}")
            return any(j["id"] == job["jobid"] for j in jobs["finished"])

        wait_for(finished, timeout=40, what="the scheduled job to finish")
    finally:
        scrapyd.terminate()
        scrapyd.wait(timeout=10)

    log = (server / "logs" / PROJECT / "profiles" / f"{job['jobid']}.log").read_text()
    items = read_items(server / "items" / PROJECT / "profiles" / f"{job['jobid']}.jl")
    assert len(items) == 31
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["close_reason"] == "finished"
    assert (summary["researchers"], summary["distinct_works"], summary["ok"]) == (5, 25, True)
    assert "run ok (exit 0)" in log.strip().splitlines()[-1]  # the project's verdict is last
