"""Enrichment settings: every value read from the project's settings, none defaulted here."""

from __future__ import annotations

import os

import pytest
from scrapy.settings import Settings

from crawler import settings as declared
from scholarindex.enrichment.config import EnrichmentConfig
from tests.support.settings import enrichment_config_with, settings_with


def test_reads_arxiv_settings_and_the_declared_defaults() -> None:
    config = enrichment_config_with(ARXIV_API_URL="http://127.0.0.1:9/api/query?{}",
                                    ARXIV_DELAY_SECONDS="0.2", ARXIV_BATCH_SIZE="15",
                                    ARXIV_CACHE_DIR="/tmp/x",
                                    USER_AGENT="ScholarIndexBot/0.1 (+c)")
    assert config.api_url == "http://127.0.0.1:9/api/query?{}"
    assert config.delay_seconds == 0.2 and config.batch_size == 15
    assert config.cache_dir == "/tmp/x"
    assert config.user_agent == "ScholarIndexBot/0.1 (+c)"
    assert config.title_threshold == declared.ARXIV_TITLE_THRESHOLD
    assert config.miss_ttl_seconds == declared.ARXIV_MISS_TTL_SECONDS
    defaults = enrichment_config_with()
    assert defaults.api_url == declared.ARXIV_API_URL
    assert defaults.cache_dir == os.path.expanduser(declared.ARXIV_CACHE_DIR)
    assert not defaults.cache_dir.startswith("~")


def test_a_missing_setting_is_named() -> None:
    settings = settings_with()
    without = Settings({name: value for name, value in settings.items()
                        if name != "ARXIV_MAX_PAGES"})
    with pytest.raises(KeyError, match="ARXIV_MAX_PAGES"):
        EnrichmentConfig.from_settings(without)


@pytest.mark.parametrize(("name", "value"), [("ARXIV_BATCH_SIZE", "many"),
                                              ("ARXIV_DELAY_SECONDS", "soon"),
                                              ("ARXIV_BATCH_SIZE", "0")])
def test_bad_values_fail_loudly_with_the_setting_name(name: str, value: str) -> None:
    with pytest.raises(ValueError, match="ARXIV_"):
        enrichment_config_with(**{name: value})
