"""Harvest arXiv into the local mirror: resumable, incremental, one scope at a time.

A scope is an OAI set (``cs``, ``cs:cs:LG``, ``physics:hep-th``; ``oai_set`` also
reads the dotted category names, ``cs.LG``) or all of arXiv. Each run asks ``from``
the day the last complete run of the scope started (nothing: from the beginning),
without ``until`` as arXiv asks of incremental harvesters; the run records today
(UTC) as the day it reached, so the next run asks only for what changed since. The
two share a day, and records are upserted, so nothing is missed and nothing held twice.

A request the endpoint refuses (``OaiError``: a set it does not have, a start date
before its first record) fails the run with arXiv's own reason and leaves the saved
state as it was, so a later plain run is not refused in turn. ``check_request``
catches the usual mistakes before any request: a day before arXiv's earliest
datestamp or after today, a set name arXiv does not use.

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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from scholarindex.core.arxiv_categories import is_oai_set, oai_set_of
from scholarindex.enrichment.mirror import ALL, ArxivMirror, HarvestState
from scholarindex.enrichment.oaipmh import (
    EARLIEST_DATESTAMP,
    BadResumptionToken,
    OaiClient,
    OaiError,
    Page,
)

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
    before = mirror.state(scope)
    state, resumed = _start(before, from_day, now())
    if resumed is None:
        mirror.save_state(state)  # an outage before the first page resumes this run
    assert state.run_until is not None
    scope_report = ScopeReport(scope, state.run_from, state.run_until, resumed)
    report.scopes.append(scope_report)
    token = state.token if resumed == "token" else None
    while True:
        try:
            page = _fetch(client, scope, state, token)
        except BadResumptionToken as exc:
            if token is None:
                _refused(mirror, before, state, exc)
            logger.warning("resumption token refused (%s); restarting from %s", exc,
                           state.checkpoint or "the beginning")
            scope_report.requests += 1
            scope_report.restarts += 1
            token = None
            continue
        except OaiError as exc:
            _refused(mirror, before, state, exc)
        scope_report.requests += 1
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


def _refused(mirror: ArxivMirror, before: HarvestState, state: HarvestState,
             error: OaiError) -> None:
    """The endpoint refused a request: raise it, with the saved state as it should stay.

    A run that stored nothing leaves the state it found (less a run in progress that
    never stored a page either: refused now, it would be refused every time); one that
    stored pages keeps them and drops its token, so the next run asks again from its
    checkpoint."""
    if state.run_requests == 0:
        mirror.restore_state(before.abandoned() if before.run_requests == 0 else before)
    else:
        mirror.save_state(replace(state, token=None, token_expires=None))
    raise error


def _fetch(client: OaiClient, scope: str, state: HarvestState, token: str | None) -> Page:
    if token is not None:
        return client.list_records(token=token)
    return client.list_records(set_spec=scope or None, from_day=state.checkpoint)


# --- what a harvest may ask, checked before any request ------------------------------

class BadRequest(ValueError):
    """A harvest arXiv would refuse, caught before asking: the message says why."""


def oai_set(name: str) -> str:
    """The OAI set of a set or category name: ``cs`` and ``physics:hep-th`` as they are,
    ``cs.LG`` -> ``cs:cs:LG``, ``hep-th`` -> ``physics:hep-th`` (``core.arxiv_categories``).
    ``BadRequest`` for a name arXiv has no set for."""
    name = name.strip()
    if ":" in name:
        if is_oai_set(name):
            return name
        raise BadRequest(f"{name!r} is not an arXiv OAI set: sets are a group (cs, math, "
                         "physics), group:archive (physics:hep-th) or group:archive:SUBJECT "
                         "(cs:cs:LG)")
    spec = oai_set_of(name)
    if spec is None:
        raise BadRequest(f"{name!r} is neither an arXiv OAI set (cs, math, physics:hep-th, "
                         "cs:cs:LG) nor an arXiv category (cs.LG, hep-th)")
    return spec


def check_request(sets: Iterable[str], from_day: str | None,
                  today: str) -> tuple[list[str], list[str]]:
    """The OAI sets to harvest, and notes on names read as another (``cs.LG`` is set
    ``cs:cs:LG``). ``BadRequest`` for a set arXiv has none for, or a ``from_day``
    (YYYY-MM-DD) before arXiv's earliest datestamp or after ``today``: the endpoint
    would refuse both."""
    if from_day is not None and from_day < EARLIEST_DATESTAMP:
        raise BadRequest(f"--from {from_day} is before arXiv's earliest datestamp "
                         f"{EARLIEST_DATESTAMP} (no record changed earlier); leave --from "
                         "out to harvest from the beginning")
    if from_day is not None and from_day > today:
        raise BadRequest(f"--from {from_day} is after today ({today}, UTC)")
    translated, notes = [], []
    for name in sets:
        spec = oai_set(name)
        if spec != name.strip():
            notes.append(f"{name} is arXiv's OAI set {spec}")
        translated.append(spec)
    return list(dict.fromkeys(translated)), notes
