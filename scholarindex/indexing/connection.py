"""Connection settings for OpenSearch, read from the project's settings.

The names (``OPENSEARCH_*``, ``INDEX_PREFIX``) and their defaults are declared
once in ``scholarindex/settings.py``; the crawl, ``scholarindex`` and the search UI are
all given a config built from them (docs/interfaces.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scholarindex.core.settings import read_setting
from scholarindex.core.urls import redact_url


@dataclass(frozen=True)
class IndexLayout:
    """Primary shards and replicas of the indices a deployment creates.

    ``shards`` applies to the searched indices (works, researchers), which grow with
    the crawl; the bookkeeping ones (runs, locks, tombstones, identities, decisions)
    stay at one shard: they are small, and one shard answers their reads fastest.
    ``replicas`` applies to every index, so a node's loss loses nothing.
    """

    shards: int = 1
    replicas: int = 0


DEFAULT_LAYOUT = IndexLayout()  # one node: one shard, no replica (the settings' defaults)


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
    layout: IndexLayout = DEFAULT_LAYOUT

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
            layout=IndexLayout(shards=read_setting(settings, "INDEX_SHARDS", int),
                               replicas=read_setting(settings, "INDEX_REPLICAS", int)),
        )

    @property
    def urls(self) -> list[str]:
        """Every node ``url`` names (comma-separated), for a client that uses them all."""
        return split_urls(self.url)

    @property
    def safe_url(self) -> str:
        """The URL(s) with any embedded ``user:password@`` removed, fit for logs."""
        return ",".join(redact_url(url) for url in self.urls)


def split_urls(url: str) -> list[str]:
    """``"http://a:9200, http://b:9200"`` -> both URLs; a single URL -> itself."""
    return [part.strip() for part in url.split(",") if part.strip()]
