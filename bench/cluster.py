"""The cluster a benchmark measures: a fresh local osmem-server, or the one configured.

Shared by ``bench.indexing``, ``bench.search`` and ``bench.reindex`` so their
``--use-env`` flag means the same thing everywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from crawler.environment import project_settings
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.connection import OpenSearchConfig


@contextmanager
def opensearch(use_env: bool) -> Iterator[OpenSearchConfig]:
    """``OPENSEARCH_URL``, ``OPENSEARCH_USER``, ... and ``INDEX_PREFIX`` with ``use_env``;
    else an empty clone of a local osmem-server (as the tests get), closed afterwards."""
    with opensearch_process(use_env) as (config, _):
        yield config


@contextmanager
def opensearch_process(use_env: bool) -> Iterator[tuple[OpenSearchConfig, int | None]]:
    """``opensearch`` and the local server's process id, for a benchmark that reads its
    memory and CPU (None for a configured cluster: it runs elsewhere)."""
    if use_env:
        yield OpenSearchConfig.from_settings(project_settings()), None
        return
    from osmem_server import OsmemServer  # only the local run needs it

    with OsmemServer.start() as server, server.clone() as clone:
        yield OpenSearchConfig.from_settings(
            project_settings(environ={}, overrides={"OPENSEARCH_URL": clone.url})), server.pid


def writer_retry() -> RetryPolicy:
    """The index writer's retry policy as the crawl reads it (``INDEX_*`` settings)."""
    return RetryPolicy.from_settings(project_settings(), "INDEX")


def add_cluster_option(parser: argparse.ArgumentParser) -> None:
    """The ``--use-env`` flag of every benchmark's command line."""
    parser.add_argument(
        "--use-env", action="store_true",
        help="use OPENSEARCH_URL, OPENSEARCH_USER, ... and INDEX_PREFIX from the environment "
             "instead of starting a local osmem-server")
