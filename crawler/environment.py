"""The one place the environment is applied to the project's settings.

``crawler/settings.py`` declares every setting with its default and lists in
``ENVIRONMENT_SETTINGS`` those also read from the environment. The crawler applies
them with the ``Environment`` add-on (registered in ``ADDONS``); ``scholarindex``,
tests and benchmarks call ``project_settings``. Either way the precedence is the
same: module default < environment < command line (``-s NAME=value``, ``overrides``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings, Settings

from crawler import settings as project_module

# The priority of crawler/settings.py: the environment replaces its defaults, and
# whatever was set higher (-s on the command line, a spider's custom_settings) stays.
PRIORITY = "project"


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
    """The crawler's settings outside a crawl: ``crawler/settings.py``, then ``environ``
    (``os.environ`` when None), then ``overrides`` (as ``-s`` would give them)."""
    settings = Settings()
    settings.setmodule(project_module, priority=PRIORITY)
    settings.setdict(dict(overrides or {}), priority="cmdline")
    apply_environment(settings, os.environ if environ is None else environ)
    return settings


def apply_environment(settings: BaseSettings, environ: Mapping[str, str]) -> None:
    """Set each ENVIRONMENT_SETTINGS name present in ``environ``, at project priority."""
    for name in settings.getlist("ENVIRONMENT_SETTINGS"):
        if name in environ:
            settings.set(name, environ[name], priority=PRIORITY)
    _follow_contact_url(settings)


def _follow_contact_url(settings: BaseSettings) -> None:
    """USER_AGENT names CONTACT_URL: the one in force, unless USER_AGENT was given itself."""
    if (settings.getpriority("USER_AGENT") or 0) <= SETTINGS_PRIORITIES[PRIORITY]:
        agent = project_module.USER_AGENT.replace(project_module.CONTACT_URL,
                                                  str(settings["CONTACT_URL"]))
        settings.set("USER_AGENT", agent, priority=PRIORITY)
