"""The last crawl runs, and which of them look wrong next to the run before.

Runs are read from the ``{INDEX_PREFIX}crawl-runs`` index when it exists
(``crawler/extensions/report.py`` shapes reports for it with
``report_to_document``), otherwise from the JSON reports a crawl writes with
``-s RUN_REPORT=DIR/...`` (``--reports DIR``, or the folder of ``RUN_REPORT``).

A paused and resumed run is stored as one document per part, sharing ``run_id``;
``merge_parts`` adds the parts up into one run, so a resumed run's second half is
not mistaken for a run that found half as much. The workers of a distributed crawl
also share the job's ``run_id``, but they run side by side: each counts the whole URL
list, and their times overlap. Their parts (told apart by ``worker``, or by times that
overlap) add up into one run with the URL list counted once (``pages.listed``: the
largest of the workers'), the job's wall time from the first start to the last finish
(``duration_seconds``), and each worker's own figures beside the totals (``workers``).

A run is flagged when one of its counts fell sharply against the previous run of
the same job: a site that changed its layout parses fewer profiles, a dead
dependency indexes nothing, and the exit status alone may still be 0.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.indices import RUNS_INDEX, alias_name

logger = logging.getLogger(__name__)

# (label, path in the report) of the counts compared between runs of one job.
WATCHED = (("pages parsed", ("pages", "parsed")), ("listings", ("listings",)),
           ("distinct works", ("distinct_works",)), ("documents indexed", ("indexed",)))
# Counts that add up over the parts of a resumed run.
_SUMMED = ("researchers", "listings", "listings_unread", "distinct_works", "items_scraped",
           "merged", "enriched", "pending", "indexed", "listings_delivered", "unlisted",
           "docs_deleted", "dead_lettered", "errors_logged", "duration_seconds")
DROP_RATIO = 0.5  # flagged when a count falls below half the previous run's...
MIN_BASE = 10  # ...and the previous run had at least this many (small runs are noisy)
_FETCH = 200


def runs_from_index(client: OpenSearch, prefix: str) -> list[dict[str, Any]] | None:
    """The recorded runs, newest first; None when the index does not exist."""
    index = alias_name(prefix, RUNS_INDEX)
    with translate_errors(f"exists {index}"):
        if not client.indices.exists(index=index):
            return None
    # The newest by the server (finished_at is a date in index_mappings/crawl-runs.json),
    # so the last runs are found however many are stored.
    with translate_errors(f"search {index}"):
        hits = client.search(index=index, body={"size": _FETCH, "query": {"match_all": {}},
                                                "sort": [{"finished_at": "desc"}]})
    return merge_parts(_newest_first(hit["_source"] for hit in hits["hits"]["hits"]))


def runs_from_files(folder: Path) -> list[dict[str, Any]]:
    """The run reports (``*.json``) in ``folder``, newest first; unreadable ones skipped."""
    runs = []
    for path in sorted(folder.glob("*.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            logger.warning("skipping run report %s: %s", path, exc)
            continue
        if isinstance(report, dict) and report.get("finished_at"):
            runs.append(report | {"report_file": str(path)})
    return merge_parts(_newest_first(runs))


def merge_parts(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs (newest first) with the parts of each resumed run added up into one."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for n, run in enumerate(runs):
        groups.setdefault(str(run.get("run_id") or f"#{n}"), []).append(run)
    merged = []
    for parts in groups.values():
        if len(parts) == 1:
            merged.append(parts[0])
            continue
        run = dict(parts[0])  # the part that finished last: its verdict is the run's
        for name in _SUMMED:
            values = [p.get(name) for p in parts]
            if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
                run[name] = sum(values)
        pages = [p.get("pages") or {} for p in parts]
        run["pages"] = {k: sum(pg.get(k, 0) for pg in pages)
                        if all(isinstance(pg.get(k, 0), int) for pg in pages) else v
                        for k, v in pages[0].items()}
        run["started_at"] = min(str(p.get("started_at") or "") for p in parts)
        run["finished_at"] = max(str(p.get("finished_at") or "") for p in parts)
        if _side_by_side(parts):
            listed = [pg.get("listed") for pg in pages]
            counts = [n for n in listed if isinstance(n, int)]
            if counts and len(counts) == len(listed):
                run["pages"]["listed"] = max(counts)  # each worker counts the whole list
            wall = _seconds_between(run["started_at"], run["finished_at"])
            if wall is not None:
                run["duration_seconds"] = wall
            run["workers"] = [_worker_figures(p) for p in sorted(
                parts, key=lambda p: str(p.get("started_at") or ""))]
        run["parts"] = len(parts)
        run["distinct_works_exact"] = False  # a work seen in two parts counts twice
        merged.append(run)
    return _newest_first(merged)


def _side_by_side(parts: list[dict[str, Any]]) -> bool:
    """Workers of a distributed crawl (named, or running at the same time), not the
    parts of a paused and resumed run (one after the other)."""
    if any(p.get("worker") for p in parts):
        return True
    spans = sorted((str(p.get("started_at") or ""), str(p.get("finished_at") or ""))
                   for p in parts)
    return any(later[0] < earlier[1] for earlier, later in pairwise(spans))


def _seconds_between(start: str, end: str) -> float | None:
    try:
        return round((datetime.fromisoformat(end) - datetime.fromisoformat(start))
                     .total_seconds(), 3)
    except ValueError:
        return None


def _worker_figures(part: Mapping[str, Any]) -> dict[str, Any]:
    pages = part.get("pages") or {}
    return {"worker": part.get("worker"), "started_at": part.get("started_at"),
            "finished_at": part.get("finished_at"),
            "duration_seconds": part.get("duration_seconds"),
            "exit_code": part.get("exit_code"), "pages_fetched": pages.get("fetched"),
            "pages_parsed": pages.get("parsed"), "listings": part.get("listings"),
            "indexed": part.get("indexed")}


def flag_drops(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run (newest first) with ``drops``: counts that fell sharply since its job's last run."""
    flagged = []
    for i, run in enumerate(runs):
        previous = next((r for r in runs[i + 1:] if r.get("job") == run.get("job")), None)
        drops = []
        if previous is not None:
            for label, path in WATCHED:
                before, now = _count(previous, path), _count(run, path)
                if before is not None and now is not None and before >= MIN_BASE \
                        and now < before * DROP_RATIO:
                    drops.append(f"{label} {before} -> {now} ({(now - before) / before:+.0%})")
        flagged.append(dict(run, drops=drops))
    return flagged


def run_summary(run: Mapping[str, Any]) -> str:
    """One line about a run."""
    pages = run.get("pages") or {}
    verdict = "ok" if run.get("ok") else f"FAILED ({run.get('exit_reason') or 'no reason'})"
    return (f"{run.get('finished_at', '?')} job {run.get('job') or '?'}: {verdict}, "
            f"exit {run.get('exit_code', '?')}; pages parsed {pages.get('parsed', '?')}, "
            f"listings {run.get('listings', '?')}, works {run.get('distinct_works', '?')}, "
            f"indexed {run.get('indexed', '?')}, dead-lettered {run.get('dead_lettered', '?')}"
            + (f"; {len(run['workers'])} workers, parsed "
               f"{'/'.join(str(w.get('pages_parsed', '?')) for w in run['workers'])}"
               if run.get("workers") else ""))


def _newest_first(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted((dict(r) for r in runs), key=lambda r: str(r.get("finished_at") or ""),
                  reverse=True)


def _count(run: Mapping[str, Any], path: tuple[str, ...]) -> int | None:
    value: Any = run
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
