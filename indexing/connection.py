"""Connection settings for OpenSearch, read from Scrapy settings or the environment.

The names and defaults follow contracts.md; ``crawler/settings.py`` declares them for
the crawl, and the ops CLI reads the same names from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.flags import as_bool
from core.urls import redact_url

DEFAULT_URL = "http://localhost:9200"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class OpenSearchConfig:
    """Where and how to reach the cluster. ``repr`` never shows the password."""

    url: str = DEFAULT_URL
    user: str = ""
    password: str = field(default="", repr=False)
    verify_certs: bool = True
    ca_certs: str = ""
    prefix: str = ""
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> OpenSearchConfig:
        """Build from Scrapy settings (or any mapping with the contract's names)."""
        return cls(
            url=str(settings.get("OPENSEARCH_URL") or DEFAULT_URL),
            user=str(settings.get("OPENSEARCH_USER") or ""),
            password=str(settings.get("OPENSEARCH_PASSWORD") or ""),
            verify_certs=as_bool(settings.get("OPENSEARCH_VERIFY_CERTS"), True),
            ca_certs=str(settings.get("OPENSEARCH_CA_CERTS") or ""),
            prefix=str(settings.get("INDEX_PREFIX") or ""),
            timeout=float(settings.get("OPENSEARCH_TIMEOUT") or DEFAULT_TIMEOUT),
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OpenSearchConfig:
        """Build from environment variables of the same names (the ops CLI's way)."""
        return cls.from_settings(os.environ if environ is None else environ)

    @property
    def safe_url(self) -> str:
        """The URL with any embedded ``user:password@`` removed, fit for logs."""
        return redact_url(self.url)

