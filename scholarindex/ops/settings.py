"""What the ops commands read from the project's settings, in one place.

``scholarindex`` sees the settings it shares with the crawl (``scholarindex/settings.py``)
with the same environment applied (``scholarindex.environment``): ``OPENSEARCH_*`` and
``INDEX_PREFIX`` for the cluster, ``INDEX_DEADLETTER_PATH`` for the dead-letter file,
``INDEX_MAPPINGS_DIR`` for the mapping files, ``RUN_REPORT`` for the crawl reports
and ``ARXIV_*`` for enrichment (docs/interfaces.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from opensearchpy import OpenSearch

from scholarindex.core.retry import RetryPolicy
from scholarindex.core.settings import read_setting
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import MAPPINGS_DIR

if TYPE_CHECKING:
    from scrapy.settings import Settings

    from scholarindex.distributed.connection import RedisConfig

# Long requests (a server-side copy, aggregations over every document) get this timeout.
LONG_REQUEST_TIMEOUT = 3600.0


@dataclass(frozen=True)
class OpsSettings:
    """Cluster, dead-letter file, mapping folder and crawl reports for one command."""

    opensearch: OpenSearchConfig
    deadletter_path: Path
    mappings_dir: Path
    run_report: str  # RUN_REPORT; empty: the crawls write no report file
    writer_retry: RetryPolicy  # INDEX_MAX_ATTEMPTS, INDEX_RETRY_*: as the crawl writes
    lock_stale_seconds: float  # REINDEX_LOCK_STALE_SECONDS: a silent lock holder is dead
    tombstone_retention_days: float  # TOMBSTONE_RETENTION_DAYS: prune and replay's cutoff

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OpsSettings:
        """The project's settings with ``environ`` (``os.environ`` by default) applied."""
        settings = _project_settings(environ)
        return cls(
            opensearch=OpenSearchConfig.from_settings(settings),
            deadletter_path=Path(settings["INDEX_DEADLETTER_PATH"]),
            # Empty means the package's own mapping files.
            mappings_dir=Path(settings["INDEX_MAPPINGS_DIR"] or MAPPINGS_DIR),
            run_report=settings["RUN_REPORT"],
            writer_retry=RetryPolicy.from_settings(settings, "INDEX"),
            lock_stale_seconds=read_setting(settings, "REINDEX_LOCK_STALE_SECONDS", float),
            tombstone_retention_days=read_setting(settings, "TOMBSTONE_RETENTION_DAYS", float),
        )

    @property
    def prefix(self) -> str:
        """``INDEX_PREFIX``."""
        return self.opensearch.prefix

    def client(self) -> OpenSearch:
        """A client configured like the indexer's (timeouts, TLS, no transport retries)."""
        return build_client(self.opensearch)

    def with_overrides(self, *, deadletter_path: Path | None = None,
                       mappings_dir: Path | None = None) -> OpsSettings:
        """These settings with command-line options applied."""
        return replace(self, deadletter_path=deadletter_path or self.deadletter_path,
                       mappings_dir=mappings_dir or self.mappings_dir)


def enrichment_config(environ: Mapping[str, str] | None = None) -> EnrichmentConfig:
    """``ARXIV_*`` as the crawler reads them, with ``environ`` (``os.environ``) applied;
    ``ValueError`` naming a bad value."""
    return EnrichmentConfig.from_settings(_project_settings(environ))


def _project_settings(environ: Mapping[str, str] | None) -> Settings:
    # Imported here: Scrapy takes a while to import, and `scholarindex --help` need not.
    from scholarindex.environment import product_settings

    return product_settings(environ)


def redis_config(environ: Mapping[str, str] | None = None) -> RedisConfig | None:
    """``REDIS_URL`` and friends, as the crawl reads them; None when REDIS_URL is empty."""
    from scholarindex.distributed.connection import (  # Redis only when configured
        RedisConfig,
        enabled,
    )

    settings = _project_settings(environ)
    return RedisConfig.from_settings(settings) if enabled(settings) else None
