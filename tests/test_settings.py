"""One declaration of every setting; the environment applied in one place.

Precedence, for the crawler and ``scholarindex`` alike: ``crawler/settings.py`` <
the environment (``ENVIRONMENT_SETTINGS`` only) < ``-s NAME=value`` / overrides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler

from crawler import settings as declared
from crawler.environment import Environment, project_settings
from scholarindex.indexing.batching import Batching
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.ops.settings import OpsSettings, enrichment_config
from tests.support.crawl import run_crawl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_precedence_default_then_environment_then_overrides() -> None:
    environ = {"OPENSEARCH_URL": "http://env:9200", "INDEX_PREFIX": "env_"}
    overrides = {"OPENSEARCH_URL": "http://cmdline:9200"}
    assert project_settings({})["OPENSEARCH_URL"] == declared.OPENSEARCH_URL
    assert project_settings(environ)["OPENSEARCH_URL"] == "http://env:9200"
    settings = project_settings(environ, overrides)
    assert settings["OPENSEARCH_URL"] == "http://cmdline:9200"
    assert settings["INDEX_PREFIX"] == "env_"


def test_only_the_listed_names_come_from_the_environment() -> None:
    assert "INDEX_BATCH_SIZE" not in declared.ENVIRONMENT_SETTINGS
    settings = project_settings({"INDEX_BATCH_SIZE": "7", "RUN_MAX_ERROR_RATE": "0.25"})
    assert settings.getint("INDEX_BATCH_SIZE") == declared.INDEX_BATCH_SIZE
    assert settings.getfloat("RUN_MAX_ERROR_RATE") == 0.25


def test_every_listed_name_is_declared() -> None:
    assert set(declared.ENVIRONMENT_SETTINGS) <= set(dir(declared))


def test_the_addon_gives_the_environment_to_each_crawler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEX_PREFIX", "env_")
    monkeypatch.setenv("INDEX_BATCH_SIZE", "7")  # not an environment setting
    names = ("ADDONS", "ENVIRONMENT_SETTINGS", "INDEX_PREFIX", "INDEX_BATCH_SIZE", "CONTACT_URL")
    crawler = get_crawler(settings_dict={name: getattr(declared, name) for name in names})
    assert crawler.settings["INDEX_PREFIX"] == "env_"
    assert crawler.settings.getint("INDEX_BATCH_SIZE") == declared.INDEX_BATCH_SIZE


def test_the_addon_leaves_what_the_command_line_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENSEARCH_URL", "http://env:9200")
    monkeypatch.setenv("INDEX_PREFIX", "env_")
    settings = project_settings({})
    settings.set("INDEX_PREFIX", "cmdline_", priority="cmdline")
    Environment.update_pre_crawler_settings(settings)  # the crawl process's settings
    Environment().update_settings(settings)  # and each crawler's copy
    assert settings["OPENSEARCH_URL"] == "http://env:9200"
    assert settings["INDEX_PREFIX"] == "cmdline_"


def test_contact_url_names_the_user_agent_unless_it_is_given() -> None:
    contact = "https://ops.example/crawler"
    assert contact in project_settings({"CONTACT_URL": contact})["USER_AGENT"]
    given = project_settings({"CONTACT_URL": contact}, {"USER_AGENT": "Mine/1"})
    assert given["USER_AGENT"] == "Mine/1"
    assert project_settings({})["USER_AGENT"] == declared.USER_AGENT


def test_scholarindex_and_the_crawler_see_the_same_defaults() -> None:
    crawler = project_settings({})
    ops = OpsSettings.from_env({})
    assert ops.opensearch == OpenSearchConfig.from_settings(crawler)
    assert ops.opensearch.url == declared.OPENSEARCH_URL
    assert ops.opensearch.timeout == declared.OPENSEARCH_TIMEOUT
    assert ops.deadletter_path == Path(declared.INDEX_DEADLETTER_PATH)
    assert enrichment_config({}).api_url == declared.ARXIV_API_URL
    assert enrichment_config({}).user_agent == declared.USER_AGENT
    assert Batching.from_settings(crawler).size == declared.INDEX_BATCH_SIZE


def test_scholarindex_reads_the_same_environment_names() -> None:
    environ = {"OPENSEARCH_URL": "http://env:9200", "INDEX_PREFIX": "p_",
               "OPENSEARCH_TIMEOUT": "4", "INDEX_DEADLETTER_PATH": "/tmp/dl.jsonl",
               "ARXIV_BATCH_SIZE": "9"}
    ops = OpsSettings.from_env(environ)
    assert ops.opensearch == OpenSearchConfig.from_settings(project_settings(environ))
    assert (ops.opensearch.url, ops.prefix, ops.opensearch.timeout) == ("http://env:9200",
                                                                       "p_", 4.0)
    assert ops.deadletter_path == Path("/tmp/dl.jsonl")
    assert enrichment_config(environ).batch_size == 9


def test_a_missing_setting_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="OPENSEARCH_TIMEOUT"):
        OpenSearchConfig.from_settings({"OPENSEARCH_URL": "http://x", "OPENSEARCH_USER": "",
                                        "OPENSEARCH_PASSWORD": "",
                                        "OPENSEARCH_VERIFY_CERTS": "true",
                                        "OPENSEARCH_CA_CERTS": "", "INDEX_PREFIX": ""})


def test_a_real_crawl_takes_the_environment_and_lets_s_win(tmp_path: Path) -> None:
    page = (FIXTURES / "seeds" / "bzpeer_chao_jin.txt").as_uri()
    env = {"RUN_JOB": "from-env", "RUN_REPORT": str(tmp_path / "env-report.json")}
    report = tmp_path / "cli-report.json"
    result = run_crawl(tmp_path, "-a", f"urls={page}", env=env,
                       settings={"RUN_REPORT": str(report)})
    assert result.returncode == 0, result.log[-2000:]
    assert report.exists() and not (tmp_path / "env-report.json").exists()  # -s wins
    assert json.loads(report.read_text())["job"] == "from-env"  # the environment applies
