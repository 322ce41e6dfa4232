"""``scholarindex``: the one command ops need to run the index.

Thin on purpose: each command reads its options, calls one module of ``ops``
(``status``, ``reindex``, ``versions``, ``enrich``, ``tombstones``) or ``indexing.replay``, and
prints the result; failures become one line and an exit status (``scholarindex.ops.console``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from scholarindex import settings as declared
from scholarindex.indexing.client import quiet_transport_logs
from scholarindex.indexing.errors import IndexingError, IndexUnavailable
from scholarindex.indexing.indices import alias_name
from scholarindex.ops import console
from scholarindex.ops.console import (
    EXIT_ALREADY_RUNNING,
    EXIT_CODES_HELP,
    EXIT_DATA_LOST,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    fail,
)
from scholarindex.ops.lock import AliasBusy, AliasLock, LockLost
from scholarindex.ops.settings import OpsSettings, enrichment_config, redis_config
from scholarindex.webui.cli import serve_command

if TYPE_CHECKING:
    from scholarindex.enrichment.config import EnrichmentConfig

F = TypeVar("F", bound=Callable[..., Any])
INDEX_CHOICES = ("works", "researchers", "all")


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES_HELP)
@click.option("-v", "--verbose", is_flag=True, help="Log what happens step by step (stderr).")
def main(verbose: bool) -> None:
    """Operate the Scholar Index search index: status, re-index, rollback, replay,
    enrichment and the search UI. Reads OPENSEARCH_* and INDEX_PREFIX from the
    environment, like the crawler."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    quiet_transport_logs()


# `serve` lives with the web app it runs (scholarindex/webui/cli.py); the cluster is ours to give.
main.add_command(serve_command(lambda: OpsSettings.from_env().opensearch))


def _opensearch_errors(command: F) -> F:
    """An unreachable or refusing cluster: one line naming the URL, exit 3."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except IndexUnavailable as exc:
            url = OpsSettings.from_env().opensearch.safe_url
            fail(f"OpenSearch at {url}: {exc}", console.exit_code_for(exc))
    return cast(F, wrapper)


def _settings(mappings: Path | None = None, dead_letters: Path | None = None) -> OpsSettings:
    return OpsSettings.from_env().with_overrides(mappings_dir=mappings,
                                                 deadletter_path=dead_letters)


def _enrichment_config() -> EnrichmentConfig:
    """``ARXIV_*`` as the crawl reads them; a bad value exits 2."""
    try:
        return enrichment_config()
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)


def _names(which: str) -> list[str]:
    return ["works", "researchers"] if which == "all" else [which]


@contextmanager
def _alias_lock(settings: OpsSettings, client: Any, names: list[str],
                operation: str) -> Iterator[AliasLock]:
    """Hold the aliases' locks (ops.lock) for the command; exit 75 when another run holds one."""
    lock = AliasLock(client, settings.prefix, names, operation, settings.lock_stale_seconds,
                     layout=settings.opensearch.layout)
    try:
        lock.acquire()
    except AliasBusy as exc:
        fail(f"{operation}: {exc}", EXIT_ALREADY_RUNNING)
    for holder in lock.taken_over:
        console.say(f"took over the stale lock of {holder.alias}: {holder.describe()}")
    try:
        yield lock
    finally:
        lock.release()


json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the result as one JSON document on stdout (for scripts).")
mappings_option = click.option(
    "--mappings", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
    help="Folder of mapping files (works.json, researchers.json) to use instead of the "
         "package's index_mappings/ [env INDEX_MAPPINGS_DIR].")
dead_letters_option = click.option(
    "--dead-letters", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help=f"Dead-letter file [env INDEX_DEADLETTER_PATH, default "
         f"{declared.INDEX_DEADLETTER_PATH}].")
index_option = click.option(
    "--index", "which", type=click.Choice(INDEX_CHOICES), default="all", show_default=True,
    help="Which alias: works, researchers, or both.")


# --- status --------------------------------------------------------------------------------

@main.command()
@json_option
@mappings_option
@dead_letters_option
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of crawl run reports (RUN_REPORT JSON files), read when there is no "
                   "crawl-runs index [default: the folder of $RUN_REPORT].")
@click.option("--runs", "last_runs", type=click.IntRange(0), default=5, show_default=True,
              help="How many recent crawl runs to show.")
@click.option("--check", is_flag=True,
              help="Exit 1 when something needs doing (the to-do list is not empty), for "
                   "monitoring.")
@_opensearch_errors
def status(as_json: bool, mappings: Path | None, dead_letters: Path | None,
           reports: Path | None, last_runs: int, check: bool) -> None:
    """Show each alias's live index, version and document count, the older versions
    kept, whether the live mapping differs from the mapping file (and which fields),
    dead-letter entries waiting, works pending arXiv enrichment, the local arXiv mirror
    (size, sets, last harvest) and the last crawl runs, flagging a run whose counts
    dropped sharply against the run before. With REDIS_URL set, also the distributed
    crawl's jobs: state, workers alive and pages each did, queue length and leases."""
    from scholarindex.ops.status import collect, render

    settings = _settings(mappings, dead_letters)
    if reports is None and settings.run_report:
        reports = Path(settings.run_report).parent
    try:
        cache_dir: Path | None = Path(enrichment_config().cache_dir)
    except ValueError:  # a bad ARXIV_* value: the status of the index still matters
        cache_dir = None
    result = collect(settings.client(), settings, reports, last_runs, arxiv_cache_dir=cache_dir,
                     redis=redis_config())
    console.emit(result, as_json, render)
    if check and result["warnings"]:
        fail(f"status: {len(result['warnings'])} thing(s) to do, first: {result['warnings'][0]}")


# --- reindex -------------------------------------------------------------------------------

@main.command()
@index_option
@click.option("--yes", is_flag=True,
              help="Do not ask for confirmation (required without a terminal).")
@click.option("--keep", type=click.IntRange(0), default=1, show_default=True,
              help="Older versions to keep for a rollback; older ones are deleted.")
@click.option("--rebuild", is_flag=True,
              help="Re-derive every document with the current code (indexing.documents) "
                   "instead of copying it as stored, so transform changes apply.")
@click.option("--accept-differences", is_flag=True,
              help="Switch even if facet counts or sample queries differ (an intended change of "
                   "analyzer or transform); document counts must still match.")
@click.option("--batch-size", type=click.IntRange(1), default=2000, show_default=True,
              help="Documents per copy request (server-side slice or bulk request).")
@mappings_option
@json_option
@_opensearch_errors
def reindex(which: str, yes: bool, keep: int, rebuild: bool, accept_differences: bool,
            batch_size: int, mappings: Path | None, as_json: bool) -> None:
    """Build the next version of an index from the mapping files and switch its alias
    to it, with no search downtime.

    Creates the new index, copies every document (server-side _reindex, or with --rebuild through
    the project's transform), catches up writes a running crawl makes meanwhile, checks the copy
    (document counts, every facet's counts, sample queries' top ids), blocks writes to the old index
    for the last catch-up (seconds; a crawl's writer retries the writes refused then, and
    dead-letters them for `replay` only past INDEX_MAX_ATTEMPTS) and switches the alias in one
    atomic call. The previous version is kept, write-blocked, for `scholarindex rollback`. On any
    failure before the switch the alias stays where it was, the old index takes writes again and the
    half-built index is removed.

    One reindex or rollback per alias at a time, across machines: another one
    running exits 75, naming its host, pid and start time (a lock document in
    {INDEX_PREFIX}reindex-lock; a holder silent for REINDEX_LOCK_STALE_SECONDS is
    taken over).
    """
    settings = _settings(mappings)
    client = settings.client()
    names = _names(which)
    with _alias_lock(settings, client, names, "reindex") as lock:
        _reindex_locked(client, settings, lock, names, keep, rebuild, accept_differences,
                        batch_size, yes, as_json)


def _reindex_locked(client: Any, settings: OpsSettings, lock: AliasLock, names: list[str],
                    keep: int, rebuild: bool, accept_differences: bool, batch_size: int,
                    yes: bool, as_json: bool) -> None:
    from scholarindex.ops.reindex import ReindexFailed, ReindexOptions, plan
    from scholarindex.ops.reindex import reindex as run_reindex

    plans: dict[str, str] = {}
    lines = []
    for name in names:
        try:
            live, new, version = plan(client, settings.prefix, name, settings.mappings_dir)
        except ValueError as exc:
            fail(f"reindex {name}: {exc}")
        plans[name] = new
        lines.append(f"  {alias_name(settings.prefix, name)}: {live} -> new {new} "
                     f"(mapping v{version}, "
                     f"{'rebuilt by the current code' if rebuild else 'copied'}); "
                     f"then keep {keep} older version(s), delete the rest")
    console.confirm("Reindex?\n" + "\n".join(lines) + "\nProceed?", yes, "reindex")
    options = ReindexOptions(mappings_dir=settings.mappings_dir, keep=keep, rebuild=rebuild,
                             layout=settings.opensearch.layout,
                             accept_differences=accept_differences, batch_size=batch_size)
    results = []
    error: tuple[str, int] | None = None
    for name in names:
        try:
            result = run_reindex(client, settings.prefix, name, options, _ClickReporter(),
                                 new_index=plans[name],
                                 before_switch=functools.partial(lock.check, name))
        except ReindexFailed as exc:
            results.append(exc.result)
            code = (console.exit_code_for(exc.cause) if isinstance(exc.cause, IndexUnavailable)
                    else EXIT_ALREADY_RUNNING if isinstance(exc.cause, LockLost)
                    else console.EXIT_FAILED)
            error = (f"reindex {name} failed: {exc}", code)
            break
        results.append(result)
    console.emit({"ok": error is None, "results": [r.as_dict() for r in results]}, as_json,
                 lambda _: "\n".join(_reindex_line(r) for r in results))
    if error:
        fail(*error)


def _reindex_line(result: Any) -> str:
    if not result.switched:
        return f"{result.alias}: not switched: {result.error}"
    secs = result.seconds.get("total", 0.0)
    return (f"{result.alias}: {result.old_index} -> {result.new_index}, {result.docs} documents "
            f"({result.caught_up} copied again after changing) in {secs:.1f} s, writes paused "
            f"{result.frozen_ms} ms; kept {', '.join(result.kept) or 'none'}, deleted "
            f"{', '.join(result.deleted) or 'none'}")


class _ClickReporter:
    """Steps and progress bars on stderr."""

    def step(self, message: str) -> None:
        console.say(message)

    def progress(self, label: str, total: int) -> Any:
        return console.progress(label, total)


# --- rollback ------------------------------------------------------------------------------

@main.command()
@index_option
@click.option("--to", "to", default=None,
              help="The concrete index to switch to (with a single --index); default: the "
                   "newest version created before the live one.")
@click.option("--yes", is_flag=True,
              help="Do not ask for confirmation (required without a terminal).")
@click.option("--discard-newer", is_flag=True,
              help="Roll back without the documents the live index took since it went live "
                   "(needed when they cannot be told, e.g. with --to another index).")
@json_option
@_opensearch_errors
def rollback(which: str, to: str | None, yes: bool, discard_newer: bool, as_json: bool) -> None:
    """Point an alias back at the previous kept version, in one atomic call.

    The documents the live version took since it went live (a crawl writing after
    the reindex) are carried back: the live version is write-blocked, those written
    since are copied as they are and those deleted since are deleted, then the alias
    moves. Where they cannot be told (an index made live by an older scholarindex,
    --to an index other than the one it replaced) it refuses, naming why, unless
    --discard-newer. The version left stays write-blocked, so late writes to it are
    refused (and dead-lettered for `scholarindex replay`) instead of silently lost.
    Waits for no one: another reindex or rollback of the alias running exits 75.
    """
    from scholarindex.ops.versions import NewerWritesUnknown, newer_writes, rollback_target
    from scholarindex.ops.versions import rollback as run_rollback

    if to is not None and which == "all":
        fail("--to needs a single --index (works or researchers)", EXIT_USAGE)
    settings = _settings()
    client = settings.client()
    names = _names(which)
    with _alias_lock(settings, client, names, "rollback") as lock:
        moves = []
        for name in names:
            try:
                current, target = rollback_target(client, settings.prefix, name, to)
            except ValueError as exc:
                fail(f"rollback {name}: {exc}")
            newer = newer_writes(client, current, target) if current != target else None
            if newer is not None and newer.why_unknown and not discard_newer:
                fail(f"rollback {name}: {newer.why_unknown}; pass --discard-newer to roll back "
                     "without the writes it took", EXIT_USAGE)
            moves.append((name, current, target, newer))
        console.confirm("Roll back?\n" + "\n".join(
            f"  {alias_name(settings.prefix, n)}: {c} -> {t}" + _newer_note(w, discard_newer)
            for n, c, t, w in moves) + "\nProceed?", yes, "rollback")
        done = []
        for name, current, target, _ in moves:
            try:
                lock.check(name)
            except LockLost as exc:
                fail(f"rollback {name}: {exc}", EXIT_ALREADY_RUNNING)
            try:
                newer = run_rollback(client, settings.prefix, name, current, target,
                                     discard_newer)
            except NewerWritesUnknown as exc:  # changed between the look and the freeze
                fail(f"rollback {name}: {exc}", EXIT_USAGE)
            except IndexUnavailable:
                raise  # exit 3 or 1, naming the cluster (_opensearch_errors)
            except IndexingError as exc:  # the target refused a carried document
                fail(f"rollback {name}: carrying the newer documents back failed: {exc}; "
                     f"{current} is still live and takes writes")
            done.append({"alias": alias_name(settings.prefix, name), "from": current,
                         "to": target, "carried": [] if discard_newer or newer is None
                         else newer.ids,
                         "discarded": newer.ids if discard_newer and newer is not None else []})
    console.emit({"ok": True, "moves": done}, as_json, lambda r: "\n".join(
        f"{m['alias']}: now {m['to']} (was {m['from']}, now write-blocked); carried "
        f"{len(m['carried'])} newer document(s)"
        + (f", discarded {len(m['discarded'])}" if m["discarded"] else "")
        for m in r["moves"]))


def _newer_note(newer: Any, discard: bool) -> str:
    """What happens to the writes the live index took, for the prompt."""
    if newer is None or (not newer.ids and not newer.why_unknown):
        return ""
    if discard:
        return ("\n    DISCARDING " + newer.describe() if newer.ids
                else "\n    DISCARDING whatever it took since it went live (unknown)")
    return "\n    carrying back " + newer.describe()


# --- replay --------------------------------------------------------------------------------

@main.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@json_option
@_opensearch_errors
def replay(file: Path | None, as_json: bool) -> None:
    """Re-deliver dead-lettered changes from FILE [default: the INDEX_DEADLETTER_PATH
    setting, as for the crawl] to the index.

    Each change is merged again against the index as it is now (merges are
    idempotent, so replaying twice is harmless); a listing older than its
    profile's unlist is ignored (counted, not an error: the work stays removed).
    A listing seen more than TOMBSTONE_RETENTION_DAYS ago is not replayed (its
    profile's tombstone may have been pruned): it goes to FILE.expired, counted in
    `expired`, not an error.
    Those that fail again go back to FILE with their new reason; the exit status is
    then non-zero. Crawls may keep appending to FILE meanwhile: it is moved aside first.
    """
    from scholarindex.indexing.replay import replay as run_replay
    from scholarindex.indexing.replay import waiting

    settings = _settings()
    path = file or settings.deadletter_path
    if not waiting(path):
        console.emit({"ok": True, "path": str(path), "read": 0, "delivered": 0,
                      "failed_again": 0}, as_json, lambda _: f"replay: nothing waiting in {path}")
        return
    report = run_replay(path, settings.client(), settings.prefix, settings.writer_retry,
                        retention_days=settings.tombstone_retention_days,
                        layout=settings.opensearch.layout)
    result = {"ok": not (report.failed_again or report.write.fatal), "path": str(path),
              "read": report.read, "delivered": report.delivered,
              "failed_again": report.failed_again, "unreadable": report.unreadable,
              "ignored": report.write.listings_ignored, "fatal": report.write.fatal,
              "expired": report.expired, "expired_path": report.expired_path}
    console.emit(result, as_json, lambda r: (
        f"replay: read {r['read']}, delivered {r['delivered']}, failed again "
        f"{r['failed_again']} (kept in {r['path']})"
        + (f"; ignored {r['ignored']} listing(s) older than their profile's unlist"
           if r["ignored"] else "")
        + (f"; set aside {r['expired']} listing(s) seen more than TOMBSTONE_RETENTION_DAYS="
           f"{settings.tombstone_retention_days:g} ago, not replayed (in {r['expired_path']})"
           if r["expired"] else "")))
    if report.write.fatal:
        fail(f"replay stopped: {report.write.fatal}; the rest is kept in {path}", EXIT_UNAVAILABLE)
    if report.failed_again:
        fail(f"replay: {report.failed_again} change(s) failed again and are back in {path} "
             "with their new reason")


# --- tombstones ----------------------------------------------------------------------------

@main.group()
def tombstones() -> None:
    """The tombstones unlists leave ({INDEX_PREFIX}tombstones), so that an older
    listing cannot bring an unlisted work back."""


@tombstones.command("prune")
@click.option("--older-than", "older_than", type=click.FloatRange(0), default=None,
              metavar="DAYS",
              help="Prune records unlisted more than DAYS ago; not below "
                   "TOMBSTONE_RETENTION_DAYS [default: TOMBSTONE_RETENTION_DAYS, "
                   f"{declared.TOMBSTONE_RETENTION_DAYS:g}].")
@click.option("--dry-run", is_flag=True, help="Count what would be pruned; write nothing.")
@json_option
@_opensearch_errors
def tombstones_prune(older_than: float | None, dry_run: bool, as_json: bool) -> None:
    """Remove tombstone records (per profile) unlisted longer ago than the retention,
    and the tombstones left with no record.

    Safe beside a crawl: every write is conditional (if_seq_no) and a tombstone the
    crawl changed meanwhile is read and pruned again. Safe for replay: replay sets
    aside listings older than TOMBSTONE_RETENTION_DAYS, the only ones a pruned record
    could have stopped; hence DAYS may not be below it.
    """
    from scholarindex.indexing.tombstones import retention_cutoff
    from scholarindex.ops.tombstones import prune

    settings = _settings()
    retention = settings.tombstone_retention_days
    days = retention if older_than is None else older_than
    if days < retention:
        fail(f"tombstones prune: --older-than {days:g} is below TOMBSTONE_RETENTION_DAYS="
             f"{retention:g}: replay would still deliver listings a pruned record must stop; "
             "lower TOMBSTONE_RETENTION_DAYS instead (for replay too)", EXIT_USAGE)
    report = prune(settings.client(), settings.prefix, retention_cutoff(days), dry_run)
    console.emit(report.as_dict() | {"ok": report.left == 0, "older_than_days": days},
                 as_json, lambda r: (
        f"tombstones prune{' (dry run)' if r['dry_run'] else ''}: cutoff {r['cutoff']}: read "
        f"{r['read']} tombstone(s), {'would prune' if r['dry_run'] else 'pruned'} "
        f"{r['records_pruned']} record(s); {r['updated']} tombstone(s) kept with fewer "
        f"records, {r['deleted']} deleted; {r['conflicts']} conflict(s) with concurrent "
        f"writes, {r['left']} left for the next run"))
    if report.left:
        fail(f"tombstones prune: {report.left} tombstone(s) kept changing under concurrent "
             "writes and were left; run it again")


# --- enrich --------------------------------------------------------------------------------

@main.command()
@click.option("--pending", is_flag=True,
              help="Complete the works whose arXiv enrichment is pending (the only mode).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="At most this many works in this run.")
@dead_letters_option
@json_option
@_opensearch_errors
def enrich(pending: bool, limit: int | None, dead_letters: Path | None, as_json: bool) -> None:
    """Look up on arXiv the works a crawl left "pending" (arXiv down, or the crawl
    ended first) and write the verified metadata to the index.

    Uses ARXIV_API_URL, ARXIV_DELAY_SECONDS (never below 3 s against arXiv) and
    ARXIV_CACHE_DIR like the crawl, sharing its cache, request slot and arXiv mirror
    (`scholarindex arxiv harvest`, consulted first), so it may run beside a crawl.
    Exits non-zero if arXiv left works pending.
    """
    from scholarindex.indexing.bulk import BulkWriter
    from scholarindex.indexing.deadletter import DeadLetterFile
    from scholarindex.ops.enrich import count_pending, enrich_pending_works

    if not pending:
        fail("say what to enrich: --pending (works whose enrichment is pending)", EXIT_USAGE)
    config = _enrichment_config()
    settings = _settings(dead_letters=dead_letters)
    client = settings.client()
    writer = BulkWriter(client, settings.prefix, DeadLetterFile(settings.deadletter_path),
                        settings.writer_retry, layout=settings.opensearch.layout)
    total = count_pending(client, settings.prefix)
    with console.progress("enriching pending works", min(total, limit or total)) as advance:
        report = enrich_pending_works(client, settings.prefix, config, writer, limit, advance)
    result = report.as_dict() | {"ok": not (report.still_pending or report.dead_lettered)}
    console.emit(result, as_json, lambda r: (
        f"enrich: {r['attempted']} of {r['pending_before']} pending work(s): matched "
        f"{r['matched']}, not on arXiv {r['unmatched']}, still pending {r['still_pending']}"))
    if report.dead_lettered:
        fail(f"enrich: {report.dead_lettered} result(s) could not be written and went to "
             f"{settings.deadletter_path}: run `scholarindex replay`", EXIT_DATA_LOST)
    if report.still_pending:
        fail(f"enrich: {report.still_pending} work(s) still pending: {report.stopped_early}")


# --- works ---------------------------------------------------------------------------------

@main.group()
def works() -> None:
    """Which listings are one work: why, and decisions that overrule the matcher.

    A finished crawl resolves works by itself (WORKS_RESOLVE); the decisions taken here
    are kept in the cluster and every later resolution keeps to them.
    """


def _resolution_line(r: dict[str, Any]) -> str:
    return (f"resolve ({r['mode']}, {r['pending']} marked changed): {r['documents']} documents, "
            f"{r['atoms']} work ids -> {r['works']} works; "
            f"{r['groups_changed']} group(s) regrouped ({r['written']} written, {r['deleted']} "
            f"removed), {r['conflicts']} left for the next pass; largest work "
            f"{r['largest_work_id']} ({r['largest_work']} work ids); {r['seconds']} s")


@works.command("resolve")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--full", is_flag=True,
              help="Read every work document, not only what changed since the last pass "
                   "and its neighbours; also stores the blocking keys of documents "
                   "written before they were stored.")
@json_option
@_opensearch_errors
def works_resolve(dry_run: bool, full: bool, as_json: bool) -> None:
    """Run the resolution pass now: one work document per paper.

    By default incremental: the works a crawl changed since the last pass, their
    neighbours and the works those belong to, with the clusters a full pass would make.
    When most work documents are marked changed (a first crawl), it reads them all at
    once instead, which is cheaper there.
    """
    from scholarindex.ops import works as ops_works

    report = ops_works.resolve(_settings(), dry_run, full=full)
    result = report.as_dict() | ({"changes": report.changes} if dry_run else {})
    console.emit(result, as_json, _resolution_line)


@works.command("explain")
@click.argument("work_id")
@json_option
@_opensearch_errors
def works_explain(work_id: str, as_json: bool) -> None:
    """The work holding WORK_ID: its listings, and why each work id joined it."""
    from scholarindex.ops import works as ops_works

    found = ops_works.explain(_settings(), work_id)
    if found is None:
        fail(f"works explain: no work holds {work_id}")

    def text(r: dict[str, Any]) -> str:
        lines = [f"work {r['work_id']}: {r['title']}"]
        lines += [f"  {item['work_id']}  {item['researcher']}: {item['title']} "
                  f"({item['year']}, {item['venue']})" for item in r["listings"]]
        lines += [f"  joined {j['work_id']}: by {j['by']}"
                  + (f", score {j['score']}" if j.get("score") is not None else "")
                  + (f" ({'; '.join(j['evidence'])})" if j.get("evidence") else "")
                  for j in r["joined"]]
        return "\n".join(lines)

    console.emit(found, as_json, text)


@works.command("compare")
@click.argument("first")
@click.argument("second")
@json_option
@_opensearch_errors
def works_compare(first: str, second: str, as_json: bool) -> None:
    """What the matcher reads of work ids FIRST and SECOND, and its verdict on them."""
    from scholarindex.ops import works as ops_works

    try:
        found = ops_works.compare(_settings(), first, second)
    except LookupError as exc:
        fail(f"works compare: no work holds listings of {exc.args[0]}")

    def side(s: dict[str, Any]) -> list[str]:
        def listed(name: str) -> str:
            return ", ".join(map(str, s[name])) or "-"
        return [f"{s['work_id']} (in work {s['work']}): {' | '.join(s['titles'])}",
                f"  years {listed('years')}; venues {listed('venues')}; "
                f"listed by {listed('owners')}",
                f"  authors {listed('authors')}"
                + (f"; verified {listed('verified')}" if s["verified"] else "")]

    def text(r: dict[str, Any]) -> str:
        v = r["verdict"]
        verdict = (f"{'alike' if v['match'] else 'apart'}, score {v['score']}"
                   f"{', a conflict: never one work' if v['conflict'] else ''} "
                   f"({'; '.join(v['evidence'])})")
        where = "one work" if r["one_work"] else "two works"
        if r["decisions"]:
            where += ", as ops decided: " + "; ".join(
                f"{d['kind']} ({d['decided_at']}) {d['note']}".rstrip() for d in r["decisions"])
        elif v["match"] and not r["one_work"]:
            where += (", though judged alike: the pass joined one of them with a better "
                      "partner, found a tie, or a conflict between their groups")
        return "\n".join([*side(r["first"]), *side(r["second"]), f"matcher: {verdict}",
                          f"now: {where}"])

    console.emit(found, as_json, text)


@works.command("review")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many joins to list.")
@json_option
@_opensearch_errors
def works_review(limit: int, as_json: bool) -> None:
    """The matcher's joins on the thinnest evidence first, to check by hand."""
    from scholarindex.ops import works as ops_works

    found = ops_works.review(_settings(), limit)

    def text(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "no joins made by the matcher"
        lines = [f"{r['score']:.3f} {'strong' if r['strong'] else 'weak  '} {r['work_id']} "
                 f"({' | '.join(r['titles'])}) joined {r['joined_to']} in work {r['work']} "
                 f"({r['title']}): {'; '.join(r['evidence'])}" for r in rows]
        lines.append("wrong? scholarindex works keep-apart WORK_ID JOINED_TO")
        return "\n".join(lines)

    console.emit(found, as_json, text)


def _decide(kind: str, first: str, second: str, note: str, as_json: bool) -> None:
    from scholarindex.indexing.decisions import decision
    from scholarindex.ops import works as ops_works

    try:
        chosen = decision(kind, first, second, note)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    report = ops_works.decide(_settings(), chosen)
    console.emit(report.as_dict() | {"decision": chosen.__dict__}, as_json,
                 lambda r: f"recorded: {kind} {chosen.a} {chosen.b}\n" + _resolution_line(r))


note_option = click.option("--note", default="", help="Why (kept with the decision).")


@works.command("keep-apart")
@click.argument("first")
@click.argument("second")
@note_option
@json_option
@_opensearch_errors
def works_keep_apart(first: str, second: str, note: str, as_json: bool) -> None:
    """Never put the listings of work ids FIRST and SECOND in one work (then resolve)."""
    _decide("apart", first, second, note, as_json)


@works.command("join")
@click.argument("first")
@click.argument("second")
@note_option
@json_option
@_opensearch_errors
def works_join(first: str, second: str, note: str, as_json: bool) -> None:
    """Always put the listings of work ids FIRST and SECOND in one work (then resolve)."""
    _decide("join", first, second, note, as_json)


@works.command("forget")
@click.argument("first")
@click.argument("second")
@json_option
@_opensearch_errors
def works_forget(first: str, second: str, as_json: bool) -> None:
    """Drop the decisions on FIRST and SECOND; the next resolution decides on evidence."""
    from scholarindex.ops import works as ops_works

    removed = ops_works.forget(_settings(), first, second)
    console.emit({"removed": removed}, as_json, lambda r: f"forgot {r['removed']} decision(s)")


@works.command("decisions")
@json_option
@_opensearch_errors
def works_decisions(as_json: bool) -> None:
    """List the decisions taken with keep-apart and join."""
    from scholarindex.ops import works as ops_works

    found = [d.__dict__ for d in ops_works.decisions(_settings())]
    console.emit(found, as_json, lambda rows: "\n".join(
        f"{r['kind']:5}  {r['a']}  {r['b']}  {r['decided_at']}  {r['note']}" for r in rows)
        or "no decisions")


# --- arxiv harvest -------------------------------------------------------------------------

@main.group()
def arxiv() -> None:
    """The local arXiv mirror that enrichment consults before arXiv's query API."""


@arxiv.command()
@click.option("--set", "sets", multiple=True, metavar="SET",
              help="An OAI set to harvest (cs, math, physics:hep-th, cs:cs:LG) or an arXiv "
                   "category (cs.LG, read as cs:cs:LG); repeat for several. "
                   "Default: all of arXiv (only a mirror of all of arXiv can say a paper is "
                   "not on arXiv; with sets, titles it lacks still go to the query API).")
@click.option("--from", "from_day", type=click.DateTime(["%Y-%m-%d"]), default=None,
              metavar="YYYY-MM-DD",
              help="Harvest what changed since this day (not before arXiv's earliest "
                   "datestamp, 2005-09-16) instead of since the last harvest.")
@click.option("--rebuild", is_flag=True,
              help="Empty the mirror and harvest it again from the beginning.")
@json_option
def harvest(sets: tuple[str, ...], from_day: Any, rebuild: bool, as_json: bool) -> None:
    """Harvest arXiv's metadata over OAI-PMH into the local mirror in ARXIV_CACHE_DIR.

    Follows resumption tokens at one request every ARXIV_DELAY_SECONDS (never below
    3 s against arXiv; the same machine-wide request slot as enrichment), waits out
    503s as Retry-After says, and saves its place after every page: run it again
    after an interruption and it resumes. A later run asks only for what changed
    since the last one (from=). A request arXiv refuses fails with arXiv's reason
    (exit 1) and changes nothing saved. Reads ARXIV_OAI_URL [default
    https://oaipmh.arxiv.org/oai]. Exits 2 for a set or day arXiv would refuse (before
    any request), 3 if the endpoint stays unavailable, 75 if another harvest of the
    same mirror is running.
    """
    import time
    from collections import Counter
    from datetime import UTC, datetime

    from scholarindex.enrichment.errors import ArxivUnavailable, EnrichmentError
    from scholarindex.enrichment.harvest import BadRequest, HarvestReport, check_request
    from scholarindex.enrichment.mirror import ArxivMirror
    from scholarindex.ops.arxiv import HarvestRunning, Progress, render, run_harvest, summary

    config = _enrichment_config()
    day = from_day.date().isoformat() if from_day else None
    try:
        oai_sets, notes = check_request(sets, day, datetime.now(UTC).date().isoformat())
    except BadRequest as exc:
        fail(f"arxiv harvest: {exc}", EXIT_USAGE)
    for note in notes:
        click.echo(f"arxiv harvest: {note}", err=True)
    report = HarvestReport()
    http: Counter[str] = Counter()
    started = time.monotonic()
    error: tuple[str, int] | None = None
    try:
        mirror = run_harvest(config, oai_sets, day, Progress(), report, http, rebuild)
    except HarvestRunning as exc:
        fail(f"arxiv harvest: {exc}", console.EXIT_ALREADY_RUNNING)
    except ArxivUnavailable as exc:
        error = (f"{exc}; run again to resume", EXIT_UNAVAILABLE)
    except EnrichmentError as exc:
        error = (f"{config.oai_url} refused the harvest: {exc}",
                 console.EXIT_FAILED)
    if error is not None:
        mirror = ArxivMirror(config.cache_dir)
    result = summary(report, mirror, time.monotonic() - started, http,
                     error[0] if error else None)
    console.emit(result, as_json, render)
    if error is not None:
        fail(f"arxiv harvest: {error[0]}", error[1])
