"""Run the real ``scrapy crawl profiles`` command and read what it produced."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRAPY = str(Path(sys.executable).with_name("scrapy"))
_STAT = re.compile(r"^\s*'([^']+)': (\d+),?$", re.M)


@dataclass
class CrawlResult:
    returncode: int
    items: list[dict]
    stats: dict[str, int]
    log: str

    def kind(self, kind: str) -> list[dict]:
        return [item for item in self.items if item["kind"] == kind]


def run_crawl(
    tmp_path: Path,
    *args: str,
    settings: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> CrawlResult:
    """``scrapy crawl profiles ARGS`` in the repository, items exported to a temp file."""
    out = tmp_path / f"items-{len(list(tmp_path.glob('items-*')))}.jsonl"
    command = [SCRAPY, "crawl", "profiles", *args, "-O", str(out)]
    # Every file a run keeps between runs goes under the test's own folder.
    merged = {"CRAWL_DATE": "2026-11-22", "INDEX_ENABLED": "false", "ARXIV_ENABLED": "false",
              "LOG_LEVEL": "INFO", "STATE_DIR": str(tmp_path / "state"),
              "INDEX_DEADLETTER_PATH": str(tmp_path / "deadletter.jsonl"),
              "ARXIV_CACHE_DIR": str(tmp_path / "arxiv-cache"), **(settings or {})}
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    proc = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
    )
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    stats = {key: int(value) for key, value in _STAT.findall(proc.stderr)}
    return CrawlResult(proc.returncode, items, stats, proc.stderr)
