"""GC_THRESHOLDS: set for the crawl, restored when the engine stops, bad values refused."""

from __future__ import annotations

import gc
import logging

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.extensions.gctuning import GcTuning


@pytest.fixture(autouse=True)
def keep_thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_thresholds_set_for_the_crawl_and_restored_after():
    before = gc.get_threshold()
    crawler = get_crawler(settings_dict={"GC_THRESHOLDS": [12_345, 7, 3]})
    tuning = GcTuning.from_crawler(crawler)
    assert gc.get_threshold() == (12_345, 7, 3)
    tuning.engine_stopped()
    assert gc.get_threshold() == before


def test_the_project_settings_raise_the_first_generation_threshold():
    from crawler import settings

    assert settings.GC_THRESHOLDS[0] > gc.get_threshold()[0]
    assert "crawler.extensions.gctuning.GcTuning" in settings.EXTENSIONS


@pytest.mark.parametrize("value", [[], ["lots"], [1, 2, 3, 4]])
def test_empty_or_bad_thresholds_leave_the_defaults(value, caplog):
    before = gc.get_threshold()
    with caplog.at_level(logging.WARNING), pytest.raises(NotConfigured):
        GcTuning.from_crawler(get_crawler(settings_dict={"GC_THRESHOLDS": value}))
    assert gc.get_threshold() == before
    assert bool(caplog.records) == bool(value)
