"""Connection settings for OpenSearch, read from the project's settings.

The names (``OPENSEARCH_*``, ``INDEX_PREFIX``) and their defaults are declared
once in ``crawler/settings.py``; the crawl, ``scholarindex`` and the search UI are
all given a config built from them (docs/interfaces.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scholarindex.core.settings import read_setting
from scholarindex.core.urls import redact_url


@dataclass(frozen=True, kw_only=True)
class OpenSearchConfig:
    """Where and how to reach the cluster. ``repr`` never shows the password.

    Only what may be absent has a default: no credentials, no CA bundle, no prefix.
    """

    url: str
    verify_certs: bool
    timeout: float
    user: str = ""
    password: str = field(default="", repr=False)
    ca_certs: str = ""
    prefix: str = ""

    @classmethod
    def from_settings(cls, settings: Any) -> OpenSearchConfig:
        """Build from Scrapy settings (or any mapping of the same names); every name
        must be there (KeyError naming it otherwise)."""
        return cls(
            url=read_setting(settings, "OPENSEARCH_URL", str),
            user=read_setting(settings, "OPENSEARCH_USER", str),
            password=read_setting(settings, "OPENSEARCH_PASSWORD", str),
            verify_certs=read_setting(settings, "OPENSEARCH_VERIFY_CERTS", bool),
            ca_certs=read_setting(settings, "OPENSEARCH_CA_CERTS", str),
            prefix=read_setting(settings, "INDEX_PREFIX", str),
            timeout=read_setting(settings, "OPENSEARCH_TIMEOUT", float),
        )

    @property
    def safe_url(self) -> str:
        """The URL with any embedded ``user:password@`` removed, fit for logs."""
        return redact_url(self.url)
