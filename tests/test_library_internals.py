"""The private parts of libraries the product relies on are still there, in the shape used.

Each is listed in docs/architecture.md ("Library internals") with why no public API
serves, and the library is bounded in pyproject.toml to the versions tested. When an
upgrade moves one of them, these fail first, naming it.
"""

from __future__ import annotations

import inspect

import arxiv
import requests
from scrapy.core.downloader import Downloader, Slot
from scrapy.utils.test import get_crawler


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_scrapy_download_slots_can_be_held_and_woken() -> None:
    # pipelines/pause.py: slot.concurrency set to 0 and back, then _process_queue(slot).
    assert _parameters(Downloader._process_queue) == ["self", "slot"]
    downloader = Downloader(get_crawler())
    assert isinstance(downloader.slots, dict)
    slot = Slot(concurrency=3, delay=0.0, jitter=0)
    slot.concurrency = 0
    assert slot.concurrency == 0


def test_the_arxiv_client_hooks() -> None:
    # scholarindex/enrichment/client.py: per-page fetch, page URL, the HTTP session.
    assert _parameters(arxiv.Client._parse_feed) == ["self", "url", "first_page", "_try_index"]
    assert _parameters(arxiv.Client._format_url) == ["self", "search", "start", "page_size"]
    assert isinstance(arxiv.Client()._session, requests.Session)
    args = arxiv.Search(query='ti:"x"')._url_args()
    assert args["search_query"] == 'ti:"x"'
