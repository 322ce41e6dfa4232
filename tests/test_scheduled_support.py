"""Helpers for the scheduled-run tests: run ``scrapy crawl`` the way a scheduler does.

Every crawl is a real ``scrapy crawl profiles`` subprocess, in its own working
directory, against file:// fixture pages or a ``standins.site.SiteServer``.
This module holds no tests.

Until ``crawler/settings.py`` enables the scheduled-run components, the crawls
run with a settings module that imports it and adds them (``_OVERLAY``); once it
does, the crawls use the project settings as they are.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter

import crawler.settings as project_settings
from crawler.spiders.profiles import ProfilesSpider

REPO = Path(__file__).resolve().parent.parent
SEEDS = sorted((REPO / "fixtures" / "seeds").glob("*.txt"))
HELDOUT = sorted((REPO / "fixtures" / "heldout").glob("*.txt"))
EXPECTED = REPO / "fixtures" / "expected"
SCRAPY = str(Path(sys.executable).parent / "scrapy")

COMPONENTS = {
    "EXTENSIONS": {
        "crawler.extensions.verdict.RunVerdict": 500,
        "crawler.extensions.report.RunReport": 510,
        "crawler.extensions.jobdir.JobdirReset": 520,
    },
    "DOWNLOADER_MIDDLEWARES": {"crawler.extensions.incremental.IncrementalMiddleware": 540},
}
# The settings block for crawler/settings.py (docs/deploy/README.md), as the overlay uses it.
SETTINGS_BLOCK = '''
# --- Scheduled runs (docs/deploy/README.md) ----------------------------------------------
# Our `crawl` command replaces Scrapy's: it takes the job's lock and exits with the verdict.
COMMANDS_MODULE = "crawler.commands"
EXTENSIONS = {
    # Judge the run at its end (run/exit_code, run/reason); exit codes in docs/deploy/.
    "crawler.extensions.verdict.RunVerdict": 500,
    # Log the run's summary and write it as JSON to RUN_REPORT.
    "crawler.extensions.report.RunReport": 510,
    # With JOBDIR: resume after an interruption, start afresh after a crawl that ended.
    "crawler.extensions.jobdir.JobdirReset": 520,
}
DOWNLOADER_MIDDLEWARES = {
    # Skip pages unchanged since the last good run (conditional requests, content hash).
    "crawler.extensions.incremental.IncrementalMiddleware": 540,
}
# The job this run belongs to (lock, page state, report); empty: derived from the URL list.
RUN_JOB = os.environ.get("RUN_JOB", "")
# Refuse to start while another run of the same job holds STATE_DIR/<job>.lock (exit 75).
RUN_LOCK = True
# The run fails when more than this share of its pages failed (download errors, bad URLs).
RUN_MAX_ERROR_RATE = float(os.environ.get("RUN_MAX_ERROR_RATE", "0.5"))
# Write the run report as JSON to this path (%(job)s, %(time)s filled in); empty: log only.
RUN_REPORT = os.environ.get("RUN_REPORT", "")
# After a crawl that got to its end, forget JOBDIR's seen requests: the next run starts afresh.
RUN_JOBDIR_RESET = True
# Page state (<job>.*.sqlite) and job locks (<job>.lock); must persist between runs.
STATE_DIR = os.environ.get("STATE_DIR", ".scholarindex-state")
# Skip pages unchanged since the last good run: true, false, or auto (on when indexing).
# -a full=true processes every page once (and refreshes the state).
INCREMENTAL_ENABLED = os.environ.get("INCREMENTAL_ENABLED", "auto")
'''
_OVERLAY = f"""
import os

import crawler.settings as _base
from crawler.settings import *  # noqa: F403
{SETTINGS_BLOCK}
# Keep whatever the project already enables.
EXTENSIONS = {{**getattr(_base, "EXTENSIONS", {{}}), **EXTENSIONS}}
DOWNLOADER_MIDDLEWARES = {{**getattr(_base, "DOWNLOADER_MIDDLEWARES", {{}}),
                          **DOWNLOADER_MIDDLEWARES}}
"""

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


def project_enables_components() -> bool:
    if getattr(project_settings, "COMMANDS_MODULE", None) != "crawler.commands":
        return False
    return all(set(paths) <= set(getattr(project_settings, name, {}) or {})
               for name, paths in COMPONENTS.items())


def spider_skips_unchanged() -> bool:
    """Whether the spider opted in to incremental runs (docs/deploy/README.md)."""
    return bool(getattr(ProfilesSpider, "skips_unchanged", False))


def crawl_env(workdir: Path) -> dict[str, str]:
    """Environment for a crawl subprocess (adds the settings overlay while needed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRAPY_", "OPENSEARCH_"))}
    paths = [str(REPO)]
    if not project_enables_components():
        overlay = workdir / "_settings_overlay"
        overlay.mkdir(parents=True, exist_ok=True)
        (overlay / "scheduled_test_settings.py").write_text(_OVERLAY, encoding="utf-8")
        paths.insert(0, str(overlay))
        env["SCRAPY_SETTINGS_MODULE"] = "scheduled_test_settings"
    else:
        env["SCRAPY_SETTINGS_MODULE"] = "crawler.settings"
    env["PYTHONPATH"] = os.pathsep.join(paths)
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
    returncode: int
    stderr: str
    report: dict[str, Any] | None
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def stat(self, name: str) -> Any:
        """A value from the stats dump (a crude read of the pretty-printed dict)."""
        for line in self.stderr.splitlines():
            line = line.strip(" {},")
            if line.startswith(f"'{name}':"):
                return json.loads(line.split(":", 1)[1].strip().replace("'", '"')
                                  .replace("True", "true").replace("False", "false"))
        return None


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
        if ItemAdapter(item).get("kind") == "work":
            self.works += 1
            if self.works % 5 == 0:
                self.stats.inc_value("index/dead_lettered")
        return item


class OpenSearchDown:
    """Test-only fault: close the spider at start as the index pipeline does when the
    cluster does not answer (reason ``opensearch_unavailable``)."""

    def open_spider(self) -> None:
        from scrapy.exceptions import CloseSpider

        raise CloseSpider("opensearch_unavailable")

    def process_item(self, item: Any) -> Any:
        return item
