"""Workers of a distributed crawl for the tests: real ``scrapy crawl`` processes on one Redis.

    site = bench_site(tmp_path / "site", 300)          # a synthetic site, served
    workers = [start_worker(tmp_path, redis.url, "job", site.url_file) for _ in range(3)]
    results = [w.finish() for w in workers]
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.generate import build_site, write_site
from standins.site import SiteServer
from tests.support.crawl import ROOT, ProcessResult, crawl_command, process_result

# What every worker of these tests sets: a local site needs no politeness, and a dead
# worker's pages should come back within seconds.
WORKER_SETTINGS = {"AUTOTHROTTLE_ENABLED": "false", "ROBOTSTXT_OBEY": "false",
                   "REDIS_LEASE_SECONDS": "3", "REDIS_RETRY_SECONDS": "60",
                   "INDEX_WRITER_PROCESS": "false"}


@dataclass
class BenchSite:
    server: SiteServer
    root: Path

    @property
    def url_file(self) -> Path:
        return self.root / "urls.txt"

    @property
    def urls(self) -> list[str]:
        return self.url_file.read_text(encoding="utf-8").split()

    def page_fetches(self) -> list[str]:
        """Paths of the profile pages the server answered (robots.txt and the like left out)."""
        return [p for p in list(self.server.requests) if not p.endswith(".txt")]


def bench_site(root: Path, profiles: int, seed: int = 4) -> BenchSite:
    """A synthetic profile site (``bench.generate``) served on a free port; stop the server."""
    root.mkdir(parents=True, exist_ok=True)
    server = SiteServer(root).__enter__()
    write_site(build_site(profiles, seed=seed), root, server.base)
    return BenchSite(server, root)


@dataclass
class Worker:
    process: subprocess.Popen[str]
    out: Path
    report: Path
    log_path: Path

    def finish(self, timeout: float = 120) -> ProcessResult:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        return process_result(self.process.returncode, self.out, self.report,
                              self.log_path.read_text(encoding="utf-8", errors="replace"))


def start_worker(tmp_path: Path, redis_url: str, job: str, url_file: Path,
                 settings: dict[str, str] | None = None,
                 env: dict[str, str] | None = None) -> Worker:
    """``scrapy crawl profiles -a job=JOB -a url_file=F`` with ``REDIS_URL`` set."""
    command, out, report = crawl_command(
        tmp_path, "-a", f"job={job}", "-a", f"url_file={url_file}",
        settings={**WORKER_SETTINGS, "REDIS_URL": redis_url, **(settings or {})})
    log_path = out.with_suffix(".log")
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
                                   stdin=subprocess.DEVNULL, text=True,
                                   env={**os.environ, **(env or {})})
    return Worker(process, out, report, log_path)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
