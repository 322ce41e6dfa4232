"""Run crawls for the tests and read what they produced: items, stats, the run report.

``crawl_profiles`` and ``run_spider`` run the real engine in this process (on the
session's reactor thread, ``tests.support.reactor``) and read the crawler's own
stats and the ``RunReport`` extension's report. ``run_crawl`` runs the real
``scrapy crawl profiles`` command in a subprocess, for the tests where a process
is the point (exit status, the command's options, processes side by side); it
reads the ``RUN_REPORT`` JSON the run writes.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.settings import Settings
from scrapy.utils.serialize import ScrapyJSONEncoder

from crawler.extensions.report import RunReport
from crawler.job import job_name
from scholarindex.core.items import records
from tests.support.reactor import call_in_reactor

ROOT = Path(__file__).resolve().parents[2]
SCRAPY = str(Path(sys.executable).with_name("scrapy"))
# Scrapy's default LOG_FORMAT: a test reading the log reads what an operator would.
LOG_FORMAT = "%(asctime)s [%(name)s] %(levelname)s: %(message)s"


def base_settings(tmp_path: Path, **settings: Any) -> dict[str, Any]:
    """What every test crawl sets: a fixed date, nothing switched on, files under tmp_path."""
    return {"CRAWL_DATE": "2026-11-22", "INDEX_ENABLED": "false", "ARXIV_ENABLED": "false",
            "LOG_LEVEL": "INFO", "STATE_DIR": str(tmp_path / "state"),
            "INDEX_DEADLETTER_PATH": str(tmp_path / "deadletter.jsonl"),
            "ARXIV_CACHE_DIR": str(tmp_path / "arxiv-cache"), **settings}


def project_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """The project's settings (``crawler.settings``) with ``overrides`` as on the command line."""
    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    settings.setdict(overrides or {}, priority="cmdline")
    return settings


# --- in this process ------------------------------------------------------------------

@dataclass
class CrawlResult:
    """One finished in-process crawl."""

    crawler: Crawler
    stats: dict[str, Any]
    items: list[dict[str, Any]]
    records: list[logging.LogRecord]
    report: dict[str, Any] | None = None  # the RunReport extension's, when it is enabled

    @property
    def returncode(self) -> int:
        """The exit status ``scrapy crawl`` would give: the verdict in the stats."""
        return int(self.stats["run/exit_code"])

    @property
    def log(self) -> str:
        formatter = logging.Formatter(LOG_FORMAT)
        return "\n".join(formatter.format(record) for record in self.records)

    def errors(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= logging.ERROR]

    def kind(self, kind: str) -> list[dict[str, Any]]:
        return [item for item in self.items if item["kind"] == kind]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class _Run:
    crawler: Crawler
    items: list[dict[str, Any]] = field(default_factory=list)

    def item_scraped(self, item: Any) -> None:
        # As a JSON feed would carry it (dates and the like as strings), one record a line.
        for record in records(item):
            self.items.append(json.loads(ScrapyJSONEncoder().encode(ItemAdapter(record).asdict())))


def run_spider(spider: type[Spider] | str, settings: Settings | dict[str, Any], *,
               timeout: float = 120, **spider_args: Any) -> CrawlResult:
    """Crawl with ``spider`` in this process; returns when the crawl has closed.

    ``settings`` are used as given (``project_settings`` for the project's); log
    records of level INFO and up are collected whatever the root logger's level.
    """
    runner = CrawlerRunner(settings)
    crawler = runner.create_crawler(spider)
    run = _Run(crawler)
    crawler.signals.connect(run.item_scraped, signal=signals.item_scraped)
    handler = _Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(min(level, logging.INFO))
    # Test speed only: the engine re-checks a spider kept open (pending lookups) every
    # 5 s by default.
    heartbeat = ExecutionEngine._SLOT_HEARTBEAT_INTERVAL
    ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = 0.2
    try:
        call_in_reactor(runner.crawl, crawler, **spider_args, timeout=timeout,
                        on_timeout=crawler.stop)
    finally:
        ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = heartbeat
        root.removeHandler(handler)
        root.setLevel(level)
    extension = crawler.get_extension(RunReport)
    return CrawlResult(crawler, crawler.stats.get_stats(), run.items, handler.records,
                       extension.report if extension else None)


def crawl_profiles(tmp_path: Path, settings: dict[str, Any] | None = None, *,
                   timeout: float = 120, **spider_args: str) -> CrawlResult:
    """The ``profiles`` spider in this process, set up as ``scrapy crawl profiles`` would be.

    Differences from ``run_crawl``, none of which these tests are about: pages are
    parsed and the index written in this process instead of child processes, no
    AutoThrottle (the local fixture site needs no politeness), and no job lock.
    """
    in_this_process = {"INDEX_WRITER_PROCESS": "false", "PARSE_PROCESSES": "0",
                       "AUTOTHROTTLE_ENABLED": "false"}
    merged = project_settings(base_settings(tmp_path, **{**in_this_process, **(settings or {})}))
    # As the crawl command does: one job name for the state, the lock and the report.
    merged.set("RUN_JOB", job_name(merged, spider_args), priority="cmdline")
    return run_spider("profiles", merged, timeout=timeout, **spider_args)


# --- in a subprocess ------------------------------------------------------------------

@dataclass
class ProcessResult:
    """One ``scrapy crawl profiles`` process: exit status, exported items, run report."""

    returncode: int
    items: list[dict[str, Any]]
    report: dict[str, Any]  # the RUN_REPORT JSON; empty when the run wrote none
    log: str

    def kind(self, kind: str) -> list[dict[str, Any]]:
        return [item for item in self.items if item["kind"] == kind]


def crawl_command(tmp_path: Path, *args: str, settings: dict[str, str] | None = None,
                  ) -> tuple[list[str], Path, Path]:
    """``scrapy crawl profiles ARGS`` with the test settings: (argv, items file, report file)."""
    n = len(list(tmp_path.glob("items-*")))
    out, report = tmp_path / f"items-{n}.jsonl", tmp_path / f"report-{n}.json"
    out.touch()  # claims the number for a crawl started alongside
    command = [SCRAPY, "crawl", "profiles", *args, "-O", str(out)]
    chosen = {"RUN_REPORT": str(report), **(settings or {})}  # a test may name its own
    for name, value in base_settings(tmp_path, **chosen).items():
        command += ["-s", f"{name}={value}"]
    return command, out, report


def process_result(returncode: int, out: Path, report: Path, log: str) -> ProcessResult:
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    written = json.loads(report.read_text()) if report.exists() else {}
    return ProcessResult(returncode, items, written, log)


def run_crawl(tmp_path: Path, *args: str, settings: dict[str, str] | None = None,
              env: dict[str, str] | None = None, timeout: float = 120) -> ProcessResult:
    """``scrapy crawl profiles ARGS`` in the repository, in a subprocess."""
    command, out, report = crawl_command(tmp_path, *args, settings=settings)
    proc = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
    )
    return process_result(proc.returncode, out, report, proc.stderr)


def crawls_at_once(tmp_path: Path, runs: list[tuple[list[str], dict[str, str]]],
                   timeout: float = 180) -> tuple[list[ProcessResult], list[str]]:
    """``scrapy crawl profiles ARGS`` processes started together, one folder each:
    their results and their logs, once all have ended."""
    started = []
    for n, (args, settings) in enumerate(runs):
        folder = tmp_path / f"run{n}"
        folder.mkdir()
        command, out, report = crawl_command(folder, *args, settings=settings)
        started.append((subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                         stdin=subprocess.DEVNULL), out, report))
    logs = [proc.communicate(timeout=timeout)[1] for proc, _, _ in started]
    results = [process_result(proc.returncode, out, report, log)
               for (proc, out, report), log in zip(started, logs, strict=True)]
    return results, logs
