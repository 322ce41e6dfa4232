"""The distributed crawl's deployment recipe (docs/deploy/README.md), tried: two Scrapyd
instances (two machines) on one Redis, each scheduling the same job; and the systemd
worker unit loads."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from engine.cluster import free_port
from tests.support.distributed import bench_site
from tests.support.redis import RedisServer
from tests.support.scheduled import FAST, SCRAPY, read_items, wait_for
from tests.test_scheduled_scrapyd import BIN, PROJECT, api, copy_project

DEPLOY = Path(__file__).resolve().parent.parent / "docs" / "deploy"


def start_scrapyd(directory: Path, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    directory.mkdir()
    (directory / "scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 127.0.0.1\n"
        f"http_port = {port}\npoll_interval = 0.2\n"
        + "".join(f"{name}_dir = {directory / name}\n"
                  for name in ("eggs", "logs", "items", "dbs")), encoding="utf-8")
    return subprocess.Popen([str(BIN / "scrapyd")], cwd=directory, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


@pytest.mark.slow
@pytest.mark.process
def test_two_scrapyd_instances_on_one_redis_share_the_job(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = bench_site(tmp_path / "site", 80, seed=11)
    ports = [free_port(), free_port()]
    project = tmp_path / "project"
    project.mkdir()
    copy_project(project, ports[0])
    with (project / "scrapy.cfg").open("a", encoding="utf-8") as cfg:
        cfg.write(f"\n[deploy:second]\nurl = http://127.0.0.1:{ports[1]}/\nproject = {PROJECT}\n")
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    daemons = [start_scrapyd(tmp_path / f"scrapyd-{n}", port, env)
               for n, port in enumerate(ports)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for base in bases:
            wait_for(lambda base=base: _answers(base), timeout=20, what="scrapyd to answer")
        deploy = subprocess.run([str(BIN / "scrapyd-deploy"), "-a"], cwd=project, env=env,
                                capture_output=True, text=True, timeout=90)
        assert deploy.returncode == 0, deploy.stderr
        jobs = []
        for n, base in enumerate(bases):  # each machine schedules the same job
            settings = {**FAST, "INCREMENTAL_ENABLED": "false", "ROBOTSTXT_OBEY": "false",
                        "REDIS_URL": redis_server.url, "REDIS_LEASE_SECONDS": "5",
                        "STATE_DIR": str(tmp_path / f"state-{n}"),
                        # 80 pages take 16 s or more: scrapyd starts a scheduled job at
                        # its next poll (5 s), and a loaded machine starts a crawl slowly,
                        # so the second machine must still find pages to take.
                        "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "DOWNLOAD_DELAY": "0.2"}
            job = api(base, "schedule.json", [
                ("project", PROJECT), ("spider", "profiles"), ("job", "nightly"),
                ("url_file", str(site.url_file)),
                *(("setting", f"{name}={value}") for name, value in settings.items())])
            assert job["status"] == "ok", job
            jobs.append(job["jobid"])

        def finished(base: str, jobid: str) -> bool:
            listed = api(base, f"listjobs.json?project={PROJECT}")
            return any(j["id"] == jobid for j in listed["finished"])

        for base, jobid in zip(bases, jobs, strict=True):
            wait_for(lambda b=base, j=jobid: finished(b, j), timeout=90, what="the job to finish")
    finally:
        for daemon in daemons:
            daemon.terminate()
            daemon.wait(timeout=10)
        site.server.__exit__(None, None, None)

    urls: set[str] = set()
    for n, jobid in enumerate(jobs):
        root = tmp_path / f"scrapyd-{n}"
        log = (root / "logs" / PROJECT / "profiles" / f"{jobid}.log").read_text()
        assert "run ok (exit 0)" in log.strip().splitlines()[-1]
        researchers = [i["url"] for i in read_items(root / "items" / PROJECT / "profiles"
                                                    / f"{jobid}.jl") if i["kind"] == "researcher"]
        assert researchers, f"machine {n} parsed nothing"
        urls |= set(researchers)
    assert urls == set(site.urls)


def _answers(base: str) -> bool:
    try:
        return api(base, "daemonstatus.json")["status"] == "ok"
    except OSError:
        return False


@pytest.mark.process
@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_worker_unit_verifies(tmp_path: Path) -> None:
    text = (DEPLOY / "scholarindex-worker@.service").read_text().replace(
        "/srv/scholarindex/.venv/bin/scrapy", SCRAPY)
    unit = tmp_path / "scholarindex-worker@nightly.service"
    unit.write_text(text)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
