"""``scholarindex status``: everything ops want to know about the index, in one look.

Per alias: the concrete index and version, its document count, the older
versions kept (and any unfinished reindex), whether its live mapping differs from
the mapping file (which fields). Then dead-letter entries waiting for a replay,
works waiting for arXiv enrichment, the local arXiv mirror (size, sets, last
harvest), the last crawl runs with sharp drops flagged, and with ``REDIS_URL`` the
distributed crawl's jobs (state, workers alive, queue length, leases). ``warnings`` lists
what needs doing, one line each.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from opensearchpy import OpenSearch

from scholarindex.enrichment.mirror import ArxivMirror
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.indices import (
    INDEX_NAMES,
    RUNS_INDEX,
    alias_name,
    alias_target,
    body_version,
    read_mapping,
)
from scholarindex.indexing.replay import waiting
from scholarindex.ops.enrich import count_pending
from scholarindex.ops.mappings import diff_mapping, live_mapping
from scholarindex.ops.runs import flag_drops, run_summary, runs_from_files, runs_from_index
from scholarindex.ops.settings import OpsSettings
from scholarindex.ops.versions import BUILD_INCOMPLETE, family

if TYPE_CHECKING:
    from scholarindex.distributed.connection import RedisConfig


def collect(client: OpenSearch, settings: OpsSettings, reports_dir: Path | None = None,
            last_runs: int = 5, arxiv_cache_dir: Path | None = None,
            redis: RedisConfig | None = None) -> dict[str, Any]:
    """The status as a JSON-ready dict (raises ``IndexUnavailable`` if the cluster is down).

    ``arxiv_cache_dir``: where to look for the arXiv mirror (``ARXIV_CACHE_DIR``);
    ``redis``: the distributed crawl's Redis (``REDIS_URL``), for its jobs.
    """
    prefix = settings.prefix
    with translate_errors("GET /"):
        client.info()
    status: dict[str, Any] = {"opensearch": settings.opensearch.safe_url, "prefix": prefix,
                              "indices": [], "warnings": []}
    warnings: list[str] = status["warnings"]
    for name in INDEX_NAMES:
        entry = _alias_status(client, settings, name)
        status["indices"].append(entry)
        warnings.extend(entry.pop("_warnings"))
    status["dead_letters"] = dead_letters_waiting(settings.deadletter_path)
    if status["dead_letters"]["waiting"]:
        warnings.append(f"{status['dead_letters']['waiting']} dead-lettered change(s) waiting: "
                        f"run `scholarindex replay {settings.deadletter_path}`")
    status["enrichment_pending"] = _pending(client, prefix)
    if status["enrichment_pending"]:
        warnings.append(f"{status['enrichment_pending']} work(s) pending arXiv enrichment: "
                        "run `scholarindex enrich --pending`")
    status["arxiv_mirror"] = mirror_status(arxiv_cache_dir) if arxiv_cache_dir else None
    for scope in (status["arxiv_mirror"] or {}).get("sets", []):
        if scope["interrupted"]:
            warnings.append(f"the arXiv harvest of {scope['set']} was interrupted: run "
                            "`scholarindex arxiv harvest` again to resume it")
    status["distributed"] = distributed_status(redis) if redis is not None else None
    if status["distributed"] and status["distributed"].get("error"):
        warnings.append(f"the distributed crawl's Redis: {status['distributed']['error']}")
    status["crawl_runs"] = _runs(client, prefix, reports_dir, last_runs)
    for run in status["crawl_runs"]["runs"]:
        if run["drops"]:
            warnings.append(f"crawl run of job {run.get('job')} at {run.get('finished_at')}: "
                            + ", ".join(run["drops"]))
        if run.get("ok") is False:
            warnings.append(f"crawl run of job {run.get('job')} at {run.get('finished_at')} "
                            f"failed: {run.get('exit_reason')}")
    return status


def _alias_status(client: OpenSearch, settings: OpsSettings, name: str) -> dict[str, Any]:
    prefix = settings.prefix
    alias = alias_name(prefix, name)
    entry: dict[str, Any] = {"name": name, "alias": alias, "_warnings": []}
    target = alias_target(client, prefix, name)
    infos = family(client, prefix, name)
    entry["index"] = target
    live = next((i for i in infos if i.index == target), None)
    entry["version"] = live.version if live else None
    entry["docs"] = live.docs if live else None
    entry["write_blocked"] = live.write_blocked if live else None
    created = live.created if live is not None else float("inf")
    entry["older_versions"] = [i.as_dict() for i in infos
                               if i.index != target and i.created <= created]
    entry["other_indices"] = [i.as_dict() for i in infos
                              if i.index != target and i.created > created]
    if target is None:
        entry["_warnings"].append(f"alias {alias} does not exist yet (the first crawl creates it)")
        return entry
    if live is not None and live.write_blocked:
        entry["_warnings"].append(f"{target} is live but write-blocked (an interrupted reindex?): "
                                  f"crawls cannot write; run `scholarindex rollback --index "
                                  f"{name} --to {target}` to unblock it")
    for info in infos:
        if info.build == BUILD_INCOMPLETE and info.index != target:
            entry["_warnings"].append(f"{info.index} is an unfinished reindex (running now, or "
                                      "interrupted: delete it)")
    try:
        body = read_mapping(name, settings.mappings_dir)
    except ValueError as exc:
        entry["mapping"] = {"file": None, "error": str(exc)}
        entry["_warnings"].append(str(exc))
        return entry
    mappings, index_settings = live_mapping(client, target)
    diff = diff_mapping(body, mappings, index_settings)
    entry["mapping"] = {"file": str(settings.mappings_dir / f"{name}.json"),
                        "file_version": body_version(body), **diff.as_dict()}
    if not diff.same:
        entry["_warnings"].append(f"{target} mapping differs from {name}.json ({diff.summary()}): "
                                  f"run `scholarindex reindex --index {name}`")
    return entry


def distributed_status(config: RedisConfig) -> dict[str, Any]:
    """The jobs of the distributed crawl in Redis, running first (or why Redis did not say)."""
    from scholarindex.distributed.connection import (  # Redis only when configured
        RedisLink,
        RedisUnavailable,
    )
    from scholarindex.distributed.jobs import job_statuses

    link = RedisLink(config.url, retry_seconds=2.0, timeout=5.0)
    try:
        jobs = [job.as_dict() for job in job_statuses(link, config.key_prefix)]
    except RedisUnavailable as exc:
        return {"redis": config.safe_url, "jobs": [], "error": str(exc)}
    finally:
        link.close()
    return {"redis": config.safe_url, "jobs": jobs}


def _render_distributed(distributed: dict[str, Any] | None) -> list[str]:
    if distributed is None:
        return []
    if distributed.get("error"):
        return [f"distributed crawl (Redis {distributed['redis']}): {distributed['error']}"]
    lines = [f"distributed crawl (Redis {distributed['redis']}): "
             f"{len(distributed['jobs'])} job(s)"]
    for job in distributed["jobs"]:
        when = (f"started {job['started_at']}" if job["state"] == "running"
                else f"finished {job['finished_at'] or '?'}")
        lines.append(f"  job {job['name']}: {job['state']} ({when}), {len(job['workers'])} "
                     f"worker(s), {job['queued']} queued, {job['leased']} leased"
                     + (f", {job['dead']} set aside" if job["dead"] else ""))
        lines.extend(f"    worker {w['worker']}: {w['pages_done']} pages done"
                     for w in job["workers"])
    return lines


def dead_letters_waiting(path: Path) -> dict[str, Any]:
    """Lines waiting in the dead-letter file and in replays that did not finish."""
    files = waiting(path)
    lines = 0
    for file in files:
        with open(file, "rb") as handle:
            lines += sum(1 for line in handle if line.strip())
    return {"path": str(path), "waiting": lines, "files": [str(f) for f in files]}


def mirror_status(cache_dir: Path) -> dict[str, Any] | None:
    """The arXiv mirror's size, sets and last harvest; None if none was harvested there."""
    mirror = ArxivMirror.existing(cache_dir)
    if mirror is None:
        return None
    try:
        return mirror.summary()
    finally:
        mirror.close()


def _render_mirror(mirror: dict[str, Any] | None) -> list[str]:
    if mirror is None:
        return ["arXiv mirror: none (enrichment asks the query API; see `scholarindex arxiv "
                "harvest`)"]
    lines = [f"arXiv mirror: {mirror['records']} records, last harvest "
             f"{mirror['last_harvest'] or 'never finished'} ({mirror['path']})"]
    for scope in mirror["sets"]:
        if scope["complete_until"]:
            state = (f"complete from {scope['complete_from'] or 'the beginning'} until "
                     f"{scope['complete_until']}")
        else:
            state = "never finished"
        if scope["interrupted"]:
            state += "; a later run INTERRUPTED (harvest again to resume)"
        lines.append(f"  {scope['set']}: {state}")
    if mirror.get("outdated"):
        lines.append("  OUTDATED records (read in an older format): the next harvest asks for "
                     "everything again; until then the query API is asked about titles the "
                     "mirror lacks")
    return lines


def _pending(client: OpenSearch, prefix: str) -> int | None:
    if alias_target(client, prefix, "works") is None:
        return None
    return count_pending(client, prefix)


def _runs(client: OpenSearch, prefix: str, reports_dir: Path | None,
          last: int) -> dict[str, Any]:
    runs = runs_from_index(client, prefix)
    source = f"index {alias_name(prefix, RUNS_INDEX)}"
    if runs is None:
        if reports_dir is not None and reports_dir.is_dir():
            runs, source = runs_from_files(reports_dir), f"reports in {reports_dir}"
        else:
            return {"source": None, "runs": []}
    return {"source": source, "runs": flag_drops(runs)[:last]}


def render(status: dict[str, Any]) -> str:
    """The status for people."""
    lines = [f"OpenSearch {status['opensearch']}, prefix {status['prefix']!r}"]
    for entry in status["indices"]:
        if entry["index"] is None:
            lines.append(f"{entry['alias']}: no alias yet")
            continue
        blocked = ", WRITE-BLOCKED" if entry.get("write_blocked") else ""
        lines.append(f"{entry['alias']} -> {entry['index']} (v{entry['version']}), "
                     f"{entry['docs']} documents{blocked}")
        mapping = entry.get("mapping") or {}
        if mapping.get("error"):
            lines.append(f"  mapping: {mapping['error']}")
        elif mapping.get("same"):
            lines.append(f"  mapping: matches {mapping['file']} (v{mapping['file_version']})")
        else:
            lines.append(f"  mapping: differs from {mapping['file']}:")
            for label in ("added", "removed", "changed"):
                if mapping.get(label):
                    lines.append(f"    {label}: {', '.join(mapping[label])}")
            lines.extend(f"    {other}" for other in mapping.get("other", []))
        older = entry["older_versions"]
        lines.append("  older versions kept: " + (", ".join(_describe(i) for i in older)
                                                 if older else "none"))
        if entry["other_indices"]:
            lines.append("  newer, not live: " + ", ".join(_describe(i)
                                                          for i in entry["other_indices"]))
    dead = status["dead_letters"]
    lines.append(f"dead letters waiting: {dead['waiting']} ({dead['path']})")
    pending = status["enrichment_pending"]
    lines.append(f"works pending enrichment: {'-' if pending is None else pending}")
    lines.extend(_render_mirror(status.get("arxiv_mirror")))
    lines.extend(_render_distributed(status.get("distributed")))
    runs = status["crawl_runs"]
    if runs["source"] is None:
        lines.append("crawl runs: none recorded (no crawl-runs index; pass --reports DIR "
                     "for RUN_REPORT files)")
    else:
        lines.append(f"crawl runs (from {runs['source']}):")
        for run in runs["runs"]:
            lines.append(f"  {run_summary(run)}")
            lines.extend(f"    ! dropped: {drop}" for drop in run["drops"])
    if status["warnings"]:
        lines.append("to do:")
        lines.extend(f"  - {w}" for w in status["warnings"])
    return "\n".join(lines)


def _describe(info: dict[str, Any]) -> str:
    flags = [f"{info['docs']} docs"]
    if info.get("write_blocked"):
        flags.append("write-blocked")
    if info.get("build") == BUILD_INCOMPLETE:
        flags.append("UNFINISHED")
    return f"{info['index']} (v{info['version']}, {', '.join(flags)})"
