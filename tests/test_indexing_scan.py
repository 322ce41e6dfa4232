"""Scans run side by side (``scan_each``) on a real node: every hit, errors, early stops."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from opensearchpy import OpenSearch, helpers

from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.scan import scan, scan_each


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
