"""Moving documents from the live index into a new one, three ways.

- ``copy_server_side``: ``_reindex`` in slices (``source.slice``), each waited for
  (``wait_for_completion``, bounded by the request timeout); one slice per
  ``batch_size`` documents, so the progress bar moves and a slice that fails costs
  only itself.
- ``copy_rebuilt``: every document read (``scholarindex.indexing.scan``) and re-derived by the
  project's own transform (``scholarindex.ops.rebuild``), written with bulk requests.
- ``copy_ids``: the documents that changed since they were copied, copied again
  as they are now (or rebuilt), and deleted where they are gone. Only the reindex
  writes to the new index before the switch, so an overwrite is exact: it carries
  removals (a work unlisted or deleted) as faithfully as additions.

Each records in the ``ChangeFeed`` which version of a document it copied.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

from opensearchpy import OpenSearch, helpers

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import mget_hits, translate_errors
from scholarindex.indexing.errors import IndexingError, IndexUnavailable
from scholarindex.indexing.scan import scan
from scholarindex.ops.changefeed import ChangeFeed, Version, hit_version
from scholarindex.ops.rebuild import rebuild
from scholarindex.ops.settings import LONG_REQUEST_TIMEOUT

logger = logging.getLogger(__name__)

Advance = Callable[[int], None]
MAX_SLICES = 1024  # OpenSearch's default index.max_slices_per_scroll
_MGET_CHUNK = 500
# A bulk request is idempotent (plain index ops), so retrying is safe: 4 tries,
# 0.5 s, 1 s, 2 s apart, or as long as a 429/503's Retry-After asks, up to 30 s.
_BULK_RETRY = RetryPolicy(attempts=4, initial_wait=0.5, max_wait=2.0, jitter=0.0,
                          retry_after_max=30.0)
MAX_REQUEST_BYTES = 20 * 1024 * 1024  # well below OpenSearch's http.max_content_length


class CopyFailed(IndexingError):
    """The cluster refused documents of the copy (mapping errors, a failed slice)."""


def copy_server_side(client: OpenSearch, source: str, dest: str, total: int,
                     batch_size: int, advance: Advance) -> int:
    """Copy every document with ``_reindex``; returns how many were written."""
    slices = max(1, min(MAX_SLICES, math.ceil(total / max(batch_size, 1))))
    written = 0
    for number in range(slices):
        body: dict[str, Any] = {"source": {"index": source}, "dest": {"index": dest}}
        if slices > 1:
            body["source"]["slice"] = {"id": number, "max": slices}
        with translate_errors(f"copy {source} to {dest} (slice {number + 1}/{slices})"):
            answer = client.reindex(body=body, wait_for_completion=True,
                                    request_timeout=LONG_REQUEST_TIMEOUT)
        failures = answer.get("failures") or []
        if failures:
            raise CopyFailed(f"copy {source} to {dest}: {len(failures)} document(s) refused, "
                             f"first: {_failure_reason(failures[0])}")
        if answer.get("timed_out"):
            raise CopyFailed(f"copy {source} to {dest}: slice {number + 1} timed out")
        done = int(answer.get("created", 0)) + int(answer.get("updated", 0))
        written += done
        advance(done)
    return written


def copy_rebuilt(client: OpenSearch, name: str, source: str, dest: str, feed: ChangeFeed,
                 batch_size: int, advance: Advance) -> int:
    """Re-derive every document of ``source`` into ``dest``; returns how many."""
    copied: dict[str, Version] = {}  # read, not yet written

    def actions() -> Iterator[dict[str, Any]]:
        body = {"seq_no_primary_term": True, "query": {"match_all": {}}}
        for hit in scan(client, source, body, page_size=batch_size,
                        request_timeout=LONG_REQUEST_TIMEOUT):
            copied[hit["_id"]] = hit_version(hit)
            yield {"_op_type": "index", "_index": dest, "_id": hit["_id"],
                   "_source": rebuild(name, hit["_id"], hit["_source"])}

    return _write(client, actions(), f"write rebuilt documents to {dest}", batch_size,
                  feed, copied, advance)


def copy_ids(client: OpenSearch, name: str, source: str, dest: str, feed: ChangeFeed,
             ids: Iterable[str], rebuilt: bool) -> int:
    """Copy these documents again as they are now (deleted ones: deleted). Before the switch."""
    copied: dict[str, Version | None] = {}  # read (None: gone), not yet written

    def actions() -> Iterator[dict[str, Any]]:
        for chunk in _chunks(list(ids), _MGET_CHUNK):
            docs = _mget(client, source, chunk)
            for doc_id in chunk:
                hit = docs.get(doc_id)
                if hit is None:
                    copied[doc_id] = None
                    yield {"_op_type": "delete", "_index": dest, "_id": doc_id}
                    continue
                copied[doc_id] = hit_version(hit)
                body = rebuild(name, doc_id, hit["_source"]) if rebuilt else hit["_source"]
                yield {"_op_type": "index", "_index": dest, "_id": doc_id, "_source": body}

    return _write(client, actions(), f"catch up {dest}", _MGET_CHUNK, feed, copied)


def _write(client: OpenSearch, actions: Iterable[dict[str, Any]], what: str, chunk_size: int,
           feed: ChangeFeed, copied: dict[str, Any], advance: Advance = lambda n: None) -> int:
    """Write the actions; record in the feed the version each document was copied at."""
    written = unreported = 0
    for action in bulk_write(client, actions, what, chunk_size):
        feed.record(action["_id"], copied.pop(action["_id"]))
        written += 1
        unreported += 1
        if unreported >= chunk_size:  # the progress bar moves a request at a time
            advance(unreported)
            unreported = 0
    advance(unreported)
    return written


def bulk_write(client: OpenSearch, actions: Iterable[dict[str, Any]], what: str,
               chunk_size: int) -> Iterator[dict[str, Any]]:
    """Write the actions in bulk requests (``streaming_bulk``); yield each one once written.

    A request that fails on the way (overload, a dropped connection) is sent again,
    up to ``_BULK_RETRY.attempts`` times in a row: its index and delete operations are
    idempotent. ``CopyFailed`` if the cluster refuses a document.
    """
    source = iter(actions)
    unanswered: deque[dict[str, Any]] = deque()  # taken by the helper, no answer yet
    source_failed = False  # reading the documents failed, not a request: nothing to resend

    def taken() -> Iterator[dict[str, Any]]:
        nonlocal source_failed
        try:
            for action in source:
                unanswered.append(action)
                yield action
        except Exception:
            source_failed = True
            raise

    attempt = 1
    while True:
        again = list(unanswered)  # after a failure: the request it was sending
        try:
            with translate_errors(what):
                for ok, item in helpers.streaming_bulk(
                        client, chain(again, taken()), chunk_size=chunk_size,
                        max_chunk_bytes=MAX_REQUEST_BYTES, raise_on_error=False,
                        raise_on_exception=True, max_retries=0,
                        request_timeout=LONG_REQUEST_TIMEOUT):
                    info = next(iter(item.values()))
                    if not ok and not (info.get("status") == 404 and "delete" in item):
                        raise CopyFailed(f"{what}: document {info.get('_id')} refused: "
                                         f"HTTP {info.get('status')} {_failure_reason(info)}")
                    attempt = 1
                    yield unanswered.popleft()
            return
        except IndexUnavailable as exc:
            if source_failed or not exc.retryable or attempt == _BULK_RETRY.attempts:
                raise
            logger.warning("%s failed (attempt %d), retrying: %s", what, attempt, exc)
            time.sleep(_BULK_RETRY.delay_after(attempt, exc.retry_after))
            attempt += 1


def _mget(client: OpenSearch, index: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The found documents among ``ids`` (realtime: the latest write, refreshed or not)."""
    wanted = [(index, doc_id) for doc_id in ids]
    return {hit["_id"]: hit for hit in mget_hits(client, wanted, max(1, len(ids)), "mget")
            if hit.get("found")}


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _failure_reason(failure: dict[str, Any]) -> str:
    cause = failure.get("cause") or failure.get("error") or failure
    if isinstance(cause, dict):
        return f"{cause.get('type', 'error')}: {cause.get('reason', '')}"[:300]
    return str(cause)[:300]
