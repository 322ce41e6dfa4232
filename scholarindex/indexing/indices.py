"""Versioned indices behind aliases, and the mapping files they are built from.

The one place that names, creates and aliases indices. A concrete index is
``{prefix}{name}-v{version}`` (``-{suffix}`` added when a version is rebuilt),
built from ``index_mappings/{name}.json``; the alias ``{prefix}{name}``
(``alias_name``) points at exactly one of them. The crawler calls
``ensure_aliases`` at start and ``ensure_alias`` for ``crawl-runs`` when it
stores its run report; the ops CLI builds reindex and rollback on
``create_index``, ``list_versions`` and ``swap_alias``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

import index_mappings
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.errors import IndexUnavailable

logger = logging.getLogger(__name__)

INDEX_NAMES = ("works", "researchers")  # the documents the crawl writes and ops reindex
RUNS_INDEX = "crawl-runs"  # one document per crawl run part (the run report)
# One document per alias a reindex or rollback holds (ops.lock): a plain index, no alias.
LOCK_INDEX = "reindex-lock"
# One document per work a profile unlisted (indexing.tombstones): a plain index, no alias;
# work ids are the same in every version of works, so a reindex leaves it as it is.
TOMBSTONES_INDEX = "tombstones"
IDENTITIES_INDEX = "work-identities"  # works merged under several work_ids (indexing.identity)
DECISIONS_INDEX = "work-decisions"  # ops' decisions on which ids are one work (indexing.decisions)
MAPPED_INDICES = (*INDEX_NAMES, RUNS_INDEX, LOCK_INDEX, TOMBSTONES_INDEX,
                  IDENTITIES_INDEX, DECISIONS_INDEX)  # index_mappings/*
MAPPINGS_DIR = Path(index_mappings.__file__).resolve().parent  # installed beside us


Timeout = Callable[[], float]  # seconds the next request may take
# How long a new index's primary shards may take to start before its creator gives up.
PRIMARIES_WAIT = 30.0


def _timeout(timeout: Timeout | None) -> dict[str, float]:
    return {"request_timeout": timeout()} if timeout is not None else {}


@cache
def _load(name: str) -> str:
    path = MAPPINGS_DIR / f"{name}.json"
    if name not in MAPPED_INDICES or not path.is_file():
        raise ValueError(f"no mapping file for index {name!r} in {MAPPINGS_DIR}")
    return path.read_text(encoding="utf-8")


def load_mapping(name: str) -> dict[str, Any]:
    """Settings and mappings for one of ``MAPPED_INDICES`` (a fresh copy each call)."""
    return json.loads(_load(name))


def with_layout(name: str, body: Mapping[str, Any], layout: IndexLayout) -> dict[str, Any]:
    """A copy of mapping ``body`` for index ``name`` with the deployment's shards and
    replicas (``IndexLayout`` says which indices take which)."""
    settings = dict(body.get("settings") or {})
    settings["number_of_replicas"] = layout.replicas
    if name in INDEX_NAMES:
        settings["number_of_shards"] = layout.shards
    return {**body, "settings": settings}


def layout_body(name: str, layout: IndexLayout) -> dict[str, Any]:
    """The mapping file of ``name`` with the deployment's shards and replicas."""
    return with_layout(name, load_mapping(name), layout)


def mapping_version(name: str) -> int:
    """The ``_meta.version`` of the mapping file: bump it to ask for a reindex."""
    return int(load_mapping(name)["mappings"]["_meta"]["version"])


def alias_name(prefix: str, name: str) -> str:
    """The alias every reader and writer uses: ``{prefix}works``, ``{prefix}crawl-runs``, ..."""
    return f"{prefix}{name}"


def concrete_name(prefix: str, name: str, version: int, suffix: str = "") -> str:
    """``{prefix}{name}-v{version}`` plus ``-{suffix}`` when given."""
    return f"{prefix}{name}-v{version}" + (f"-{suffix}" if suffix else "")


@dataclass(frozen=True)
class IndexVersion:
    """One concrete index of an alias family."""

    index: str
    version: int
    aliased: bool
    docs: int | None = None


def alias_target(client: OpenSearch, prefix: str, name: str,
                 timeout: Timeout | None = None) -> str | None:
    """The concrete index the alias points at, or None when there is no alias yet."""
    alias = alias_name(prefix, name)
    indices = _alias_indices(client, alias, timeout)
    if len(indices) > 1:
        raise IndexUnavailable(f"alias {alias} points at {len(indices)} indices {indices}; "
                               "the indexer needs exactly one", retryable=False)
    return indices[0] if indices else None


def _alias_indices(client: OpenSearch, alias: str, timeout: Timeout | None = None) -> list[str]:
    with translate_errors(f"get alias {alias}"):
        found = client.indices.get_alias(name=alias, ignore=404, **_timeout(timeout))
    if found.get("status") == 404:  # no such alias: a normal answer here
        return []
    return sorted(found)


def list_versions(client: OpenSearch, prefix: str, name: str) -> list[IndexVersion]:
    """Every concrete index of ``name`` under ``prefix``, oldest version first."""
    pattern = re.compile(re.escape(f"{prefix}{name}-v") + r"(\d+)(?:-.+)?$")
    with translate_errors(f"list {prefix}{name} indices"):
        found = client.indices.get(index=f"{prefix}{name}-v*", allow_no_indices=True)
        counts: dict[str, int] = {}
        if found:
            rows = client.cat.indices(index=",".join(found), format="json", h="index,docs.count")
            counts = {r["index"]: int(r["docs.count"]) for r in rows if r.get("docs.count")}
    alias = alias_name(prefix, name)
    versions = []
    for index, body in found.items():
        match = pattern.match(index)
        if match:
            aliased = alias in body.get("aliases", {})
            versions.append(IndexVersion(index, int(match.group(1)), aliased, counts.get(index)))
    return sorted(versions, key=lambda v: (v.version, v.index))


def create_version(client: OpenSearch, prefix: str, name: str, suffix: str = "",
                   *, exist_ok: bool = False, timeout: Timeout | None = None,
                   layout: IndexLayout = DEFAULT_LAYOUT) -> str:
    """Create the concrete index for the mapping file's version; return its name.

    ``exist_ok`` makes a concurrent creation by another crawl harmless.
    """
    index = concrete_name(prefix, name, mapping_version(name), suffix)
    with translate_errors(f"create index {index}"):
        answer = client.indices.create(index=index, body=layout_body(name, layout), ignore=400,
                                       **_timeout(timeout))
    if answer.get("status") == 400:
        error = answer.get("error")
        if not (exist_ok and "resource_already_exists_exception" in json.dumps(error)):
            raise IndexUnavailable(f"create index {index}: {error}", retryable=False,
                                   status=400)
    else:
        logger.info("created index %s", index)
    wait_for_primaries(client, index, timeout)
    return index


def wait_for_primaries(client: OpenSearch, index: str, timeout: Timeout | None = None) -> None:
    """Return once every primary shard of ``index`` has started.

    An index another process created a moment ago exists before its shards can take
    a read or a write (they answer "no shard available" while they recover). Cluster
    health cannot wait for that: it calls a new index yellow while its primaries are
    still initializing. So this polls the index's own count of active primaries; one
    request once they have started.
    """
    budget = min(PRIMARIES_WAIT, timeout()) if timeout is not None else PRIMARIES_WAIT
    deadline = time.monotonic() + budget
    while True:
        with translate_errors(f"health of {index}"):
            health = client.cluster.health(index=index, level="indices",
                                           request_timeout=max(1.0, budget))
        state = (health.get("indices") or {}).get(index) or {}
        if state and state.get("active_primary_shards") == state.get("number_of_shards"):
            return
        if time.monotonic() > deadline:
            raise IndexUnavailable(f"{index}: its primary shards did not start within "
                                   f"{budget:.0f} s (health {state or health})",
                                   retryable=True, status=503)
        time.sleep(0.05)


def swap_alias(client: OpenSearch, prefix: str, name: str, new_index: str) -> list[str]:
    """Point the alias at ``new_index`` in one atomic ``update_aliases`` call.

    Returns the indices it pointed at before (kept, for a rollback).
    """
    alias = alias_name(prefix, name)
    old = _alias_indices(client, alias)
    actions: list[dict[str, Any]] = [{"remove": {"index": i, "alias": alias}}
                                     for i in old if i != new_index]
    actions.append({"add": {"index": new_index, "alias": alias}})
    with translate_errors(f"swap alias {alias}"):
        client.indices.update_aliases(body={"actions": actions})
    logger.info("alias %s now points at %s (was %s)", alias, new_index, old or "nothing")
    return old


def ensure_alias(client: OpenSearch, prefix: str, name: str,
                 timeout: Timeout | None = None, layout: IndexLayout = DEFAULT_LAYOUT
                 ) -> tuple[str, bool]:
    """(the index ``{prefix}{name}`` points at, whether it was created now).

    On first use, creates the index for the mapping file's version and points the
    alias at it. Safe when two crawls start at once: both create the same
    deterministic index name (one gets "already exists") and adding an alias twice
    is a no-op. ``timeout()``, when given, bounds each request (what is left of a
    caller's budget).
    """
    alias = alias_name(prefix, name)
    target = alias_target(client, prefix, name, timeout)
    if target is not None:
        wait_for_primaries(client, target, timeout)
        return target, False
    index = create_version(client, prefix, name, exist_ok=True, timeout=timeout, layout=layout)
    with translate_errors(f"add alias {alias}"):
        client.indices.update_aliases(
            body={"actions": [{"add": {"index": index, "alias": alias}}]}, **_timeout(timeout))
    return alias_target(client, prefix, name, timeout) or index, True


def ensure_plain_index(client: OpenSearch, prefix: str, name: str,
                       layout: IndexLayout = DEFAULT_LAYOUT) -> str:
    """``{prefix}{name}`` as a plain index (no alias, no versions); created on first use.

    For small bookkeeping indices that are never reindexed (``LOCK_INDEX``,
    ``TOMBSTONES_INDEX``, ``IDENTITIES_INDEX``); safe
    when two processes create it at once.
    """
    index = alias_name(prefix, name)
    with translate_errors(f"exists {index}"):
        exists = client.indices.exists(index=index)
    if not exists:
        with translate_errors(f"create index {index}"):
            answer = client.indices.create(index=index, body=layout_body(name, layout),
                                           ignore=400)
        error = answer.get("error") if answer.get("status") == 400 else None
        if error is not None and "resource_already_exists_exception" not in json.dumps(error):
            raise IndexUnavailable(f"create index {index}: {error}", retryable=False,
                                   status=400)
    else:  # made by an older version: its strict mapping must take today's fields
        add_new_fields(client, index, name)
    wait_for_primaries(client, index)
    return index


def ensure_aliases(client: OpenSearch, prefix: str,
                   layout: IndexLayout = DEFAULT_LAYOUT) -> dict[str, str]:
    """Make sure the works and researchers aliases exist (``ensure_alias``).

    Returns alias name -> concrete index. An existing index of the same mapping
    version gets the fields its file added since it was created (``add_new_fields``);
    one of another version only a warning (ops should reindex).
    """
    targets = {}
    for name in INDEX_NAMES:
        target, created = ensure_alias(client, prefix, name, layout=layout)
        if not created:
            _upgrade_in_place(client, alias_name(prefix, name), target, name)
        targets[alias_name(prefix, name)] = target
    return targets


def missing_fields(live: Mapping[str, Any], wanted: Mapping[str, Any], path: str = "") -> list[str]:
    """Field paths ``wanted`` (a mapping's ``properties``) declares and ``live`` lacks."""
    missing = []
    for name, spec in wanted.items():
        if name not in live:
            missing.append(path + name)
        elif "properties" in spec:
            missing += missing_fields(live[name].get("properties", {}), spec["properties"],
                                      f"{path}{name}.")
    return missing


def _upgrade_in_place(client: OpenSearch, alias: str, index: str, name: str) -> None:
    with translate_errors(f"get mapping {index}"):
        mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    live, wanted = int(mapping.get("_meta", {}).get("version", 0)), mapping_version(name)
    if live != wanted:
        logger.warning("alias %s points at %s (mapping v%s) but index_mappings/%s.json is v%s: "
                       "run `scholarindex reindex`", alias, index, live, name, wanted)
        return
    add_new_fields(client, index, name, mapping)


def add_new_fields(client: OpenSearch, index: str, name: str,
                   live: Mapping[str, Any] | None = None) -> list[str]:
    """Add the fields ``index_mappings/{name}.json`` declares and ``index`` lacks.

    New fields are the one mapping change an index takes in place (a strict
    mapping would refuse documents carrying them); changed fields still need a
    reindex, and OpenSearch refuses them here. Returns the fields added.
    """
    if live is None:
        with translate_errors(f"get mapping {index}"):
            live = client.indices.get_mapping(index=index)[index]["mappings"]
    wanted = load_mapping(name)["mappings"]["properties"]
    added = missing_fields(live.get("properties", {}), wanted)
    if added:
        with translate_errors(f"put mapping {index}"):
            client.indices.put_mapping(index=index, body={"properties": wanted})
        logger.info("added the fields %s to %s", ", ".join(added), index)
    return added


# --- for the ops CLI (reindex, rollback, status) -------------------------------------------

def read_mapping(name: str, directory: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Settings and mappings for ``name`` from ``directory`` (default: ``index_mappings/``).

    Read afresh on every call (no cache), so ops can point a reindex at a folder of
    edited mappings; ``load_mapping`` stays the crawler's cached view of the package's.
    """
    folder = Path(directory) if directory is not None else MAPPINGS_DIR
    path = folder / f"{name}.json"
    if name not in MAPPED_INDICES or not path.is_file():
        raise ValueError(f"no mapping file for index {name!r} in {folder}")
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(body, dict) or not isinstance(body.get("mappings"), dict):
        raise ValueError(f"{path} has no \"mappings\" object")
    return body


def body_version(body: Mapping[str, Any]) -> int:
    """The ``mappings._meta.version`` of a mapping body (0 when it has none)."""
    meta = (body.get("mappings") or {}).get("_meta") or {}
    try:
        return int(meta.get("version", 0))
    except (TypeError, ValueError):
        return 0


def create_index(client: OpenSearch, index: str, body: Mapping[str, Any]) -> None:
    """Create ``index`` from a mapping body; ``IndexUnavailable`` with the server's reason."""
    with translate_errors(f"create index {index}"):
        client.indices.create(index=index, body=dict(body))
    logger.info("created index %s", index)


def delete_index(client: OpenSearch, index: str) -> bool:
    """Delete one index by name (never a pattern); False if it did not exist."""
    with translate_errors(f"delete index {index}"):
        answer = client.indices.delete(index=index, ignore=404)
    deleted = answer.get("status") != 404
    if deleted:
        logger.info("deleted index %s", index)
    return deleted


def set_write_block(client: OpenSearch, index: str, blocked: bool) -> None:
    """Refuse (or allow again) writes to ``index``; reads and searches are unaffected.

    A reindex blocks the index it switched away from, so a late write cannot land
    there unseen: it is refused, and the writer dead-letters it for a replay.
    """
    with translate_errors(f"{'block' if blocked else 'unblock'} writes on {index}"):
        client.indices.put_settings(index=index,
                                    body={"index.blocks.write": True if blocked else None})


def index_settings(client: OpenSearch, indices: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per index: ``created`` (epoch ms), ``write_blocked`` and ``meta`` (the mapping's _meta)."""
    names = list(indices)
    if not names:
        return {}
    joined = ",".join(names)
    with translate_errors(f"get settings {joined}"):
        settings = client.indices.get_settings(index=joined)
        mappings = client.indices.get_mapping(index=joined)
    info: dict[str, dict[str, Any]] = {}
    for name in names:
        index = (settings.get(name) or {}).get("settings", {}).get("index", {})
        blocks = index.get("blocks") or {}
        info[name] = {
            "created": int(index.get("creation_date") or 0),
            "write_blocked": str(blocks.get("write", "false")).lower() == "true",
            "meta": ((mappings.get(name) or {}).get("mappings") or {}).get("_meta") or {},
        }
    return info


def read_only_indices(client: OpenSearch, prefix: str) -> list[str]:
    """The indices under ``prefix`` that carry ``index.blocks.read_only_allow_delete``
    (what a disk past its flood-stage watermark gets), sorted."""
    key = "index.blocks.read_only_allow_delete"
    with translate_errors(f"get {key}"):
        answer = client.indices.get_settings(index=f"{prefix}*", name=key,
                                             params={"flat_settings": "true"})
    return sorted(name for name, entry in answer.items()
                  if str((entry.get("settings") or {}).get(key)).lower() == "true")
