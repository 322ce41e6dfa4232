"""End to end: the profiles spider over the fixture site into OpenSearch.

Covers indexing (one document per paper, merges across profiles and layouts,
repeated runs and concurrent processes) and arXiv enrichment (right ids, none
wrong, few requests, none on a warm cache), with real servers for everything: the
crawls run the real engine in this process, except the two real ``scrapy crawl``
processes that run at once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from opensearchpy import OpenSearch

from scholarindex.indexing.connection import OpenSearchConfig
from standins.arxiv import ArxivStandIn
from standins.site import SiteServer
from tests.support.crawl import ROOT, crawl_profiles, crawls_at_once
from tests.support.search_site import app_for

SITE = ROOT / "fixtures" / "site"
SEEDS = [p for p in (SITE / "urls.txt").read_text().splitlines() if p.startswith("/")]
SITEMAP = json.loads((SITE / "sitemap.json").read_text())
PROFILES = sorted(path for path, page in SITEMAP.items() if page["profile"])
CHAO, YINMIN = "/bzpeer/researchers/chao-jin/", "/bzpeer/researchers/yinmin-zhong/"


@pytest.fixture(scope="module")
def site():
    with SiteServer(SITE) as server:
        yield server


def index_settings(url: str, prefix: str) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": prefix}


def crawl(tmp_path: Path, site: SiteServer, paths: list[str], url: str, prefix: str,
          **extra: str):
    urls = ",".join(site.url(p) for p in paths)
    return crawl_profiles(tmp_path, {**index_settings(url, prefix), **extra}, urls=urls)


def works(client: OpenSearch, prefix: str) -> dict[str, dict]:
    client.indices.refresh(index=f"{prefix}works")
    hits = client.search(index=f"{prefix}works", body={"size": 1000})["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"


def by_title(docs: dict[str, dict], title: str) -> dict:
    [doc] = [d for d in docs.values() if d["title"] == title]
    return doc


def test_seed_pages_give_25_works_and_5_researchers(site, tmp_path, opensearch_url,
                                                    index_prefix, opensearch_client) -> None:
    result = crawl(tmp_path, site, SEEDS, opensearch_url, index_prefix)
    assert result.returncode == 0, result.log[-3000:]
    docs = works(opensearch_client, index_prefix)
    assert len(docs) == 25
    assert opensearch_client.count(index=f"{index_prefix}researchers")["count"] == 5
    relibra = by_title(docs, RELIBRA)
    assert sorted(p["name"] for p in relibra["profiles"]) == ["Chao Jin", "Yinmin Zhong"]
    assert {"Chao Jin", "Yinmin Zhong"} <= set(relibra["authors"])
    for doc in docs.values():  # the fields docs/interfaces.md names
        assert {"title", "abstract", "year", "authors", "profiles", "categories",
                "arxiv_id"} <= set(doc)


def test_held_out_pages_merge_across_layouts(site, tmp_path, opensearch_url, index_prefix,
                                             opensearch_client) -> None:
    result = crawl(tmp_path, site, PROFILES, opensearch_url, index_prefix)
    assert result.returncode == 0, result.log[-3000:]
    docs = works(opensearch_client, index_prefix)
    listings = result.kind("work")
    assert len(docs) == len({w["work_id"] for w in listings}) == 42
    assert sum(len(d["listings"]) for d in docs.values()) == len(listings)
    resnest = by_title(docs, "ResNeSt: Split-Attention Networks")  # layout A and layout B
    assert sorted(p["name"] for p in resnest["profiles"]) == ["Haibin Lin", "Priya Raghunathan"]
    assert sorted(p["source"] for p in resnest["profiles"]) == ["bzpeer", "papercards"]
    m3bert = by_title(docs, "m3BERT: A Modern, Multi-lingual, Matryoshka Bidirectional Encoder")
    assert sorted(p["name"] for p in m3bert["profiles"]) == ["Jian Jiao", "Tomás Ferreira"]
    # Near misses stay apart: the extended ReLibra title is its own work.
    assert len([d for d in docs.values() if d["title"].startswith("ReLibra")]) == 2


def test_profiles_crawled_in_separate_runs_merge(site, tmp_path, opensearch_url, index_prefix,
                                                 opensearch_client) -> None:
    assert crawl(tmp_path, site, [CHAO], opensearch_url, index_prefix).returncode == 0
    assert crawl(tmp_path, site, [YINMIN], opensearch_url, index_prefix).returncode == 0
    relibra = by_title(works(opensearch_client, index_prefix), RELIBRA)
    assert sorted(p["name"] for p in relibra["profiles"]) == ["Chao Jin", "Yinmin Zhong"]


def test_same_crawl_twice_changes_only_last_seen(site, tmp_path, opensearch_url, index_prefix,
                                                 opensearch_client) -> None:
    def untimed(docs: dict) -> dict:
        docs = json.loads(json.dumps(docs))
        for doc in docs.values():
            for entry in (doc, *doc["listings"]):
                entry.pop("last_seen", None)
        return docs

    full = {"INCREMENTAL_ENABLED": "false"}
    assert crawl(tmp_path, site, SEEDS, opensearch_url, index_prefix, **full).returncode == 0
    first = works(opensearch_client, index_prefix)
    assert crawl(tmp_path, site, SEEDS, opensearch_url, index_prefix, **full).returncode == 0
    second = works(opensearch_client, index_prefix)
    assert untimed(first) == untimed(second)


@pytest.mark.process
def test_two_concurrent_crawls_lose_no_contribution(site, tmp_path, opensearch_url,
                                                    index_prefix, opensearch_client) -> None:
    """Two real processes at once over overlapping profiles (every seed in both).

    Each writes through its index writer's child process (the default), the one
    place a whole crawl does.
    """
    halves = [SEEDS + PROFILES[::2], SEEDS + PROFILES[1::2]]
    settings = {**index_settings(opensearch_url, index_prefix),
                "INDEX_BATCH_SIZE": "5", "INDEX_FLUSH_INTERVAL": "0.1"}
    results, logs = crawls_at_once(tmp_path, [
        (["-a", "urls=" + ",".join(site.url(p) for p in paths), "-a", "follow=false"], settings)
        for paths in halves])
    assert [r.returncode for r in results] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    assert [r.report["dead_lettered"] for r in results] == [0, 0]
    docs = works(opensearch_client, index_prefix)
    assert len(docs) == 42
    relibra = by_title(docs, RELIBRA)
    assert len(relibra["profiles"]) == 2
    # Every profile's every listing is in its work: nothing overwritten by the other process.
    listed = {(d["work_id"], e["researcher_id"]) for d in docs.values() for e in d["listings"]}
    assert len(listed) == 49


def test_enrichment_attaches_right_ids_only_with_few_requests(site, tmp_path, opensearch_url,
                                                              index_prefix, opensearch_client,
                                                              opensearch_config) -> None:
    papers = json.loads((ROOT / "fixtures" / "arxiv" / "papers.json").read_text())["entries"]
    on_arxiv = {e["id"].split("v")[0]: e["title"] for e in papers}
    with ArxivStandIn() as arxiv:
        arxiv_settings = {"ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv.api_url,
                          "ARXIV_DELAY_SECONDS": "0.2", "INCREMENTAL_ENABLED": "false"}
        first = crawl(tmp_path, site, PROFILES, opensearch_url, index_prefix, **arxiv_settings)
        assert first.returncode == 0, first.log[-3000:]
        cold = arxiv.request_count
        docs = works(opensearch_client, index_prefix)
        # One query per batch of 20 titles; a batch whose answer is an empty page is asked
        # again (ARXIV_EMPTY_PAGE_CONFIRMATIONS), and which titles share a batch depends on
        # the order pages arrive in, so the re-asks are bounded separately; a request
        # that timed out on a busy machine is retried, and counted as such.
        queries = len(set(arxiv.queries))
        assert queries <= len(docs) / 10
        assert cold <= queries * 3 + first.stats.get("arxiv/retries", 0)
        matched = [d for d in docs.values() if d["arxiv_id"]]
        # Every paper on arXiv got its id, once; no decoy id was attached to anything.
        assert sorted(d["arxiv_id"] for d in matched) == sorted(on_arxiv)
        for doc in matched:
            assert doc["arxiv"]["title"] == on_arxiv[doc["arxiv_id"]], doc["title"]
        # arXiv's authors and categories are the work's own, for the facets and the API.
        relibra = by_title(docs, RELIBRA)
        [entry] = [e for e in papers if e["title"] == RELIBRA]
        assert len(entry["authors"]) == 9 and len(relibra["listings"]) == 2
        assert relibra["authors"] == entry["authors"]  # one spelling per person, arXiv's order
        assert {"cs.DC", "cs.LG"} <= set(relibra["categories"])
        facet = search_api(opensearch_config)["facets"]["category"]
        counts = {v["value"]: v["count"] for v in facet}
        for code in ("cs.LG", "cs.DC"):
            assert counts[code] == sum(code in e["categories"] for e in papers)
        assert {"value": "cs.DC", "label": "Distributed, Parallel, and Cluster Computing (cs.DC)"}\
            .items() <= next(v for v in facet if v["value"] == "cs.DC").items()
        second = crawl(tmp_path, site, PROFILES, opensearch_url, index_prefix, **arxiv_settings)
        assert second.returncode == 0
        assert arxiv.request_count == cold  # the warm cache asks nothing
        again = by_title(works(opensearch_client, index_prefix), RELIBRA)
        assert (again["authors"], again["categories"]) == (relibra["authors"],
                                                           relibra["categories"])


def search_api(config: OpenSearchConfig, **params: str) -> dict:
    """``GET /api/search`` of the web UI over the index."""
    response = TestClient(app_for(config)).get("/api/search", params={"size": 50, **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_fallback_queries_attach_no_wrong_id(site, tmp_path, opensearch_url, index_prefix,
                                             opensearch_client) -> None:
    """With the renamed-paper fallback on, the fixture's decoys are still never attached."""
    papers = json.loads((ROOT / "fixtures" / "arxiv" / "papers.json").read_text())["entries"]
    with ArxivStandIn() as arxiv:
        arxiv_settings = {"ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv.api_url,
                          "ARXIV_DELAY_SECONDS": "0.2", "INCREMENTAL_ENABLED": "false",
                          "ARXIV_FALLBACK_QUERIES": "true"}
        first = crawl(tmp_path, site, PROFILES, opensearch_url, index_prefix, **arxiv_settings)
        assert first.returncode == 0, first.log[-3000:]
        docs = works(opensearch_client, index_prefix)
        matched = sorted(d["arxiv_id"] for d in docs.values() if d["arxiv_id"])
        assert matched == sorted(e["id"].split("v")[0] for e in papers)
        fallbacks = [q for q in arxiv.queries if " AND " in q]
        assert fallbacks and len(fallbacks) <= len(set(arxiv.queries) - set(fallbacks))
        cold = arxiv.request_count
        second = crawl(tmp_path, site, PROFILES, opensearch_url, index_prefix, **arxiv_settings)
        assert second.returncode == 0
        assert arxiv.request_count == cold  # the fallback answers are cached too
