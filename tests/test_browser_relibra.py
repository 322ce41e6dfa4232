"""In headless Chromium: ReLibra's arXiv authors and categories are facets of its search.

The fixture pages are indexed, then ReLibra is looked up on the stand-in arXiv with
the real resolver and its answer written as the crawl writes it (an enrichment
change); the search page for "ReLibra" must offer arXiv's nine authors and both
category labels as facet values. Screenshot: ``test-artifacts/relibra-search.png``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bench.cluster import writer_retry
from scholarindex.core.enrichment_status import DONE
from scholarindex.core.identity import work_id
from scholarindex.enrichment.cache import LookupCache
from scholarindex.enrichment.client import ArxivFetcher
from scholarindex.enrichment.models import Listing
from scholarindex.enrichment.resolver import Resolver
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import enrichment_change
from scholarindex.indexing.client import build_client
from scholarindex.indexing.deadletter import DeadLetterFile
from standins.arxiv import ArxivStandIn
from tests.support.crawl import ROOT
from tests.support.search_site import FixtureSite, app_for, index_site
from tests.support.settings import LAYOUT, enrichment_config_with
from tests.test_browser_search import ARTIFACTS, LiveServer, browser, chromium, playwright

__all__ = ["browser", "chromium", "playwright"]  # the fixtures, shared with that module

pytestmark = pytest.mark.browser

RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"
ENTRY = next(e for e in json.loads((ROOT / "fixtures" / "arxiv" / "papers.json").read_text())
             ["entries"] if e["title"] == RELIBRA)


@pytest.fixture(scope="module")
def site(module_opensearch_config, tmp_path_factory) -> FixtureSite:
    """The fixture pages indexed, with ReLibra's arXiv answer as the crawl writes it."""
    config = module_opensearch_config
    client = build_client(config)
    folder: Path = tmp_path_factory.mktemp("relibra")
    indexed = index_site(client, config, folder)
    with ArxivStandIn() as arxiv:
        enrichment = replace(enrichment_config_with(), api_url=arxiv.api_url,
                             delay_seconds=0.05, cache_dir=str(folder))
        resolver = Resolver(ArxivFetcher(enrichment).search, LookupCache(folder, 3600, 3600),
                            enrichment)
        [outcome] = resolver.resolve([Listing.of(work_id(RELIBRA), RELIBRA, 2026,
                                                 ["Chao Jin", "Yinmin Zhong"])])
    assert outcome.status == DONE, outcome.reason
    writer = BulkWriter(client, config.prefix, DeadLetterFile(folder / "dl.jsonl"),
                        writer_retry(), layout=LAYOUT)
    report = writer.write(
        [enrichment_change(work_id(RELIBRA), status=outcome.status, arxiv=outcome.arxiv)])
    assert report.enrichments_delivered == 1
    client.indices.refresh(index=f"{config.prefix}works")
    return indexed


@pytest.fixture(scope="module")
def server(site: FixtureSite) -> Iterator[LiveServer]:
    with LiveServer(app_for(site.config)) as live:
        yield live


def test_relibra_document_lists_the_nine_authors_and_categories(site: FixtureSite) -> None:
    [hit] = [h for h in site.search(q="ReLibra")["hits"] if h["title"] == RELIBRA]
    assert len(ENTRY["authors"]) == 9
    assert hit["authors"] == ENTRY["authors"]  # one spelling each, arXiv's order
    assert {"cs.LG", "cs.DC"} <= set(hit["categories"])
    assert hit["arxiv_id"] == "2603.08127"


def test_relibra_search_shows_them_as_facets(browser, server) -> None:
    page = browser().new_page()
    page.set_default_timeout(10_000)
    page.goto(server.url + "/?q=ReLibra")
    values = page.locator("a.facet-value").evaluate_all(
        "els => els.map(e => [e.dataset.facet, e.dataset.value,"
        " e.querySelector('.facet-label').textContent.trim()])")
    authors = {value for facet, value, _ in values if facet == "author"}
    labels = {label for facet, _, label in values if facet == "category"}
    assert set(ENTRY["authors"]) <= authors
    assert {"Machine Learning (cs.LG)",
            "Distributed, Parallel, and Cluster Computing (cs.DC)"} <= labels
    for label in ("Machine Learning (cs.LG)", "Xuanzhe Liu", "Size Zheng"):
        assert page.locator("nav.facets").get_by_text(label).first.is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "relibra-search.png"), full_page=True)
    page.close()
