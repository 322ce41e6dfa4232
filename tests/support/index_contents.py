"""What an index holds, read back for comparison (no tests here)."""

from __future__ import annotations

import copy
from typing import Any

from opensearchpy import OpenSearch


def snapshot(client: OpenSearch, alias: str) -> dict[str, dict[str, Any]]:
    """Every document under the alias (or index), by id."""
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 10000, "query": {"match_all": {}}})
    return {hit["_id"]: hit["_source"] for hit in hits["hits"]["hits"]}


def untimed(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A copy of ``docs`` without ``last_seen`` (the one field a re-crawl changes)."""
    docs = copy.deepcopy(docs)
    for doc in docs.values():
        for entry in [doc, *doc.get("listings", [])]:
            entry.pop("last_seen", None)
    return docs
