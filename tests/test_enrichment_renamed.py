"""A paper renamed on arXiv: found by the fallback query, verified as renamed; decoys refused.

The stand-in serves the fixture entries plus a renamed paper (its latest title on
arXiv, the earlier one on the profile) and a decoy carrying exactly the earlier
title, by other people, years before.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from scholarindex.core.enrichment_status import DONE, NONE
from scholarindex.enrichment.cache import LookupCache
from scholarindex.enrichment.client import ArxivFetcher
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.query import fallback_clause
from scholarindex.enrichment.resolver import Resolver
from scholarindex.enrichment.service import start_enricher
from standins.arxiv import ArxivStandIn, load_entries
from tests.support.settings import enrichment_config_with

EARLIER = "Elastic Expert Placement for Sparse Mixture-of-Experts Training"
FALLBACK = "(ti:placement AND ti:training AND au:jin)"


def _entry(arxiv_id: str, title: str, year: int, authors: list[str]) -> dict:
    stamp = f"{year}-05-01T00:00:00Z"
    return {"id": arxiv_id, "title": title, "summary": "An abstract.", "published": stamp,
            "updated": stamp, "authors": authors, "primary_category": "cs.DC",
            "categories": ["cs.DC", "cs.LG"], "doi": None, "journal_ref": None, "comment": None}


RENAMED = _entry("2405.01234v3", "ElasticMoE: Adaptive Expert Placement for Efficient Sparse "
                 "Mixture-of-Experts Training at Scale", 2024, ["C. Jin", "Ada Arxivson"])
DECOY = _entry("1903.04321v1", EARLIER, 2019, ["Marta Kowalski", "Oren Ben-David"])
LISTING = Listing.of("elastic", EARLIER, 2025, ["Chao Jin", "Yinmin Zhong"])


@pytest.fixture
def arxiv_api():
    with ArxivStandIn(entries=[DECOY, *load_entries(), RENAMED]) as server:
        yield server


def make_config(api: ArxivStandIn, tmp_path: Path, **overrides: object) -> EnrichmentConfig:
    values: dict = {"api_url": api.api_url, "delay_seconds": 0.05, "cache_dir": str(tmp_path),
                    "backoff_seconds": 0.05, "timeout_seconds": 1.0, "fallback_queries": True,
                    "batch_linger_seconds": 60.0, **overrides}
    return replace(enrichment_config_with(), **values)


def resolver(api: ArxivStandIn, tmp_path: Path, **overrides: object) -> Resolver:
    config = make_config(api, tmp_path, **overrides)
    cache = LookupCache(tmp_path, config.hit_ttl_seconds, config.miss_ttl_seconds)
    return Resolver(ArxivFetcher(config).search, cache, config)


def test_fallback_clause_is_two_long_title_words_and_a_surname() -> None:
    assert fallback_clause([EARLIER], ["Yinmin Zhong", "Chao Jin"]) == FALLBACK
    # The same clause whatever order the profiles came in.
    assert fallback_clause([EARLIER], ["Chao Jin", "Yinmin Zhong"]) == FALLBACK
    assert fallback_clause(["Deep Learning for Graphs"], ["Chao Jin"]) is None  # too generic
    assert fallback_clause([EARLIER], ["李明"]) is None  # no surname to ask with


def test_renamed_paper_is_found_by_one_fallback_request(arxiv_api, tmp_path) -> None:
    [outcome] = resolver(arxiv_api, tmp_path).resolve([LISTING])
    assert outcome.status == DONE, outcome.reason
    assert outcome.arxiv is not None
    assert outcome.arxiv["id"] == "2405.01234" and "renamed" in outcome.reason
    # The title phrase finds only the decoy; the fallback, one more request, the paper.
    assert arxiv_api.queries == [f'ti:"{" ".join(EARLIER.lower().replace("-", " ").split())}"',
                                 FALLBACK]
    # Warm: the cache answers, the decoy still refused.
    arxiv_api.reset()
    again = resolver(arxiv_api, tmp_path)
    assert again.from_cache(LISTING) == outcome and arxiv_api.request_count == 0


def test_without_fallback_queries_the_phrase_alone_misses_it(arxiv_api, tmp_path) -> None:
    [outcome] = resolver(arxiv_api, tmp_path, fallback_queries=False).resolve([LISTING])
    assert outcome.status == NONE and "1903.04321" in outcome.reason  # the decoy, refused
    assert arxiv_api.request_count == 1


def test_decoy_with_the_exact_title_is_never_attached(arxiv_api, tmp_path) -> None:
    """Other people, years before: refused even when the renamed paper is absent."""
    arxiv_api.entries.remove(RENAMED)
    arxiv_api._titles.pop()  # the stand-in's title index, kept in step with its entries
    [outcome] = resolver(arxiv_api, tmp_path).resolve([LISTING])
    assert outcome.status == NONE and outcome.arxiv is None


def test_at_most_one_extra_request_per_batch(arxiv_api, tmp_path) -> None:
    missing = [Listing.of(f"m{i}", f"Hypothetical Elastic Cache Tiering for Workload{i:02}",
                          2024, ["Chao Jin"]) for i in range(25)]
    found = Listing.of("resnest", "ResNeSt: Split-Attention Networks", 2020, ["Haibin Lin"])
    outcomes = resolver(arxiv_api, tmp_path, batch_size=10).resolve([found, *missing, LISTING])
    assert [o.status for o in outcomes] == [DONE] + [NONE] * 25 + [DONE]
    # Three batches of phrases (an empty answer is asked again to confirm it); after
    # each, at most one fallback request, never re-asked when empty.
    phrases = {q for q in arxiv_api.queries if "AND" not in q}
    fallbacks = [q for q in arxiv_api.queries if "AND" in q]
    assert len(phrases) == 3 and len(fallbacks) == 3 == len(set(fallbacks))
    assert sum(q.count("au:") for q in fallbacks) == 26  # every unmatched listing, once
    assert "au:lin" not in " ".join(fallbacks)  # a matched listing is not asked again


def test_the_crawl_enricher_finds_it_too(arxiv_api, tmp_path) -> None:
    results: dict[str, Outcome] = {}
    enricher = start_enricher(make_config(arxiv_api, tmp_path), on_result=lambda o: results
                              .__setitem__(o.work_id, o))
    try:
        assert enricher.submit(LISTING) is None
        enricher.flush()
        deadline = time.monotonic() + 20
        while enricher.outstanding() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        enricher.close("test over", timeout=5)
    assert results["elastic"].status == DONE
    found = results["elastic"].arxiv
    assert found is not None and found["id"] == "2405.01234"
