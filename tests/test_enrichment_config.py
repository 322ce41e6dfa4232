"""Enrichment settings: read from Scrapy settings, defaults where unset, clear errors."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from enrichment.config import DEFAULT_API_URL, EnrichmentConfig


def test_reads_arxiv_settings_and_keeps_defaults() -> None:
    settings = Settings({"ARXIV_API_URL": "http://127.0.0.1:9/api/query?{}",
                         "ARXIV_DELAY_SECONDS": "0.2", "ARXIV_BATCH_SIZE": "15",
                         "ARXIV_CACHE_DIR": "/tmp/x", "USER_AGENT": "ScholarIndexBot/0.1 (+c)"})
    config = EnrichmentConfig.from_settings(settings)
    assert config.api_url == "http://127.0.0.1:9/api/query?{}"
    assert config.delay_seconds == 0.2 and config.batch_size == 15
    assert config.cache_dir == "/tmp/x"
    assert config.user_agent == "ScholarIndexBot/0.1 (+c)"
    assert config.title_threshold == 0.90 and config.miss_ttl_seconds == 86400
    assert EnrichmentConfig.from_settings(Settings()).api_url == DEFAULT_API_URL


@pytest.mark.parametrize(("name", "value"), [("ARXIV_BATCH_SIZE", "many"),
                                              ("ARXIV_DELAY_SECONDS", "soon"),
                                              ("ARXIV_BATCH_SIZE", "0")])
def test_bad_values_fail_loudly_with_the_setting_name(name: str, value: str) -> None:
    with pytest.raises(ValueError, match="ARXIV_"):
        EnrichmentConfig.from_settings(Settings({name: value}))
