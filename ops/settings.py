"""What the ops commands read from the environment, in one place.

The same names as the crawler (contracts.md): ``OPENSEARCH_*`` and ``INDEX_PREFIX``
for the cluster, ``INDEX_DEADLETTER_PATH`` for the dead-letter file, ``ARXIV_*`` for
enrichment. One more for the CLI only: ``INDEX_MAPPINGS_DIR``, a folder of mapping
files to reindex from instead of the package's ``index_mappings/``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from opensearchpy import OpenSearch

from indexing.client import build_client
from indexing.connection import OpenSearchConfig
from indexing.indices import MAPPINGS_DIR

DEFAULT_DEADLETTER_PATH = "deadletter/index.jsonl"  # crawler/settings.py's default
# Long requests (a server-side copy, aggregations over every document) get this timeout.
LONG_REQUEST_TIMEOUT = 3600.0


@dataclass(frozen=True)
class OpsSettings:
    """Cluster, dead-letter file and mapping folder for one command."""

    opensearch: OpenSearchConfig
    deadletter_path: Path
    mappings_dir: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OpsSettings:
        """Read the environment (``os.environ`` by default)."""
        env = os.environ if environ is None else environ
        return cls(
            opensearch=OpenSearchConfig.from_env(env),
            deadletter_path=Path(env.get("INDEX_DEADLETTER_PATH") or DEFAULT_DEADLETTER_PATH),
            mappings_dir=Path(env.get("INDEX_MAPPINGS_DIR") or MAPPINGS_DIR),
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
