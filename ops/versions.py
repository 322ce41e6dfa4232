"""The concrete indices behind an alias: naming the next one, keeping N, rolling back.

Order is by creation time (``index.creation_date``), not by the version in the
name: a mapping file can go back to an older version number, and "the previous
version" means the index the alias pointed at before, i.e. the one created before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from opensearchpy import OpenSearch

from indexing.indices import (
    alias_name,
    alias_target,
    concrete_name,
    delete_index,
    index_settings,
    list_versions,
    set_write_block,
    swap_alias,
)

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


def rollback(client: OpenSearch, prefix: str, name: str, current: str, target: str) -> None:
    """Point the alias at ``target`` in one call; writes then go there, not to ``current``.

    ``target`` is writable again first; ``current`` is write-blocked after, so a
    late write to it is refused (and dead-lettered by the writer) rather than lost.
    """
    set_write_block(client, target, False)
    if target == current:  # `--to` the live index: only repair a block an interrupted run left
        return
    swap_alias(client, prefix, name, target)
    set_write_block(client, current, True)


def _iso(epoch_ms: int) -> str | None:
    if not epoch_ms:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
