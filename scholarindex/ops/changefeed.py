"""Which documents of the live index changed since we last copied them.

Every write to an index gives the document a new ``_seq_no`` (per shard, with its
``_primary_term``). The feed keeps, per document id, the ``(_seq_no,
_primary_term)`` of the version we copied; ``changed()`` lists the ids whose
current pair differs (updated, created, or deleted since). That catches every
write, whoever made it and whatever timestamps its document carries -- unlike a
``last_seen`` cut-off, which a late dead-letter replay or a cached arXiv answer
(both written now, stamped earlier) would slip under.

How it reads the pairs: a refresh (so every acknowledged write is searchable),
then a scan (``indexing.scan``) over ids only (``_source: false``, ``seq_no_primary_term: true``,
sorted by ``_doc``), rather than a range query on ``_seq_no``, which orders writes
within one shard only. A write still in flight during a scan shows up in a later one,
since its pair differs from the one recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.scan import scan

Version = tuple[int, int]  # (_seq_no, _primary_term)
SCAN_PAGE = 5000


def hit_version(hit: dict[str, Any]) -> Version:
    """The ``(_seq_no, _primary_term)`` of a search or mget hit."""
    return int(hit.get("_seq_no", -1)), int(hit.get("_primary_term", 0))


class ChangeFeed:
    """Ids of ``index`` whose version differs from the one recorded for them."""

    def __init__(self, client: OpenSearch, index: str):
        self.client = client
        self.index = index
        self.copied: dict[str, Version] = {}  # id -> version we copied

    def start(self) -> int:
        """Record every document's current version; returns how many there are.

        Call just before a server-side copy: the copy takes each document at this
        version or a later one, and a later one shows up in ``changed()``.
        """
        self.copied = dict(self.scan())
        return len(self.copied)

    def record(self, doc_id: str, version: Version | None) -> None:
        """We copied ``doc_id`` at ``version`` (None: it no longer exists)."""
        if version is None:
            self.copied.pop(doc_id, None)
        else:
            self.copied[doc_id] = version

    def changed(self) -> list[str]:
        """Ids created, updated or deleted since we recorded them (sorted)."""
        current = dict(self.scan())
        differ = {doc_id for doc_id, version in current.items()
                  if self.copied.get(doc_id) != version}
        differ.update(doc_id for doc_id in self.copied if doc_id not in current)
        return sorted(differ)

    def scan(self, shard: int | None = None) -> Iterator[tuple[str, Version]]:
        """Every (id, version) of the index, or of one of its shards, after a refresh."""
        with translate_errors(f"refresh {self.index}"):
            self.client.indices.refresh(index=self.index)
        body = {"_source": False, "seq_no_primary_term": True, "query": {"match_all": {}}}
        for hit in scan(self.client, self.index, body, page_size=SCAN_PAGE,
                        preference=None if shard is None else f"_shards:{shard}"):
            yield hit["_id"], hit_version(hit)
