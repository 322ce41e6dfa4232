"""The cluster a benchmark measures: a real local OpenSearch node, or the one configured.

Shared by every benchmark that indexes, so their ``--use-env`` flag means the same thing
everywhere. The local node is ``engine.cluster.LocalCluster`` (OpenSearch from Maven
Central in its own JVM, a temporary data folder, stopped afterwards); its heap is
``OPENSEARCH_HEAP`` (the engine's default, 1g, without).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from crawler.environment import project_settings
from engine.cluster import DEFAULT_HEAP, LocalCluster
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig


def _log(message: str) -> None:
    print(f"[opensearch] {message}", file=sys.stderr, flush=True)


@contextmanager
def opensearch(use_env: bool) -> Iterator[OpenSearchConfig]:
    """``OPENSEARCH_URL``, ``OPENSEARCH_USER``, ... and ``INDEX_PREFIX`` with ``use_env``;
    else a fresh local OpenSearch node, stopped afterwards."""
    with opensearch_process(use_env) as (config, _):
        yield config


@contextmanager
def opensearch_process(use_env: bool) -> Iterator[tuple[OpenSearchConfig, int | None]]:
    """``opensearch`` and the local node's process id (its JVM), for a benchmark that
    reads its memory and CPU (None for a configured cluster: it runs elsewhere)."""
    if use_env:
        yield OpenSearchConfig.from_settings(project_settings()), None
        return
    with local_node() as node:
        yield node_config(node), node_pid(node)


def local_node() -> LocalCluster:
    """One local node, not started yet: ``with local_node() as node`` starts it and waits
    until it is green; it stops by itself if this process dies first."""
    return LocalCluster(heap=os.environ.get("OPENSEARCH_HEAP") or DEFAULT_HEAP,
                        exit_with_parent=True, log=_log)


def node_config(node: LocalCluster) -> OpenSearchConfig:
    """The project's connection settings for ``node``, nothing from the environment."""
    return OpenSearchConfig.from_settings(
        project_settings(environ={}, overrides={"OPENSEARCH_URL": node.url}))


def node_pid(node: LocalCluster) -> int:
    """The process id of the node's JVM (the first node's)."""
    process = node.members[0].process
    assert process is not None, "the node was not launched"
    return process.pid


def describe(config: OpenSearchConfig) -> str:
    """What answers at ``config``: ``OpenSearch 2.19.6, JVM 17.0.15`` (the first node's)."""
    client = build_client(config)
    version = client.info().get("version", {})
    jvms = [node.get("jvm", {}).get("version", "?")
            for node in client.nodes.info(metric="jvm").get("nodes", {}).values()]
    name = "OpenSearch" if version.get("distribution") == "opensearch" else "Elasticsearch"
    return f"{name} {version.get('number', '?')}, JVM {jvms[0] if jvms else '?'}"


def delete_indices(config: OpenSearchConfig) -> None:
    """Every index under ``config.prefix``, by name (clusters may forbid wildcard deletes)."""
    client = build_client(config)
    for name in client.indices.get(index=f"{config.prefix}*", allow_no_indices=True,
                                   expand_wildcards="all"):
        client.indices.delete(index=name, ignore=404)


def writer_retry() -> RetryPolicy:
    """The index writer's retry policy as the crawl reads it (``INDEX_*`` settings)."""
    return RetryPolicy.from_settings(project_settings(), "INDEX")


def add_cluster_option(parser: argparse.ArgumentParser) -> None:
    """The ``--use-env`` flag of every benchmark's command line."""
    parser.add_argument(
        "--use-env", action="store_true",
        help="use OPENSEARCH_URL, OPENSEARCH_USER, ... and INDEX_PREFIX from the environment "
             "instead of starting a local OpenSearch node")
