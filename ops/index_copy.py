"""Moving documents from the live index into a new one, three ways.

- ``copy_server_side``: ``_reindex`` in slices (``source.slice``), each waited for
  (osmem has no tasks API to poll); one slice per ``batch_size`` documents, so the
  progress bar moves and, on osmem, which serves one request at a time, searches
  get answered between slices.
- ``copy_rebuilt``: every document read (scroll) and re-derived by the project's
  own transform (``ops.rebuild``), written with bulk requests.
- ``copy_ids``: the documents that changed since they were copied, copied again
  as they are now (or rebuilt), and deleted where they are gone. Only the reindex
  writes to the new index before the switch, so an overwrite is exact: it carries
  removals (a work unlisted or deleted) as faithfully as additions.

Each records in the ``ChangeFeed`` which version of a document it copied.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from opensearchpy import OpenSearch, helpers
from tenacity import RetryCallState, Retrying, retry_if_exception

from core.retry import RetryPolicy
from indexing.client import translate_errors
from indexing.errors import IndexingError, IndexUnavailable
from ops.changefeed import ChangeFeed, hit_version, scroll
from ops.rebuild import rebuild
from ops.settings import LONG_REQUEST_TIMEOUT

logger = logging.getLogger(__name__)

Advance = Callable[[int], None]
MAX_SLICES = 1024  # OpenSearch's default index.max_slices_per_scroll
_MGET_CHUNK = 500
# A bulk chunk is idempotent (plain index ops), so retrying is safe: 4 tries, 0.5 s, 1 s, 2 s apart.
_BULK_RETRY = RetryPolicy(attempts=4, initial_wait=0.5, max_wait=2.0, jitter=0.0)


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
    body = {"size": batch_size, "seq_no_primary_term": True, "sort": ["_doc"],
            "query": {"match_all": {}}}
    written = 0
    batch: list[dict[str, Any]] = []
    for hit in scroll(client, source, body, request_timeout=LONG_REQUEST_TIMEOUT):
        batch.append(hit)
        if len(batch) >= batch_size:
            written += _write_rebuilt(client, name, dest, feed, batch)
            advance(len(batch))
            batch = []
    if batch:
        written += _write_rebuilt(client, name, dest, feed, batch)
        advance(len(batch))
    return written


def _write_rebuilt(client: OpenSearch, name: str, dest: str, feed: ChangeFeed,
                   hits: Sequence[dict[str, Any]]) -> int:
    actions = [{"_op_type": "index", "_index": dest, "_id": hit["_id"],
                "_source": rebuild(name, hit["_id"], hit["_source"])} for hit in hits]
    bulk_write(client, actions, f"write rebuilt documents to {dest}")
    for hit in hits:
        feed.record(hit["_id"], hit_version(hit))
    return len(actions)


def copy_ids(client: OpenSearch, name: str, source: str, dest: str, feed: ChangeFeed,
             ids: Iterable[str], rebuilt: bool) -> int:
    """Copy these documents again as they are now (deleted ones: deleted). Before the switch."""
    copied = 0
    for chunk in _chunks(list(ids), _MGET_CHUNK):
        docs = _mget(client, source, chunk)
        actions: list[dict[str, Any]] = []
        for doc_id in chunk:
            hit = docs.get(doc_id)
            if hit is None:
                actions.append({"_op_type": "delete", "_index": dest, "_id": doc_id})
                continue
            body = rebuild(name, doc_id, hit["_source"]) if rebuilt else hit["_source"]
            actions.append({"_op_type": "index", "_index": dest, "_id": doc_id, "_source": body})
        bulk_write(client, actions, f"catch up {dest}")
        for doc_id in chunk:
            hit = docs.get(doc_id)
            feed.record(doc_id, hit_version(hit) if hit is not None else None)
        copied += len(chunk)
    return copied


def bulk_write(client: OpenSearch, actions: list[dict[str, Any]], what: str) -> None:
    """Send one bulk request; retry transient failures; ``CopyFailed`` if a document is refused."""
    def log_retry(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        logger.warning("%s failed (attempt %d), retrying: %s", what, state.attempt_number, exc)

    retrying = Retrying(stop=_BULK_RETRY.stop(), wait=_BULK_RETRY.wait(),
                        retry=retry_if_exception(_transient), before_sleep=log_retry,
                        reraise=True)
    results = retrying(_send_bulk, client, actions, what)
    for ok, item in results:
        info = next(iter(item.values()))
        if not ok and not (info.get("status") == 404 and "delete" in item):
            raise CopyFailed(f"{what}: document {info.get('_id')} refused: "
                             f"HTTP {info.get('status')} {_failure_reason(info)}")


def _send_bulk(client: OpenSearch, actions: list[dict[str, Any]], what: str
               ) -> list[tuple[bool, dict[str, Any]]]:
    with translate_errors(what):
        return list(helpers.streaming_bulk(
            client, actions, chunk_size=max(len(actions), 1), max_chunk_bytes=2**62,
            raise_on_error=False, raise_on_exception=True, max_retries=0,
            request_timeout=LONG_REQUEST_TIMEOUT))


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, IndexUnavailable) and exc.retryable


def _mget(client: OpenSearch, index: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The found documents among ``ids`` (realtime: the latest write, refreshed or not)."""
    with translate_errors(f"mget {index}"):
        answer = client.mget(index=index, body={"ids": ids})
    found = {}
    for hit in answer["docs"]:
        if "error" in hit:
            raise IndexUnavailable(f"mget {index}: {hit['error']}", retryable=False)
        if hit.get("found"):
            found[hit["_id"]] = hit
    return found


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _failure_reason(failure: dict[str, Any]) -> str:
    cause = failure.get("cause") or failure.get("error") or failure
    if isinstance(cause, dict):
        return f"{cause.get('type', 'error')}: {cause.get('reason', '')}"[:300]
    return str(cause)[:300]
