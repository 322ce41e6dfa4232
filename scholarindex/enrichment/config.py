"""Enrichment settings, read once from the project's settings and passed in.

Every knob is declared with its default in ``scholarindex/settings.py`` (docs/interfaces.md);
names map one to one: ``batch_size`` <- ``ARXIV_BATCH_SIZE``, except ``user_agent``,
which is the crawler's ``USER_AGENT``, and ``redis_*`` <- ``REDIS_*`` (shared with the
distributed crawl).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, get_type_hints

from scholarindex.core.retry import RetryPolicy
from scholarindex.core.settings import read_setting


@dataclass(frozen=True, kw_only=True)
class EnrichmentConfig:
    """Every knob of the enrichment stage."""

    api_url: str
    delay_seconds: float  # raised to 3 against arXiv's own hosts
    cache_dir: str
    user_agent: str
    batch_size: int  # titles per query
    max_query_chars: int  # URL-encoded search_query length per request
    page_size: int  # entries per page
    max_pages: int  # pages per query; a batch matching more is split in halves
    timeout_seconds: float  # read timeout of one request
    max_attempts: int  # tries per page before arXiv counts as unavailable
    backoff_seconds: float  # first retry pause; doubles, plus up to this much jitter
    backoff_max_seconds: float
    retry_after_max: float  # longest Retry-After obeyed on a 429/503; 0: ignore it
    empty_page_confirmations: int  # re-asks before an empty first page means "no match"
    outage_cooldown_seconds: float  # after an outage, later batches go pending at once
    hit_ttl_seconds: float
    miss_ttl_seconds: float
    title_threshold: float
    year_tolerance: int
    fallback_queries: bool  # one more request per batch for renamed papers (resolver)
    batch_linger_seconds: float  # send a partial batch once its oldest title waited this
    idle_wait_seconds: float  # keep the spider open this long for outstanding lookups
    oai_url: str  # the OAI-PMH endpoint `scholarindex arxiv harvest` reads
    # A mirror of all of arXiv harvested within this long answers "not on arXiv" itself.
    mirror_max_age_seconds: float
    # The distributed mode (REDIS_URL): the request slot and the answers are shared
    # through Redis by every worker of every machine; "" keeps them on this machine.
    redis_url: str
    redis_key_prefix: str
    redis_retry_seconds: float  # how long a call waits for Redis to come back

    def retry_policy(self) -> RetryPolicy:
        """How hard a request to arXiv (query API or OAI-PMH) is tried."""
        return RetryPolicy(attempts=self.max_attempts, initial_wait=self.backoff_seconds,
                           max_wait=self.backoff_max_seconds, jitter=self.backoff_seconds,
                           retry_after_max=self.retry_after_max)

    @classmethod
    def from_settings(cls, settings: Any) -> EnrichmentConfig:
        """Read ``ARXIV_*`` and ``USER_AGENT`` (a Scrapy ``Settings`` or any mapping).

        A missing setting is a ``KeyError``, a bad value a ``ValueError``, each naming it.
        """
        kinds = get_type_hints(cls)
        values: dict[str, Any] = {
            field.name: read_setting(settings, _setting_name(field.name), kinds[field.name])
            for field in fields(cls)}
        values["cache_dir"] = os.path.expanduser(values["cache_dir"])
        config = cls(**values)
        if config.batch_size < 1 or config.page_size < 1 or config.max_attempts < 1:
            raise ValueError("ARXIV_BATCH_SIZE, ARXIV_PAGE_SIZE and ARXIV_MAX_ATTEMPTS "
                             "must be at least 1")
        return config


def _setting_name(field_name: str) -> str:
    """The setting an ``EnrichmentConfig`` field is read from."""
    if field_name == "user_agent":
        return "USER_AGENT"
    if field_name.startswith("redis_"):
        return field_name.upper()
    return f"ARXIV_{field_name.upper()}"
