"""End to end: one paper listed under its first title and its later arXiv title is ONE work.

The fixture site plus two profile pages: Lena Hofmann lists a paper under its first
title, Ada Lindqvist under the later one arXiv shows. The stand-in arXiv serves the
fixture entries, the paper (its later title only, as arXiv's API does) and a decoy
with exactly the first title, by other people, five years before. Real servers and
real crawls throughout: the profiles spider in this process, and two ``scrapy crawl``
processes started at once, each bringing one of the two titles.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from opensearchpy import OpenSearch

from fixtures.render import read_page, render_lines
from scholarindex.core.identity import work_id
from standins.arxiv import ArxivStandIn, load_entries
from standins.site import SiteServer
from tests.support.crawl import ROOT, crawl_profiles, crawls_at_once
from tests.support.search_site import app_for

SITE = ROOT / "fixtures" / "site"
SITEMAP = json.loads((SITE / "sitemap.json").read_text())
PROFILES = sorted(path for path, page in SITEMAP.items() if page["profile"])
SEED = (ROOT / "fixtures" / "seeds" / "bzpeer_yinmin_zhong.txt").read_text()
RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"

FIRST = "Elastic Expert Placement for Sparse Mixture-of-Experts Training"
LATER = ("ElasticMoE: Adaptive Expert Placement for Efficient Sparse Mixture-of-Experts "
         "Training at Scale")
ABSTRACT = ("We place the experts of a sparse mixture-of-experts model elastically across "
            "nodes as the load shifts during training.")
LENA, ADA = "/bzpeer/researchers/lena-hofmann/", "/bzpeer/researchers/ada-lindqvist/"


def _entry(arxiv_id: str, title: str, year: int, authors: list[str]) -> dict:
    stamp = f"{year}-05-01T00:00:00Z"
    return {"id": arxiv_id, "title": title, "summary": ABSTRACT, "published": stamp,
            "updated": stamp, "authors": authors, "primary_category": "cs.DC",
            "categories": ["cs.DC", "cs.LG"], "doi": None, "journal_ref": None, "comment": None}


PAPER = _entry("2405.01234v3", LATER, 2024, ["Lena Hofmann", "Ada Lindqvist", "Marco Rossi"])
DECOY = _entry("1903.04321v1", FIRST, 2019, ["Marta Kowalski", "Oren Ben-David"])


def profile_page(name: str, title: str) -> str:
    """A layout A page of ``name`` listing one 2024 preprint, ``title`` (from a seed page)."""
    text = SEED.replace("Yinmin Zhong", name).replace(RELIBRA, title)
    start = text.index(title) + len(title)
    abstract_line = text.index("\n\n", start) + 2
    end = text.find("\n", abstract_line)
    text = text[:abstract_line] + ABSTRACT + (text[end:] if end >= 0 else "")
    return render_lines(read_page(text.replace("preprint2026arXiv", "preprint2024arXiv")))


@pytest.fixture
def site(tmp_path: Path):
    """The fixture site with the two new profile pages."""
    root = tmp_path / "site"
    shutil.copytree(SITE, root)
    for path, name, title in ((LENA, "Lena Hofmann", FIRST), (ADA, "Ada Lindqvist", LATER)):
        page = root / path.strip("/") / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(profile_page(name, title), encoding="utf-8")
    with SiteServer(root) as server:
        yield server


@pytest.fixture
def arxiv():
    with ArxivStandIn(entries=[DECOY, *load_entries(), PAPER]) as server:
        yield server


def crawl_settings(url: str, prefix: str, arxiv: ArxivStandIn) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": prefix,
            "ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv.api_url,
            "ARXIV_DELAY_SECONDS": "0.2", "ARXIV_FALLBACK_QUERIES": "true",
            "INCREMENTAL_ENABLED": "false"}


def works(client: OpenSearch, prefix: str) -> dict[str, dict]:
    client.indices.refresh(index=f"{prefix}works")
    hits = client.search(index=f"{prefix}works", body={"size": 1000})["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


def assert_one_work(docs: dict[str, dict]) -> dict:
    """The paper is one document holding both listings, with arXiv's id."""
    ids = sorted([work_id(FIRST), work_id(LATER)])
    mine = [d for d in docs.values() if set(d["work_ids"]) & set(ids)]
    assert len(mine) == 1, [d["title"] for d in mine]
    [doc] = mine
    assert doc["work_id"] == ids[0] and doc["work_ids"] == ids
    assert doc["arxiv_id"] == "2405.01234"
    assert sorted(p["name"] for p in doc["profiles"]) == ["Ada Lindqvist", "Lena Hofmann"]
    assert sorted((e["researcher_name"], e["title"]) for e in doc["listings"]) == [
        ("Ada Lindqvist", LATER), ("Lena Hofmann", FIRST)]
    return doc


def test_first_and_later_title_are_one_work_and_the_decoy_nothing(
        site, arxiv, tmp_path, opensearch_url, index_prefix, opensearch_client,
        opensearch_config) -> None:
    papers = json.loads((ROOT / "fixtures" / "arxiv" / "papers.json").read_text())["entries"]
    urls = ",".join(site.url(p) for p in [*PROFILES, LENA, ADA])
    result = crawl_profiles(tmp_path, crawl_settings(opensearch_url, index_prefix, arxiv),
                            urls=urls)
    assert result.returncode == 0, result.log[-3000:]
    docs = works(opensearch_client, index_prefix)
    doc = assert_one_work(docs)
    assert {"Lena Hofmann", "Ada Lindqvist", "Marco Rossi"} <= set(doc["authors"])
    assert result.stats.get("index/works_joined") == 1
    # The rest of the fixtures unchanged: their 42 works, each paper on arXiv with its
    # id and no other; the decoy's id on nothing.
    assert len(docs) == 42 + 1
    matched = sorted(d["arxiv_id"] for d in docs.values() if d["arxiv_id"])
    assert matched == sorted([e["id"].split("v")[0] for e in papers] + ["2405.01234"])
    assert "1903.04321" not in json.dumps(docs)
    # The search page's API shows the paper once, searched by either title, with both
    # profiles among the facets.
    api = TestClient(app_for(opensearch_config))
    for title in (FIRST, LATER):
        body = api.get("/api/search", params={"q": f'"{title}"'}).json()
        assert [h["id"] for h in body["hits"]] == [doc["work_id"]] and body["total"] == 1
        assert {v["label"] for v in body["facets"]["researcher"]} >= {"Lena Hofmann",
                                                                      "Ada Lindqvist"}
    # A re-crawl of both pages changes nothing but the times: still one document.
    again = crawl_profiles(tmp_path, crawl_settings(opensearch_url, index_prefix, arxiv),
                           urls=",".join(site.url(p) for p in (LENA, ADA)))
    assert again.returncode == 0
    assert_one_work(works(opensearch_client, index_prefix))


@pytest.mark.process
def test_two_crawl_processes_bringing_the_two_titles_make_one_document(
        site, arxiv, tmp_path, opensearch_url, index_prefix, opensearch_client) -> None:
    settings = {**crawl_settings(opensearch_url, index_prefix, arxiv),
                "INDEX_FLUSH_INTERVAL": "0.1"}
    results, logs = crawls_at_once(tmp_path, [
        (["-a", f"urls={site.url(path)}", "-a", "follow=false"], settings) for path in (LENA, ADA)])
    assert [r.returncode for r in results] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    assert [r.report["dead_lettered"] for r in results] == [0, 0]
    docs = works(opensearch_client, index_prefix)
    assert len(docs) == 1
    assert_one_work(docs)
