"""The environment applied to the crawl's settings (``scholarindex.environment``).

The ``Environment`` add-on (registered in ``ADDONS``) applies ``ENVIRONMENT_SETTINGS``
to the crawl; ``project_settings`` gives tests and benchmarks the crawl's whole settings
outside a crawl. The precedence is the library's: module default < environment <
command line (``-s NAME=value``, ``overrides``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from scrapy.settings import BaseSettings, Settings

from crawler import settings as project_module
from scholarindex.environment import apply_environment, settings_from


class Environment:
    """Scrapy add-on: the environment's values for ENVIRONMENT_SETTINGS."""

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        # The process's settings: logging and our crawl command (RUN_JOB, STATE_DIR,
        # RUN_LOCK, ...) read them before any crawler exists.
        apply_environment(settings, os.environ)

    def update_settings(self, settings: BaseSettings) -> None:
        # Each crawler's own copy (also when a crawler is made without our crawl command).
        apply_environment(settings, os.environ)


def project_settings(environ: Mapping[str, str] | None = None,
                     overrides: Mapping[str, Any] | None = None) -> Settings:
    """The crawl's settings outside a crawl: ``crawler/settings.py``, then ``environ``
    (``os.environ`` when None), then ``overrides`` (as ``-s`` would give them)."""
    return settings_from(project_module, environ, overrides)
