"""``scholarindex arxiv harvest``: fill and refresh the local arXiv mirror over OAI-PMH.

Cold enrichment through the query API costs one request per 20 titles at arXiv's
one request every 3 seconds: hours for a large site. A harvest of the sets the
site's researchers publish in costs one request per page of records (arXiv's
pages hold up to 2,500), and afterwards
enrichment answers from the mirror (``scholarindex.enrichment.mirror``) without asking arXiv.
Run it before the first crawl, then daily (cron): each later run asks only for
what changed since the last one.

One harvest at a time per mirror: a second one exits 75 (already running).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.harvest import HarvestReport, ScopeReport, harvest
from scholarindex.enrichment.mirror import ArxivMirror
from scholarindex.enrichment.oaipmh import REQUESTS, RETRIES, OaiClient

LOCK_FILENAME = "arxiv-harvest.lock"


class HarvestRunning(Exception):
    """Another harvest holds the mirror's lock."""


@contextmanager
def harvest_lock(directory: str | Path) -> Iterator[None]:
    """Hold the mirror's harvest lock, or raise ``HarvestRunning``."""
    path = Path(directory).expanduser() / LOCK_FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HarvestRunning(f"another harvest holds {path}") from None
        yield
    finally:
        os.close(fd)


class Progress:
    """Records and rate on one stderr line while a terminal watches; silent otherwise."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._started = time.monotonic()

    def __call__(self, scope: ScopeReport) -> None:
        if self.enabled:
            click.echo(f"\r{self.line(scope, time.monotonic() - self._started)}", err=True,
                       nl=False)

    @staticmethod
    def line(scope: ScopeReport, seconds: float) -> str:
        """The progress line: records so far and their rate (arXiv's tokens give no total)."""
        rate = scope.records / max(seconds, 1e-6)
        return (f"harvesting {scope.scope or 'all of arXiv'}: {scope.records} records, "
                f"{rate:.0f} records/s, {scope.requests} requests")

    def done(self) -> None:
        if self.enabled:
            click.echo("", err=True)


def run_harvest(config: EnrichmentConfig, sets: list[str], from_day: str | None,
                progress: Progress, report: HarvestReport,
                http: Counter[str] | None = None, rebuild: bool = False) -> ArxivMirror:
    """Harvest into the mirror in ``config.cache_dir``; ``report`` fills in as it goes, and
    ``http`` counts the HTTP requests sent and retried (503s and failures included).

    ``rebuild`` empties the mirror first. A mirror whose records were read in an older
    format is harvested again from the beginning (``ArxivMirror.repair``)."""
    mirror = ArxivMirror(config.cache_dir)
    counts = http if http is not None else Counter()
    client = OaiClient(config, on_event=lambda name, n: counts.update({name: n}))
    try:
        with harvest_lock(config.cache_dir):
            if rebuild:
                mirror.rebuild()
            elif mirror.repair():
                click.echo("the mirror's records were read in an older format: harvesting "
                           "everything again", err=True)
            harvest(mirror, client, sets, from_day, on_page=progress, report=report)
    finally:
        client.close()
        progress.done()
    return mirror


def summary(report: HarvestReport, mirror: ArxivMirror, seconds: float, http: Counter[str],
            error: str | None = None) -> dict[str, Any]:
    """The JSON summary of a run: ``requests`` answered pages, ``http_requests`` every
    request sent (retries included)."""
    return {"ok": error is None, "error": error, "requests": report.requests,
            "http_requests": http[REQUESTS], "retries": http[RETRIES],
            "records": report.records, "seconds": round(seconds, 1),
            "scopes": [s.as_dict() for s in report.scopes], "mirror": mirror.summary()}


def render(result: dict[str, Any]) -> str:
    """The summary for people."""
    lines = []
    for scope in result["scopes"]:
        resumed = f", resumed from the {scope['resumed']}" if scope["resumed"] else ""
        lines.append(f"{scope['set'] or 'all of arXiv'}: {scope['records']} records "
                     f"({scope['deleted']} deleted) in {scope['requests']} requests, "
                     f"from {scope['from'] or 'the beginning'} until {scope['until']}{resumed}")
    mirror = result["mirror"]
    lines.append(f"{result['http_requests']} HTTP requests ({result['retries']} retries) in "
                 f"{result['seconds']:g} s; mirror: {mirror['records']} records in "
                 f"{mirror['path']}")
    return "\n".join(lines)
