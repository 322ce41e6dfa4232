"""Helpers for the web UI tests: the fixture pages indexed, and the app over them.

Plain functions (no fixtures here): each test module declares its own small
fixtures on top of conftest's ``opensearch_client``/``opensearch_config``.
"""

from __future__ import annotations

import html.parser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from opensearchpy import OpenSearch

from bench.cluster import writer_retry
from bench.search_data import SEEN_AT, index_fixtures, refresh
from scholarindex.core.identity import researcher_id, work_id
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import Change, change_from_item
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.webui.app import create_app
from scholarindex.webui.service import SearchService
from tests.support.settings import LAYOUT

# The held-out page with "<script>alert(1)</script>" inside an abstract.
SCRIPT_TEXT = "<script>alert(1)</script>"
SCRIPT_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


@dataclass
class FixtureSite:
    """The fixture pages indexed under a prefix, and a client for the app over them."""

    config: OpenSearchConfig
    http: TestClient
    works: int
    researchers: dict[str, str] = field(default_factory=dict)  # name -> id

    def search(self, **params: Any) -> dict[str, Any]:
        """``GET /api/search`` with ``params``; asserts 200 and returns the JSON."""
        response = self.http.get("/api/search", params=params)
        assert response.status_code == 200, response.text
        return response.json()


def index_site(client: OpenSearch, config: OpenSearchConfig, tmp_path: Path) -> FixtureSite:
    """Index every fixture page (real parser, real writer) and build the app over it."""
    works = index_fixtures(client, config.prefix, tmp_path / "dead-letter.jsonl", layout=LAYOUT)
    http = TestClient(app_for(config))
    found = client.search(index=f"{config.prefix}researchers",
                          body={"size": 100, "_source": ["name"]})
    researchers = {h["_source"]["name"]: h["_id"] for h in found["hits"]["hits"]}
    return FixtureSite(config, http, works, researchers)


def profile_changes(name: str, url: str, source: str, titles: list[str]) -> list[Change]:
    """A profile and its listings, as a crawl of its page would give them."""
    rid = researcher_id(url)
    items: list[Any] = [ResearcherItem(id=rid, url=url, name=name, source=source,
                                       listed_count=len(titles))]
    items += [WorkItem(work_id=work_id(title), title=title, researcher_id=rid,
                       researcher_name=name, researcher_url=url, source=source, position=i)
              for i, title in enumerate(titles, 1)]
    return [change_from_item(item, SEEN_AT) for item in items]


def add_profiles(site: FixtureSite, tmp_path: Path,
                 profiles: dict[str, tuple[str, str, str, list[str]]]) -> None:
    """Index more profiles into ``site``: key -> (name, url, source, titles listed).

    Each profile's id goes into ``site.researchers`` under its key; raises if anything
    was dead-lettered.
    """
    client = build_client(site.config)
    writer = BulkWriter(client, site.config.prefix,
                        DeadLetterFile(tmp_path / "dead-letter.jsonl"), writer_retry(),
                        layout=LAYOUT)
    changes: list[Change] = []
    for key, (name, url, source, titles) in profiles.items():
        changes += profile_changes(name, url, source, titles)
        site.researchers[key] = researcher_id(url)
    report = writer.write(changes)
    if report.dead_lettered or report.fatal or report.delivered != len(changes):
        raise RuntimeError(f"adding profiles lost documents: {report}")
    refresh(client, site.config.prefix)


def app_for(config: OpenSearchConfig, *, attempts: int = 2) -> Any:
    """The app over ``config`` (``attempts``: how many tries the service makes per request)."""
    service = SearchService(build_client(config), config.prefix, attempts=attempts,
                            sleep=lambda _: None)
    return create_app(service=service)


class TagCounter(html.parser.HTMLParser):
    """Counts start tags and keeps their attributes, to check what markup a page holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def find(self, tag: str) -> list[dict[str, str | None]]:
        """Attributes of every ``tag`` element."""
        return [attrs for name, attrs in self.tags if name == tag]


def tags(page: str) -> TagCounter:
    """Parse ``page`` and return its tags."""
    parser = TagCounter()
    parser.feed(page)
    return parser
