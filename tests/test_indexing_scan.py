"""Scans run side by side (``scan_each``) and sized searches (``fetch_each``) on a real
node: every hit, errors, early stops."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from opensearchpy import OpenSearch, helpers

from scholarindex.indexing import scan as scan_module
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.scan import fetch_each, scan, scan_each


@pytest.fixture
def numbered(opensearch_client: OpenSearch, index_prefix: str) -> str:
    index = f"{index_prefix}numbered"
    opensearch_client.indices.create(index=index, body={
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"n": {"type": "integer"}, "tag": {"type": "keyword"}}}})
    helpers.bulk(opensearch_client, ({"_index": index, "_id": str(n), "n": n,
                                      "tag": "even" if n % 2 == 0 else "odd"}
                                     for n in range(2_500)), refresh=True)
    return index


def _open_scrolls(client: OpenSearch, index: str) -> int:
    stats = client.indices.stats(index=index, metric="search")
    return int(stats["_all"]["total"]["search"]["scroll_current"])


def test_scans_side_by_side_give_every_hit_of_each_query(opensearch_client: OpenSearch,
                                                         numbered: str) -> None:
    bodies: list[dict[str, Any]] = [{"query": {"range": {"n": {"lt": 1_200}}}},
                                    {"query": {"term": {"tag": "even"}}},
                                    {"query": {"range": {"n": {"gte": 2_400}}}}]
    one_by_one = Counter(hit["_id"] for body in bodies
                         for hit in scan(opensearch_client, numbered, body, page_size=100))

    together = Counter(hit["_id"] for hit in scan_each(opensearch_client, numbered, bodies,
                                                        page_size=100))

    assert together == one_by_one  # a document two queries match comes twice
    assert together["0"] == 2 and together["2401"] == 1 and len(together) == 1_900


def test_a_scan_that_fails_stops_the_others_and_the_caller_hears_of_it(
        opensearch_client: OpenSearch, numbered: str) -> None:
    bodies: list[dict[str, Any]] = [{"query": {"match_all": {}}}] * 2
    with pytest.raises(IndexUnavailable):
        for _ in scan_each(opensearch_client, f"{numbered}-missing", bodies):
            pass
    assert _open_scrolls(opensearch_client, numbered) == 0


def test_a_caller_that_stops_early_leaves_no_scroll_open(opensearch_client: OpenSearch,
                                                         numbered: str) -> None:
    hits = scan_each(opensearch_client, numbered,
                     [{"query": {"match_all": {}}}, {"query": {"term": {"tag": "odd"}}}],
                     page_size=50)
    taken = [next(hits) for _ in range(10)]
    assert len(taken) == 10 and _open_scrolls(opensearch_client, numbered) > 0

    hits.close()

    assert _open_scrolls(opensearch_client, numbered) == 0


def _searches_made(client: OpenSearch, index: str) -> tuple[int, int]:
    stats = client.indices.stats(index=index, metric="search")["_all"]["total"]["search"]
    return int(stats["query_total"]), int(stats["scroll_total"])


@pytest.mark.parametrize("at_once", [1, 2, 3])
def test_sized_searches_give_every_hit_in_order_one_request_each(
        opensearch_client: OpenSearch, numbered: str, at_once: int) -> None:
    searches: list[tuple[dict[str, Any], int]] = [
        ({"query": {"range": {"n": {"lt": 300}}}}, 300),
        ({"query": {"term": {"tag": "even"}}}, 1_250),
        ({"query": {"range": {"n": {"gte": 2_400}}}}, 150),  # more than it has: fine
        ({"query": {"range": {"n": {"gte": 9_000}}}}, 0)]
    queries, scrolls = _searches_made(opensearch_client, numbered)

    hits = [hit["_id"] for hit in fetch_each(opensearch_client, numbered, searches,
                                             at_once=at_once)]

    expected = [str(n) for n in range(300)] + [str(n) for n in range(0, 2_500, 2)] + [
        str(n) for n in range(2_400, 2_500)]
    assert hits == expected
    after = _searches_made(opensearch_client, numbered)
    assert after == (queries + len(searches), scrolls)


def test_a_search_that_outgrew_its_count_or_the_window_is_scanned_whole(
        opensearch_client: OpenSearch, numbered: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "MAX_WINDOW", 1_000)
    searches: list[tuple[dict[str, Any], int]] = [
        ({"query": {"term": {"tag": "odd"}}}, 40),  # counted before 1,210 more came
        ({"query": {"match_all": {}}}, 2_500),  # past the window
        ({"query": {"range": {"n": {"lt": 10}}}}, 10)]
    _, scrolls = _searches_made(opensearch_client, numbered)

    hits = Counter(hit["_id"] for hit in fetch_each(opensearch_client, numbered, searches))

    assert len(hits) == 2_500 and sum(hits.values()) == 1_250 + 2_500 + 10
    assert hits["1"] == 3 and hits["2"] == 2 and hits["10"] == 1
    assert _searches_made(opensearch_client, numbered)[1] > scrolls
    assert _open_scrolls(opensearch_client, numbered) == 0


def test_a_failed_sized_search_reaches_the_caller_and_a_stop_leaves_nothing_running(
        opensearch_client: OpenSearch, numbered: str) -> None:
    with pytest.raises(IndexUnavailable):
        list(fetch_each(opensearch_client, f"{numbered}-missing",
                        [({"query": {"match_all": {}}}, 10)] * 3))
    hits = fetch_each(opensearch_client, numbered,
                      [({"query": {"term": {"tag": "odd"}}}, 1_250)] * 4)
    assert next(hits)["_id"] == "1"
    hits.close()  # the searches in flight are waited for, the rest never sent
    assert _open_scrolls(opensearch_client, numbered) == 0
