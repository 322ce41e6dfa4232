"""Enrichment settings, read once from Scrapy settings and passed in.

The four contract settings (contracts.md) are declared in crawler/settings.py;
the tuning knobs below fall back to the defaults here until they are declared
there too. Names map one to one: ``batch_size`` <- ``ARXIV_BATCH_SIZE``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

DEFAULT_API_URL = "https://export.arxiv.org/api/query?{}&sortBy=relevance&sortOrder=descending"
DEFAULT_OAI_URL = "https://oaipmh.arxiv.org/oai"


@dataclass(frozen=True)
class EnrichmentConfig:
    """Every knob of the enrichment stage, with its default."""

    api_url: str = DEFAULT_API_URL
    delay_seconds: float = 3.0  # raised to 3 against arXiv's own hosts
    cache_dir: str = os.path.expanduser("~/.cache/scholarindex/arxiv")
    user_agent: str = "ScholarIndexBot/0.1"
    batch_size: int = 20  # titles per query
    max_query_chars: int = 3000  # URL-encoded search_query length per request
    page_size: int = 200  # entries per page
    max_pages: int = 3  # pages per query; a batch matching more is split in halves
    timeout_seconds: float = 30.0  # read timeout of one request
    max_attempts: int = 4  # tries per page before arXiv counts as unavailable
    backoff_seconds: float = 2.0  # first retry pause; doubles, plus up to this much jitter
    backoff_max_seconds: float = 60.0
    empty_page_confirmations: int = 2  # re-asks before an empty first page means "no match"
    outage_cooldown_seconds: float = 300.0  # after an outage, later batches go pending at once
    hit_ttl_seconds: float = 7 * 86400.0
    miss_ttl_seconds: float = 86400.0
    title_threshold: float = 0.90
    year_tolerance: int = 1
    batch_linger_seconds: float = 30.0  # send a partial batch once its oldest title waited this
    idle_wait_seconds: float = 600.0  # keep the spider open this long for outstanding lookups
    oai_url: str = DEFAULT_OAI_URL  # the OAI-PMH endpoint `scholarindex arxiv harvest` reads
    # A mirror of all of arXiv harvested within this long answers "not on arXiv" itself.
    mirror_max_age_seconds: float = 2 * 86400.0

    @classmethod
    def from_settings(cls, settings: Any) -> EnrichmentConfig:
        """Read ``ARXIV_*`` settings (a Scrapy ``Settings`` or any mapping)."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            name = f"ARXIV_{field.name.upper()}"
            raw = settings.get(name)
            if raw is None or raw == "":
                continue
            kind = type(getattr(cls, field.name))
            try:
                values[field.name] = kind(float(raw)) if kind is int else kind(raw)
            except (TypeError, ValueError):
                raise ValueError(f"{name}={raw!r}: expected a{'n' if kind is int else ''} "
                                 f"{kind.__name__}") from None
        if "user_agent" not in values and settings.get("USER_AGENT"):
            values["user_agent"] = settings.get("USER_AGENT")
        config = cls(**values)
        if config.batch_size < 1 or config.page_size < 1 or config.max_attempts < 1:
            raise ValueError("ARXIV_BATCH_SIZE, ARXIV_PAGE_SIZE and ARXIV_MAX_ATTEMPTS "
                             "must be at least 1")
        return config
