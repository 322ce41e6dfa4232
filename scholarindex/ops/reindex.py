"""Zero-downtime reindex of one alias: build, fill, catch up, verify, switch, keep N.

The steps, for ``{prefix}works`` pointing at ``works-v1`` while a crawl may be
writing to it through the alias:

1. **Create** ``works-v2`` (the next name) from the mapping file, marked
   ``_meta.build.state = incomplete`` and with refreshes off while it fills.
2. **Copy**: record every document's ``(_seq_no, _primary_term)`` on ``works-v1``
   (``ChangeFeed.start``), then ``_reindex`` in slices; with ``--rebuild``, read
   every document and write it re-derived by ``scholarindex.indexing.documents``.
3. **Catch up**: each pass copies again the documents whose version changed
   since we copied them (and deletes those gone), until a pass is small.
4. **Verify**: document count, every facet's value counts and sample queries'
   top ids on both indices, over the documents that did not change meanwhile
   (``scholarindex.ops.verify``); the ones that did are copied again after.
5. **Freeze and finish**: ``works-v1`` is write-blocked, then passes copy what
   changed until one finds nothing, and the counts must now be exactly equal.
   If writes never paused long enough for step 4 (a busy crawl keeps creating
   documents), the comparison runs now, on the frozen index.
   A write that reaches ``works-v1`` while it is frozen (seconds: two id scans, the last few
   documents, two counts; longer when the comparison runs then) is refused with HTTP 403; the
   crawl's writer retries it with backoff (``indexing.client.classify_item``), so it lands once the
   alias points at ``works-v2``, and only past ``INDEX_MAX_ATTEMPTS`` is it dead-lettered for
   ``scholarindex replay`` -- delayed, never silently lost.
6. **Switch** the alias in one ``update_aliases`` call (``swap_alias``);
   ``works-v1`` stays write-blocked, kept for a rollback. Just before, ``works-v2``
   records each shard's highest ``_seq_no`` (``scholarindex.ops.versions.mark_live``), so a
   rollback can carry back the writes it takes after the switch.
7. **Keep** the newest ``keep`` older versions; delete the rest.

Why freeze rather than merge late writes in after the switch: a merge can only
add, while the crawl also removes (a profile that stops listing a work unlists
it, and a work with no listing left is deleted). Copying a frozen index is exact.

Any failure before the switch unblocks ``works-v1``, deletes ``works-v2`` (or
names it, if even that fails) and leaves the alias as it was.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.documents import timestamp
from scholarindex.indexing.errors import IndexingError, IndexUnavailable, InvalidItem
from scholarindex.indexing.indices import (
    alias_name,
    alias_target,
    body_version,
    create_index,
    delete_index,
    read_mapping,
    set_write_block,
    swap_alias,
    with_layout,
)
from scholarindex.ops.changefeed import ChangeFeed
from scholarindex.ops.index_copy import copy_ids, copy_rebuilt, copy_server_side
from scholarindex.ops.verify import Snapshot, compare, sample_queries, snapshot
from scholarindex.ops.versions import (
    BUILD_COMPLETE,
    BUILD_INCOMPLETE,
    mark_live,
    next_index_name,
    prune,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

MAX_PASSES = 10  # catch-up passes before verifying anyway
QUIET_PASS = 50  # a pass copying at most this many documents ends the catch-up
VERIFY_ROUNDS = 3  # tries at a comparison no write slipped into, before the freeze
MAX_EXCLUDED = 5000  # changed documents left out of a check before catching up again
FROZEN_SCANS = 2  # id scans after the write block, the last finding nothing


class Reporter(Protocol):
    """Where progress goes (the CLI: stderr and click progress bars)."""

    def step(self, message: str) -> None:
        """One line about what happens now."""

    def progress(self, label: str, total: int) -> AbstractContextManager[Callable[[int], None]]:
        """A progress bar; the context yields ``advance(n)``."""


class QuietReporter:
    """Reports to the log only (library use, the benchmark)."""

    def step(self, message: str) -> None:
        logger.info(message)

    @contextmanager
    def progress(self, label: str, total: int) -> Iterator[Callable[[int], None]]:
        yield lambda n: None


@dataclass(frozen=True)
class ReindexOptions:
    """How to reindex (the CLI's options)."""

    mappings_dir: Path
    keep: int = 1
    rebuild: bool = False
    accept_differences: bool = False
    batch_size: int = 2000
    layout: IndexLayout = DEFAULT_LAYOUT  # the new index's shards and replicas


@dataclass
class ReindexResult:
    """What one alias's reindex did (``--json`` prints it)."""

    name: str
    alias: str
    old_index: str | None = None
    new_index: str | None = None
    ok: bool = False
    switched: bool = False
    error: str | None = None
    rebuild: bool = False
    docs: int = 0  # in the new index at the switch
    copied: int = 0
    caught_up: int = 0  # documents copied again because they changed during the copy
    passes: int = 0
    excluded_from_check: int = 0
    differences: list[str] = field(default_factory=list)
    frozen_ms: int = 0  # how long the old index refused writes before the switch
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    half_built_removed: bool | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return asdict(self)


class ReindexFailed(IndexingError):
    """A reindex stopped; ``result`` says how far it got, ``cause`` what stopped it."""

    def __init__(self, reason: str, result: ReindexResult, cause: BaseException | None = None):
        super().__init__(reason)
        self.result = result
        self.cause = cause


class VerificationFailed(IndexingError):
    """The new index does not match the live one."""


class SwitchUnknown(IndexingError):
    """The alias switch got no answer and the alias cannot be read: touch nothing."""


class _Timer:
    def __init__(self, result: ReindexResult):
        self.result = result
        self.began = time.monotonic()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            spent = time.monotonic() - start
            self.result.seconds[name] = round(self.result.seconds.get(name, 0.0) + spent, 3)
            self.result.seconds["total"] = round(time.monotonic() - self.began, 3)


def plan(client: OpenSearch, prefix: str, name: str, mappings_dir: Path) -> tuple[str, str, int]:
    """(live index, next index name, mapping version) -- what a reindex would do.

    Raises ``ValueError`` when there is no alias or no usable mapping file.
    """
    body = read_mapping(name, mappings_dir)
    live = alias_target(client, prefix, name)
    if live is None:
        raise ValueError(f"alias {alias_name(prefix, name)} does not exist: nothing to reindex "
                         "(the first crawl creates it)")
    version = body_version(body)
    return live, next_index_name(client, prefix, name, version), version


def reindex(client: OpenSearch, prefix: str, name: str, options: ReindexOptions,
            reporter: Reporter | None = None, new_index: str | None = None,
            before_switch: Callable[[], None] | None = None) -> ReindexResult:
    """Reindex ``{prefix}{name}``; ``ReindexFailed`` if it stops (alias kept unless switched).

    ``new_index``: the name ``plan`` gave (and the operator confirmed); default: plan now.
    ``before_switch``: called last before the switch; an exception from it undoes the
    reindex like any failure (the CLI checks it still holds the alias's lock).
    """
    out = reporter or QuietReporter()
    result = ReindexResult(name=name, alias=alias_name(prefix, name), rebuild=options.rebuild)
    timer = _Timer(result)
    try:
        old, planned, _ = plan(client, prefix, name, options.mappings_dir)
        new = new_index or planned
        body = read_mapping(name, options.mappings_dir)
    except (ValueError, IndexUnavailable) as exc:
        raise _failed(result, str(exc), exc) from exc
    result.old_index = old
    try:
        out.step(f"{result.alias}: creating {new} from {options.mappings_dir / (name + '.json')}")
        _create_once(client, new, _building(with_layout(name, body, options.layout), old,
                                            options.rebuild))
    except IndexUnavailable as exc:
        if exc.retryable:
            # No answer (the cluster manager died mid-call) is no proof it was not created:
            # the name is this run's own, so remove whatever is there.
            result.new_index = new
            _undo(client, old, new, False, out, result)
        raise _failed(result, str(exc), exc) from exc
    result.new_index = new

    feed = ChangeFeed(client, old)
    frozen = False
    try:
        with timer.phase("copy"):
            _copy(client, name, old, new, feed, options, out, result)
        with translate_errors(f"settings of {new}"):
            client.indices.put_settings(index=new,
                                        body={"index.refresh_interval": _refresh_interval(body)})
        with timer.phase("catch_up"):
            _catch_up(client, name, old, new, feed, options, out, result)
        with timer.phase("verify"):
            late, verified = _verify(client, name, old, new, feed, options, out, result)
        with timer.phase("catch_up"):
            result.caught_up += copy_ids(client, name, old, new, feed, late, options.rebuild)
        with timer.phase("freeze_and_switch"):
            began = time.monotonic()
            # Before the call: a block whose answer was lost (a node died) is still undone.
            frozen = True
            set_write_block(client, old, True)
            _finish_frozen(client, name, old, new, feed, options, out, result)
            if not verified:  # writes never paused long enough: compare the frozen index
                out.step(f"{result.alias}: {old} kept changing; comparing with writes paused")
                queries = sample_queries(client, old, name)
                _judge(snapshot(client, old, name, queries), snapshot(client, new, name, queries),
                       len(queries), options, out, result)
            _mark_build(client, new, BUILD_COMPLETE)
            mark_live(client, new, came_from=old)
            if before_switch is not None:
                before_switch()
            _switch(client, prefix, name, old, new, out, result)
            result.frozen_ms = int((time.monotonic() - began) * 1000)
    except BaseException as exc:  # whatever stopped it (a bug, Ctrl+C too): put things back
        if not result.switched and not isinstance(exc, SwitchUnknown):
            _undo(client, old, new, frozen, out, result)
        if not isinstance(exc, Exception):
            raise
        raise _failed(result, _reason(exc), exc) from exc

    try:
        with timer.phase("prune"):  # the switch is done: ride out an election here too
            result.kept, result.deleted = _patiently(
                lambda: prune(client, prefix, name, options.keep))
    except IndexUnavailable as exc:
        raise _failed(result, f"switched to {new}, but deleting older versions failed: {exc}",
                      exc) from exc
    if result.deleted:
        out.step(f"{result.alias}: deleted older {', '.join(result.deleted)}")
    result.ok = True
    return result


# --- the steps ---------------------------------------------------------------------------

def _copy(client: OpenSearch, name: str, old: str, new: str, feed: ChangeFeed,
          options: ReindexOptions, out: Reporter, result: ReindexResult) -> None:
    if options.rebuild:
        with translate_errors(f"count {old}"):
            total = int(client.count(index=old)["count"])
        with out.progress(f"rebuilding {old} -> {new}", total) as advance:
            result.copied = copy_rebuilt(client, name, old, new, feed, options.batch_size,
                                         advance)
    else:
        total = feed.start()
        with out.progress(f"copying {old} -> {new}", total) as advance:
            result.copied = copy_server_side(client, old, new, total, options.batch_size,
                                             advance)


def _catch_up(client: OpenSearch, name: str, old: str, new: str, feed: ChangeFeed,
              options: ReindexOptions, out: Reporter, result: ReindexResult) -> None:
    """Copy what changed during the copy, pass after pass, until the passes get small."""
    for _ in range(MAX_PASSES):
        changed = feed.changed()
        if not changed:
            return
        result.passes += 1
        out.step(f"{result.alias}: catching up {len(changed)} document(s) written during the copy")
        result.caught_up += copy_ids(client, name, old, new, feed, changed, options.rebuild)
        if len(changed) <= QUIET_PASS:
            return


def _verify(client: OpenSearch, name: str, old: str, new: str, feed: ChangeFeed,
            options: ReindexOptions, out: Reporter, result: ReindexResult
            ) -> tuple[list[str], bool]:
    """Compare the indices over the documents settled in both, while writes go on.

    A document is left out when it changed on ``old`` after its copy. The comparison
    holds when no further document changed while both snapshots were taken: then
    every document counted is the same in both (or its rebuilt self). Returns the
    ids left out (to copy again) and whether it could compare at all: under a
    steady stream of writes it may not, and the comparison waits for the freeze.
    """
    out.step(f"{result.alias}: verifying {new} against {old}")
    with translate_errors(f"refresh {new}"):
        client.indices.refresh(index=new)
    exclude = set(feed.changed())
    queries = sample_queries(client, old, name, exclude)
    for _ in range(VERIFY_ROUNDS):
        before = snapshot(client, old, name, queries, exclude)
        after = snapshot(client, new, name, queries, exclude)
        changed = set(feed.changed())
        if changed <= exclude:
            result.excluded_from_check = len(exclude)
            _judge(before, after, len(queries), options, out, result)
            return sorted(exclude), True
        exclude |= changed
        if len(exclude) > MAX_EXCLUDED:
            result.caught_up += copy_ids(client, name, old, new, feed, sorted(exclude),
                                         options.rebuild)
            with translate_errors(f"refresh {new}"):
                client.indices.refresh(index=new)
            exclude = set(feed.changed())
    return sorted(exclude), False


def _judge(before: Snapshot, after: Snapshot, queries: int, options: ReindexOptions,
           out: Reporter, result: ReindexResult) -> None:
    """Raise ``VerificationFailed`` on a difference that blocks the switch."""
    found = compare(before, after)
    result.differences = found.all()
    blocking = found.blocking(options.accept_differences)
    if blocking:
        more = f" (+{len(blocking) - 2} more)" if len(blocking) > 2 else ""
        raise VerificationFailed(f"{after.index} differs from {before.index}: "
                                 f"{'; '.join(blocking[:2])}{more}")
    if result.differences:
        out.step(f"{result.alias}: accepted {len(result.differences)} difference(s): "
                 + "; ".join(result.differences[:3]))
    out.step(f"{result.alias}: {before.count} documents, {len(before.facets)} facets and "
             f"{queries} sample queries agree")


def _finish_frozen(client: OpenSearch, name: str, old: str, new: str, feed: ChangeFeed,
                   options: ReindexOptions, out: Reporter, result: ReindexResult) -> None:
    """With ``old`` write-blocked: copy what is left until a scan finds nothing; counts equal.

    At least ``FROZEN_SCANS`` scans, so a write that passed the block check just
    before it took effect is seen by the second one.
    """
    scans = 0
    while True:
        changed = feed.changed()
        scans += 1
        if changed:
            result.caught_up += copy_ids(client, name, old, new, feed, changed, options.rebuild)
        elif scans >= FROZEN_SCANS:
            break
    with translate_errors(f"refresh {new}"):
        client.indices.refresh(index=new)
    with translate_errors(f"count {old} and {new}"):
        live = int(client.count(index=old)["count"])
        built = int(client.count(index=new)["count"])
    if live != built:
        raise VerificationFailed(f"document count after the last catch-up: {old} has {live}, "
                                 f"{new} has {built}")
    result.docs = built


def _switch(client: OpenSearch, prefix: str, name: str, old: str, new: str, out: Reporter,
            result: ReindexResult) -> None:
    """One update_aliases call. If its answer is lost, look where the alias points."""
    try:
        swap_alias(client, prefix, name, new)
    except IndexUnavailable as exc:
        try:
            switched = alias_target(client, prefix, name) == new
        except IndexUnavailable as unknown:
            raise SwitchUnknown(f"switching {result.alias} failed ({exc}) and where it points "
                                f"now is unknown ({unknown}): check with `scholarindex status`; "
                                f"{old} is write-blocked, {new} kept") from exc
        if not switched:
            raise
    result.switched = True
    out.step(f"{result.alias}: now points at {new} (was {old}, kept write-blocked)")


def _undo(client: OpenSearch, old: str, new: str, frozen: bool, out: Reporter,
          result: ReindexResult) -> None:
    """Before the switch: writes allowed again on ``old``, the half-built ``new`` removed."""
    if frozen:
        try:
            _patiently(lambda: set_write_block(client, old, False))
        except IndexUnavailable as exc:
            logger.error("could not unblock writes on %s: %s", old, exc)
            result.error = f"{old} is still write-blocked: unblock it ({exc})"
    try:
        _patiently(lambda: delete_index(client, new))
        result.half_built_removed = True
        out.step(f"{result.alias}: removed the half-built {new}")
    except IndexUnavailable as exc:
        result.half_built_removed = False
        logger.error("could not remove the half-built index %s: %s", new, exc)


# --- helpers -----------------------------------------------------------------------------

def _create_once(client: OpenSearch, index: str, body: dict[str, Any]) -> None:
    """``create_index``, where "already exists" means this run created it: the client
    sends a request again on the next node when its node's connection broke (that node
    died), and the first may have been applied. The name was free when planned, has this
    second in it, and the alias's lock is held: no one else made it."""
    try:
        create_index(client, index, body)
    except IndexUnavailable as exc:
        if "resource_already_exists_exception" not in str(exc):
            raise
        logger.warning("%s: created by a request sent again after a node's connection broke",
                       index)


UNDO_PATIENCE = 90.0  # seconds the undo and the prune keep trying through an election


def _patiently(call: Callable[[], T], patience: float = UNDO_PATIENCE) -> T:
    """``call`` again while it fails in a way that passes (a node died and the cluster
    elects a new manager: seconds), for up to ``patience`` seconds. A reindex stopped by
    such a failure must still leave the old index writable and no half-built index for
    the next reindex to meet; one that switched must not report a failure for want of
    deleting an older version a few seconds later."""
    deadline = time.monotonic() + patience
    wait = 0.5
    while True:
        try:
            return call()
        except IndexUnavailable as exc:
            if not exc.retryable or time.monotonic() + wait > deadline:
                raise
            logger.warning("%s; trying again in %.1fs", exc, wait)
            time.sleep(wait)
            wait = min(wait * 2, 8.0)


def _building(body: dict[str, Any], old: str, rebuild: bool) -> dict[str, Any]:
    """The mapping body, marked as being built and with refreshes off while it fills."""
    built = copy.deepcopy(body)
    settings = built.setdefault("settings", {})
    settings.pop("index.refresh_interval", None)
    if isinstance(settings.get("index"), dict):
        settings["index"].pop("refresh_interval", None)
    settings["refresh_interval"] = "-1"
    meta = built["mappings"].setdefault("_meta", {})
    meta["build"] = {"state": BUILD_INCOMPLETE, "from": old, "rebuild": rebuild,
                     "started_at": timestamp()}
    return built


def _refresh_interval(body: dict[str, Any]) -> str | None:
    """The file's refresh interval, to restore after the copy (None: the server default)."""
    settings = body.get("settings") or {}
    value = (settings.get("refresh_interval") or settings.get("index.refresh_interval")
             or (settings.get("index") or {}).get("refresh_interval"))
    return str(value) if value is not None else None


def _mark_build(client: OpenSearch, index: str, state: str) -> None:
    with translate_errors(f"get mapping {index}"):
        meta = client.indices.get_mapping(index=index)[index]["mappings"].get("_meta", {})
    meta = dict(meta)
    meta["build"] = dict(meta.get("build") or {}, state=state, finished_at=timestamp())
    with translate_errors(f"mark {index} {state}"):
        client.indices.put_mapping(index=index, body={"_meta": meta})


def _reason(exc: BaseException) -> str:
    if isinstance(exc, InvalidItem):
        return f"a document cannot be rebuilt: {exc}"
    if isinstance(exc, IndexingError | ValueError):
        return str(exc)
    return f"internal error {type(exc).__name__}: {exc}"


def _failed(result: ReindexResult, reason: str, cause: BaseException | None) -> ReindexFailed:
    notes = []
    if result.old_index and not result.switched:
        notes.append(f"alias {result.alias} still points at {result.old_index}")
    if result.new_index and result.half_built_removed is True:
        notes.append(f"removed the half-built {result.new_index}")
    elif result.new_index and result.half_built_removed is False:
        notes.append(f"could not remove the half-built {result.new_index}: delete it by hand")
    if result.error:  # set by _undo when even unblocking failed
        notes.append(result.error)
    result.error = reason + (f" ({'; '.join(notes)})" if notes else "")
    return ReindexFailed(result.error, result, cause)
