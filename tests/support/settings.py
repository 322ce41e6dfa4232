"""The project's settings for tests: ``crawler/settings.py``'s defaults, never this
process's environment, with the overrides a test names (``OPENSEARCH_URL=...``).

One exception: ``INDEX_SHARDS`` and ``INDEX_REPLICAS`` in the environment give the
layout of every index the tests create (``LAYOUT``), so the whole suite can run on
several shards and nodes; unset, the declared defaults (one shard, no replica).
"""

from __future__ import annotations

import os
from typing import Any

from scrapy.settings import Settings

from crawler import settings as declared
from crawler.environment import project_settings
from scholarindex.core.retry import RetryPolicy
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.indexing.connection import IndexLayout, OpenSearchConfig

LAYOUT = IndexLayout(
    shards=int(os.environ.get("INDEX_SHARDS") or declared.INDEX_SHARDS),
    replicas=int(os.environ.get("INDEX_REPLICAS") or declared.INDEX_REPLICAS))
# The same, as settings: the tests' crawls and commands create indices with it too.
LAYOUT_SETTINGS = {"INDEX_SHARDS": str(LAYOUT.shards), "INDEX_REPLICAS": str(LAYOUT.replicas)}

# The declared tombstone retention, for the tests that call ``scholarindex.indexing.replay.replay``.
RETENTION_DAYS = float(declared.TOMBSTONE_RETENTION_DAYS)


def settings_with(**overrides: Any) -> Settings:
    """The project's settings with ``overrides``, as ``-s NAME=value`` would give them
    (and the suite's ``LAYOUT`` unless they name shards or replicas)."""
    return project_settings(environ={}, overrides={**LAYOUT_SETTINGS, **overrides})


def opensearch_config_with(**overrides: Any) -> OpenSearchConfig:
    """``OpenSearchConfig`` from the project's defaults and ``overrides``."""
    return OpenSearchConfig.from_settings(settings_with(**overrides))


def enrichment_config_with(**overrides: Any) -> EnrichmentConfig:
    """``EnrichmentConfig`` from the project's defaults and ``overrides``."""
    return EnrichmentConfig.from_settings(settings_with(**overrides))


def writer_retry_with(**overrides: Any) -> RetryPolicy:
    """The index writer's retry policy (``INDEX_MAX_ATTEMPTS``, ``INDEX_RETRY_*``)."""
    return RetryPolicy.from_settings(settings_with(**overrides), "INDEX")


def use_cluster_environment(monkeypatch: Any, config: OpenSearchConfig) -> None:
    """Set the environment a benchmark's ``--use-env`` reads to reach ``config``'s cluster
    (``monkeypatch``: pytest's, so the test leaves it as it was)."""
    for name, value in {"OPENSEARCH_URL": config.url, "OPENSEARCH_USER": config.user,
                        "OPENSEARCH_PASSWORD": config.password,
                        "OPENSEARCH_VERIFY_CERTS": str(config.verify_certs),
                        "OPENSEARCH_CA_CERTS": config.ca_certs,
                        "INDEX_PREFIX": config.prefix}.items():
        monkeypatch.setenv(name, value)


def printed_figures(out: str) -> dict[str, str]:
    """A benchmark's ``name value`` lines (the engine's line left out)."""
    return dict(line.split(maxsplit=1) for line in out.splitlines()
                if not line.startswith("OpenSearch "))
