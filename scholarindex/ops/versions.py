"""The concrete indices behind an alias: naming the next one, keeping N, rolling back.

Order is by creation time (``index.creation_date``), not by the version in the
name: a mapping file can go back to an older version number, and "the previous
version" means the index the alias pointed at before, i.e. the one created before.

Rolling back keeps the writes the live index took since it went live. When an
index goes live (a reindex's switch, a rollback), ``mark_live`` records in its
``_meta.live_since`` the index it replaces, which then holds the same documents
(write-blocked), and, per shard, the highest ``_seq_no`` that shard has assigned
(``max_seq_no`` of its primary). ``_seq_no`` orders the writes of one shard only, and
a document lives in one shard for good (routed by its ``_id``), so each document is
compared with its own shard's mark: a rollback to that index reads every shard alone
(``preference=_shards:N``), copies back the documents above their shard's mark and
deletes those gone since (``newer_writes``), with the live index write-blocked
meanwhile. Where that cannot be told (an index made live by an older version, or
``--to`` another index), the rollback refuses unless told to discard them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.documents import timestamp
from scholarindex.indexing.errors import IndexingError, IndexUnavailable
from scholarindex.indexing.indices import (
    alias_name,
    alias_target,
    concrete_name,
    delete_index,
    index_settings,
    list_versions,
    set_write_block,
    swap_alias,
)
from scholarindex.ops.changefeed import ChangeFeed
from scholarindex.ops.index_copy import copy_ids

logger = logging.getLogger(__name__)

LIVE_SINCE = "live_since"  # mappings._meta key: {shards, from, at} of the last time it went live
BUILD_INCOMPLETE = "incomplete"  # mappings._meta.build.state while a reindex fills it
BUILD_COMPLETE = "complete"


@dataclass(frozen=True)
class IndexInfo:
    """One concrete index of an alias family, with what ops need to know about it."""

    index: str
    version: int
    live: bool  # the alias points at it
    docs: int | None
    created: int  # epoch milliseconds
    write_blocked: bool
    build: str | None  # "incomplete" for a reindex that did not finish; None: not a reindex

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return {"index": self.index, "version": self.version, "live": self.live,
                "docs": self.docs, "created": _iso(self.created),
                "write_blocked": self.write_blocked, "build": self.build}


def family(client: OpenSearch, prefix: str, name: str) -> list[IndexInfo]:
    """Every concrete index of ``name`` under ``prefix``, oldest first."""
    found = list_versions(client, prefix, name)
    details = index_settings(client, [v.index for v in found])
    infos = []
    for v in found:
        info = details.get(v.index, {})
        build = (info.get("meta") or {}).get("build")
        infos.append(IndexInfo(v.index, v.version, v.aliased, v.docs, info.get("created", 0),
                               info.get("write_blocked", False),
                               build.get("state") if isinstance(build, dict) else None))
    return sorted(infos, key=lambda i: (i.created, i.version, i.index))


def next_index_name(client: OpenSearch, prefix: str, name: str, version: int) -> str:
    """``{prefix}{name}-v{version}``, or with a time suffix when that version has an index.

    The suffix also when the plain name is free again (its index deleted): a reused
    name would pass a new index off as the old one in logs and reports.
    """
    infos = family(client, prefix, name)
    taken = {i.index for i in infos}
    plain = concrete_name(prefix, name, version)
    if not any(i.version == version for i in infos):
        return plain
    stamp = datetime.now(UTC).strftime("%Y%m%dt%H%M%S")  # index names are lower case
    candidate, n = concrete_name(prefix, name, version, stamp), 1
    while candidate in taken:
        n += 1
        candidate = concrete_name(prefix, name, version, f"{stamp}-{n}")
    return candidate


def prune(client: OpenSearch, prefix: str, name: str, keep: int) -> tuple[list[str], list[str]]:
    """Delete indices older than the live one beyond the newest ``keep``; (kept, deleted).

    Indices created after the live one are left alone: one another reindex is
    filling, or one a rollback left (``rollback --to`` can return to it).
    """
    infos = family(client, prefix, name)
    live = next((i for i in infos if i.live), None)
    if live is None:
        return [], []
    older = [i for i in infos if not i.live and i.created <= live.created]
    doomed = older[:-keep] if keep > 0 else older
    for info in doomed:
        delete_index(client, info.index)
    return [i.index for i in older if i not in doomed], [i.index for i in doomed]


def rollback_target(client: OpenSearch, prefix: str, name: str,
                    to: str | None = None) -> tuple[str, str]:
    """(current, target) for a rollback: the newest complete index created before the current.

    Raises ``ValueError`` with a reason when there is nothing to go back to.
    """
    alias = alias_name(prefix, name)
    current = alias_target(client, prefix, name)
    if current is None:
        raise ValueError(f"alias {alias} does not exist")
    infos = {i.index: i for i in family(client, prefix, name)}
    if to is not None:
        if to not in infos:
            raise ValueError(f"{to} is not an index of {alias} (have: {', '.join(infos)})")
        if to == current and not infos[to].write_blocked:
            raise ValueError(f"{alias} already points at {to}")
        if infos[to].build == BUILD_INCOMPLETE:
            raise ValueError(f"{to} is an unfinished reindex, not a version to serve")
        return current, to
    created = infos[current].created if current in infos else 0
    earlier = [i for i in infos.values()
               if i.index != current and i.created <= created and i.build != BUILD_INCOMPLETE]
    if not earlier:
        raise ValueError(f"no earlier version of {alias} is kept (only {current})")
    return current, max(earlier, key=lambda i: (i.created, i.version, i.index)).index


@dataclass(frozen=True)
class NewerWrites:
    """What ``current`` took since it went live, as a rollback to ``target`` sees it."""

    current: str
    target: str
    changed: list[str] = field(default_factory=list)  # written (created or updated) since
    deleted: list[str] = field(default_factory=list)  # deleted since
    why_unknown: str | None = None  # set when the writes cannot be told: nothing to carry

    @property
    def ids(self) -> list[str]:
        """Every document id to carry back (copy, or delete)."""
        return sorted({*self.changed, *self.deleted})

    def describe(self, limit: int = 10) -> str:
        """``3 document(s) written to works-v2 since it went live: w1, w2, w3``."""
        ids = self.ids
        more = f" (+{len(ids) - limit} more)" if len(ids) > limit else ""
        return (f"{len(ids)} document(s) written to {self.current} since it went live: "
                f"{', '.join(ids[:limit])}{more}")


class NewerWritesUnknown(IndexingError):
    """A rollback cannot tell which writes the live index took since it went live."""


def mark_live(client: OpenSearch, index: str, came_from: str) -> None:
    """Record in ``index``'s ``_meta`` that it goes live now, replacing ``came_from``.

    Call while both hold the same documents and ``index`` takes no writes (before
    the alias moves to it).
    """
    marks = shard_marks(client, index)
    mark: dict[str, Any] = {"from": came_from, "at": timestamp(),
                            "shards": {str(shard): seq for shard, seq in marks.items()}}
    if len(marks) == 1:  # also as older versions read it
        mark["seq_no"] = marks[0]
    _put_meta(client, index, LIVE_SINCE, mark)


def shard_marks(client: OpenSearch, index: str) -> dict[int, int]:
    """Shard number -> the highest ``_seq_no`` its primary has assigned (-1: none yet).

    Deletes count too, so a later write of any kind is above it.
    """
    with translate_errors(f"stats {index}"):
        stats = client.indices.stats(index=index, metric="docs", level="shards")
    shards = ((stats.get("indices") or {}).get(index) or {}).get("shards") or {}
    marks = {}
    for number, copies in shards.items():
        primary = [c for c in copies if (c.get("routing") or {}).get("primary")]
        if not primary or "seq_no" not in primary[0]:
            raise IndexUnavailable(f"stats {index}: shard {number} has no started primary",
                                   retryable=True, status=503)
        marks[int(number)] = int(primary[0]["seq_no"]["max_seq_no"])
    expected = _shards(client, index)
    if sorted(marks) != list(range(expected)):
        raise IndexUnavailable(f"stats {index}: {len(marks)} of {expected} shard(s) answered",
                               retryable=True, status=503)
    return marks


def _recorded_marks(since: dict[str, Any]) -> dict[int, int] | None:
    """The per-shard marks of a ``live_since`` record; a one-shard record of an older
    version (``seq_no`` alone) is shard 0's. None when it has neither."""
    shards = since.get("shards")
    if isinstance(shards, dict) and all(isinstance(v, int) for v in shards.values()):
        return {int(k): v for k, v in shards.items()}
    if isinstance(since.get("seq_no"), int):
        return {0: int(since["seq_no"])}
    return None


def newer_writes(client: OpenSearch, current: str, target: str) -> NewerWrites:
    """The documents ``current`` took since it went live, when that can be told.

    Exact when ``target`` is the index ``current`` replaced: both held the same
    documents then, so a document of ``target`` missing from ``current`` was deleted
    since. Reads every id and ``_seq_no`` of both, ``current`` a shard at a time.
    """
    since = _meta(client, current).get(LIVE_SINCE)
    marks = _recorded_marks(since) if isinstance(since, dict) else None
    if not isinstance(since, dict) or marks is None:
        return NewerWrites(current, target, why_unknown=(
            f"{current} does not record when it went live (made live before this version of "
            "scholarindex)"))
    if since.get("from") != target:
        return NewerWrites(current, target, why_unknown=(
            f"{current} replaced {since.get('from')}, not {target}: the documents deleted "
            "from it since cannot be told"))
    if sorted(marks) != list(range(_shards(client, current))):
        return NewerWrites(current, target, why_unknown=(
            f"{current} records marks for shards {sorted(marks)}, not its own"))
    feed = ChangeFeed(client, current)
    now: set[str] = set()
    changed = []
    for shard, mark in sorted(marks.items()):
        for doc_id, (seq, _) in feed.scan(shard=shard):
            now.add(doc_id)
            if seq > mark:
                changed.append(doc_id)
    deleted = sorted(doc_id for doc_id, _ in ChangeFeed(client, target).scan()
                     if doc_id not in now)
    return NewerWrites(current, target, sorted(changed), deleted)


def rollback(client: OpenSearch, prefix: str, name: str, current: str, target: str,
             discard_newer: bool = False) -> NewerWrites | None:
    """Point the alias at ``target`` in one call; writes then go there, not to ``current``.

    ``current`` is write-blocked first, so a late write to it is refused (and
    dead-lettered by the writer) rather than lost; the documents it took since it
    went live are copied into ``target`` as they are (deleted ones deleted), unless
    ``discard_newer``. ``NewerWritesUnknown`` (nothing changed) when they cannot be
    told and ``discard_newer`` is not given. Returns what was carried (or discarded);
    None for ``--to`` the live index, which only lifts a block an interrupted run left.
    On a failure before the switch, ``current`` takes writes again.
    """
    if target == current:
        set_write_block(client, target, False)
        return None
    set_write_block(client, current, True)
    try:
        newer = newer_writes(client, current, target)
        if newer.why_unknown and not discard_newer:
            raise NewerWritesUnknown(f"{newer.why_unknown}; pass --discard-newer to roll back "
                                     f"without the writes it took")
        set_write_block(client, target, False)
        if newer.ids and not discard_newer:
            copy_ids(client, name, current, target, ChangeFeed(client, current), newer.ids,
                     rebuilt=False)
        mark_live(client, target, came_from=current)
        swap_alias(client, prefix, name, target)
    except BaseException:
        _unfreeze(client, current, target)
        raise
    return newer


def _unfreeze(client: OpenSearch, current: str, target: str) -> None:
    """After a failed rollback: ``current`` live and writable, ``target`` blocked, as before."""
    for index, blocked in ((current, False), (target, True)):
        try:
            set_write_block(client, index, blocked)
        except IndexUnavailable as exc:
            logger.error("could not %s writes on %s: %s", "block" if blocked else "unblock",
                         index, exc)


def _shards(client: OpenSearch, index: str) -> int:
    with translate_errors(f"get settings {index}"):
        settings = client.indices.get_settings(index=index)
    value = (settings.get(index) or {}).get("settings", {}).get("index", {}).get(
        "number_of_shards", 1)
    return int(value)


def _meta(client: OpenSearch, index: str) -> dict[str, Any]:
    with translate_errors(f"get mapping {index}"):
        mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    return dict(mapping.get("_meta") or {})


def _put_meta(client: OpenSearch, index: str, key: str, value: Any) -> None:
    meta = _meta(client, index)
    meta[key] = value
    with translate_errors(f"put _meta.{key} on {index}"):
        client.indices.put_mapping(index=index, body={"_meta": meta})


def _iso(epoch_ms: int) -> str | None:
    if not epoch_ms:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
