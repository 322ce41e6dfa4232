"""Harvest arXiv into the local mirror: resumable, incremental, one scope at a time.

A scope is an OAI set (``cs``, ``math``, ``physics:hep-th``) or all of arXiv. Each
run covers a window of datestamps, ``from`` the day the last complete run of the
scope reached (nothing: from the beginning) ``until`` today (UTC), so a second run
asks only for what changed since; the two share a day, and records are upserted,
so nothing is missed and nothing held twice.

Every page is stored together with the state it leaves (its resumption token and
the checkpoint datestamp) in one transaction. An interrupted run (Ctrl+C, arXiv
down after the retries, a crash) continues from the saved token; when that has
expired (arXiv's die at the next UTC midnight) or the endpoint calls it bad, the
run restarts from the checkpoint with ``from=``.

Blocking, and polite through ``oaipmh.OaiClient``: run it from the ops command.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from enrichment.mirror import ALL, ArxivMirror, HarvestState
from enrichment.oaipmh import BadResumptionToken, OaiClient, Page

logger = logging.getLogger(__name__)


@dataclass
class ScopeReport:
    """What one scope's run did."""

    scope: str
    from_day: str | None
    until_day: str
    resumed: str | None = None  # "token" or "checkpoint" when an interrupted run went on
    requests: int = 0
    records: int = 0
    deleted: int = 0
    restarts: int = 0  # expired tokens restarted from the checkpoint
    total: int | None = None  # the records the endpoint said the list holds (first page)

    def as_dict(self) -> dict[str, Any]:
        return {"set": self.scope or None, "from": self.from_day, "until": self.until_day,
                "resumed": self.resumed, "requests": self.requests, "records": self.records,
                "deleted": self.deleted, "token_restarts": self.restarts}


@dataclass
class HarvestReport:
    """Every scope's run, in order."""

    scopes: list[ScopeReport] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.scopes)

    @property
    def records(self) -> int:
        return sum(s.records for s in self.scopes)


# Called after every page: (the scope's report so far).
OnPage = Callable[[ScopeReport], None]


def _today() -> datetime:
    return datetime.now(UTC)


def harvest(mirror: ArxivMirror, client: OaiClient, sets: Iterable[str] = (),
            from_day: str | None = None, on_page: OnPage | None = None,
            now: Callable[[], datetime] = _today,
            report: HarvestReport | None = None) -> HarvestReport:
    """Harvest each of ``sets`` (none: all of arXiv) into ``mirror``.

    ``from_day`` (YYYY-MM-DD) starts a new run from that day instead of resuming or
    going on from the last one. ``report`` (filled in as pages arrive) shows what was
    done even when an exception stops the run.
    """
    report = report if report is not None else HarvestReport()
    for scope in list(dict.fromkeys(sets)) or [ALL]:
        scope_report = _harvest_scope(mirror, client, scope, from_day, on_page, now, report)
        logger.info("harvested %s: %d records in %d requests", scope or "all of arXiv",
                    scope_report.records, scope_report.requests)
    return report


def _start(state: HarvestState, from_day: str | None,
           now: datetime) -> tuple[HarvestState, str | None]:
    """The run to do for a scope, and how it resumes (None: a new run)."""
    if state.running and from_day is None:
        return state, "token" if state.token_valid(now) else "checkpoint"
    start = from_day or (state.complete_until if state.complete else None)
    return state.begin(start, now.date().isoformat()), None


def _harvest_scope(mirror: ArxivMirror, client: OaiClient, scope: str, from_day: str | None,
                   on_page: OnPage | None, now: Callable[[], datetime],
                   report: HarvestReport) -> ScopeReport:
    state, resumed = _start(mirror.state(scope), from_day, now())
    if resumed is None:
        mirror.save_state(state)
    assert state.run_until is not None
    scope_report = ScopeReport(scope, state.run_from, state.run_until, resumed)
    report.scopes.append(scope_report)
    token = state.token if resumed == "token" else None
    while True:
        try:
            page = _fetch(client, scope, state, token)
        except BadResumptionToken as exc:
            if token is None:
                raise
            logger.warning("resumption token refused (%s); restarting from %s", exc,
                           state.checkpoint or "the beginning")
            scope_report.requests += 1
            scope_report.restarts += 1
            token = None
            continue
        scope_report.requests += 1
        if scope_report.total is None:
            scope_report.total = page.complete_size or len(page.records)
        state = state.after_page(page.records, page.token, page.token_expires)
        mirror.store_page(page.records, state)
        scope_report.records += sum(not r.deleted for r in page.records)
        scope_report.deleted += sum(r.deleted for r in page.records)
        if on_page is not None:
            on_page(scope_report)
        if not page.token:
            break
        token = page.token
    mirror.save_state(state.finished(now()))
    return scope_report


def _fetch(client: OaiClient, scope: str, state: HarvestState, token: str | None) -> Page:
    if token is not None:
        return client.list_records(token=token)
    return client.list_records(set_spec=scope or None, from_day=state.checkpoint,
                               until_day=state.run_until)
