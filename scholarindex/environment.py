"""The one place the environment is applied to the settings.

``scholarindex/settings.py`` declares the shared settings with their defaults and lists
in ``ENVIRONMENT_SETTINGS`` those also read from the environment. The crawl applies them
with its ``Environment`` add-on (``crawler/environment.py``); ``scholarindex`` reads
``product_settings``. Either way the precedence is the same: module default <
environment < command line (``-s NAME=value``, ``overrides``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings, Settings

from scholarindex import settings as declared

# The priority of the settings modules: the environment replaces their defaults, and
# whatever was set higher (-s on the command line, a spider's custom_settings) stays.
PRIORITY = "project"


def product_settings(environ: Mapping[str, str] | None = None,
                     overrides: Mapping[str, Any] | None = None) -> Settings:
    """The shared settings outside a crawl: ``scholarindex/settings.py``, then ``environ``
    (``os.environ`` when None), then ``overrides`` (as ``-s`` would give them)."""
    return settings_from(declared, environ, overrides)


def settings_from(module: Any, environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """A settings module's values with ``environ`` and ``overrides`` applied."""
    settings = Settings()
    settings.setmodule(module, priority=PRIORITY)
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
        agent = declared.USER_AGENT.replace(declared.CONTACT_URL, str(settings["CONTACT_URL"]))
        settings.set("USER_AGENT", agent, priority=PRIORITY)
