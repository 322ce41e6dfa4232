"""A reindex's check compares rankings across a change of shards: the same works in one
shard and in two rank alike, though each shard of two scores with its own statistics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opensearchpy import OpenSearch

from scholarindex.indexing.connection import IndexLayout
from scholarindex.indexing.indices import MAPPINGS_DIR, create_index, read_mapping, with_layout
from scholarindex.ops.verify import compare, sample_queries, snapshot

AUTHOR = "Leila Wilson"


def works() -> list[dict[str, object]]:
    """An author's 30 works, alike but for the title's number (their scores tie), and 40
    works of others, so the two shards of a two-shard index count the name differently."""
    docs: list[dict[str, object]] = []
    for n in range(30):
        docs.append({"work_id": f"w{n:03d}", "title": f"Study number {n}", "year": 2020,
                     "authors": [AUTHOR], "work_ids": [f"w{n:03d}"]})
    for n in range(40):
        docs.append({"work_id": f"x{n:03d}", "title": f"Other paper {n}", "year": 2019,
                     "authors": [f"Someone Else{n}"], "work_ids": [f"x{n:03d}"]})
    return docs


@pytest.fixture
def one_and_two_shards(opensearch_client: OpenSearch, index_prefix: str
                       ) -> Iterator[tuple[str, str]]:
    client, body = opensearch_client, read_mapping("works", MAPPINGS_DIR)
    names = (f"{index_prefix}works-one", f"{index_prefix}works-two")
    for name, shards in zip(names, (1, 2), strict=True):
        create_index(client, name, with_layout("works", body, IndexLayout(shards=shards)))
        for doc in works():
            client.index(index=name, id=str(doc["work_id"]), body=doc)
        client.indices.refresh(index=name)
    try:
        yield names
    finally:
        client.indices.delete(index=",".join(names), ignore=404)


def test_the_same_works_in_one_shard_and_in_two_rank_alike(
        opensearch_client: OpenSearch, one_and_two_shards: tuple[str, str]) -> None:
    one, two = one_and_two_shards
    queries = [q for q in sample_queries(opensearch_client, one, "works") if q.label == AUTHOR]
    assert queries, "the author's name is a sample query"
    found = compare(snapshot(opensearch_client, one, "works", queries),
                    snapshot(opensearch_client, two, "works", queries))
    assert found.all() == []
