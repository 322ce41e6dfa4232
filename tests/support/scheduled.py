"""Helpers for the scheduled-run tests: run ``scrapy crawl`` the way a scheduler does.

Every crawl is a real ``scrapy crawl profiles`` subprocess, in its own working
directory, against file:// fixture pages or a ``standins.site.SiteServer``. Tests
read what a run did from its run report (RUN_REPORT), its items and the page state
it left, not from log lines; only the last line (the one-line reason) is read.
This module holds no tests.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter

from scholarindex.core.items import records

REPO = Path(__file__).resolve().parents[2]
SEEDS = sorted((REPO / "fixtures" / "seeds").glob("*.txt"))
HELDOUT = sorted((REPO / "fixtures" / "heldout").glob("*.txt"))
EXPECTED = REPO / "fixtures" / "expected"
SCRAPY = str(Path(sys.executable).parent / "scrapy")

# Parse only, no waiting: no OpenSearch, no arXiv, no throttling, no consoles.
FAST = {
    "INDEX_ENABLED": "false",
    "ARXIV_ENABLED": "false",
    "AUTOTHROTTLE_ENABLED": "false",
    "TELNETCONSOLE_ENABLED": "false",
    "REMOTE_CONTROL_ENABLED": "false",
    "CRAWL_DATE": "2026-11-22",
    "LOG_LEVEL": "INFO",
    # Parse-only runs are not incremental unless asked ("auto"); these tests ask.
    "INCREMENTAL_ENABLED": "true",
}


def crawl_env(workdir: Path) -> dict[str, str]:
    """Environment for a crawl subprocess run from ``workdir``, outside the repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRAPY_", "OPENSEARCH_"))}
    env["SCRAPY_SETTINGS_MODULE"] = "crawler.settings"
    env["PYTHONPATH"] = str(REPO)
    return env


def file_urls(paths: list[Path]) -> str:
    return ",".join(p.resolve().as_uri() for p in paths)


def crawl_args(urls: str, settings: dict[str, str] | None = None, *extra: str) -> list[str]:
    args = [SCRAPY, "crawl", "profiles", "-a", f"urls={urls}", *extra]
    for name, value in {**FAST, **(settings or {})}.items():
        args += ["-s", f"{name}={value}"]
    return args


@dataclass
class Run:
    """What a finished crawl left: exit status, log, run report (RUN_REPORT) and items."""

    returncode: int
    stderr: str
    report: dict[str, Any] | None
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_line(self) -> str:
        """The last log line: where the crawl command puts its one-line reason."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def read_items(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def crawl(workdir: Path, urls: str, settings: dict[str, str] | None = None, *extra: str,
          timeout: float = 60) -> Run:
    """Run one crawl to its end; items go to a fresh items.jsonl, the report to report.json."""
    workdir.mkdir(parents=True, exist_ok=True)
    items, report = workdir / "items.jsonl", workdir / "report.json"
    items.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    settings = {"STATE_DIR": str(workdir / "state"), "RUN_REPORT": str(report),
                **(settings or {})}
    proc = subprocess.run(
        crawl_args(urls, settings, "-o", f"{items}:jsonl", *extra),
        cwd=workdir, env=crawl_env(workdir), capture_output=True, text=True, timeout=timeout,
    )
    loaded = json.loads(report.read_text(encoding="utf-8")) if report.exists() else None
    return Run(proc.returncode, proc.stderr, loaded, read_items(items))


def side_by_side(jobs: Mapping[str, Callable[[], Any]], workers: int = 2) -> dict[str, Any]:
    """Run independent jobs (each mostly waiting on its own crawl process) ``workers`` at a
    time; their results by name. An exception in a job is raised here."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        started = {name: pool.submit(job) for name, job in jobs.items()}
        return {name: future.result() for name, future in started.items()}


def crawl_many(crawls: Mapping[str, tuple[Any, ...]], workers: int = 2) -> dict[str, Run]:
    """Independent crawls side by side: ``{name: (workdir, urls, settings, ...)}``."""
    return side_by_side({name: partial(crawl, *args) for name, args in crawls.items()},
                        workers)


def page_state(state_dir: Path, job: str, target: str = "export") -> dict[str, dict[str, Any]]:
    """The page state a job's runs left (``crawler.state``), by URL: committed or pending.

    Read straight from the SQLite file, so a test sees what the next run will see.
    """
    path = state_dir / f"{job}.{target}.sqlite"
    if not path.exists():
        return {}
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT url, hash, committed_at, pending_run FROM pages").fetchall()
    return {url: {"committed": hash is not None, "committed_at": committed_at,
                  "pending": pending_run is not None}
            for url, hash, committed_at, pending_run in rows}


def wait_for(predicate: Any, timeout: float = 20, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class DeadLetterEveryFifthWork:
    """Test-only fault: say the index dead-lettered every fifth work item.

    Stands in for the index pipeline's ``index/dead_lettered`` stat, a loss the
    parse-only tests cannot cause otherwise.
    """

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.works = 0

    @classmethod
    def from_crawler(cls, crawler: Any) -> DeadLetterEveryFifthWork:
        return cls(crawler.stats)

    def process_item(self, item: Any) -> Any:
        for record in records(item):
            if ItemAdapter(record).get("kind") == "work":
                self.works += 1
                if self.works % 5 == 0:
                    self.stats.inc_value("index/dead_lettered")
        return item
