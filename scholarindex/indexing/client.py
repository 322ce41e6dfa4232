"""Build the opensearch-py client and translate its errors, in one place.

Every call the indexer makes goes through ``translate_errors`` (requests) or
``classify_item`` (per-document results of a bulk request), so the rest of the
package deals only with ``scholarindex.indexing.errors``.

The client reads and writes JSON with orjson (``_OrjsonSerializer``): every bulk
body and every document read passes through it, and the standard library's
``json`` was a large part of the writer's CPU. Request bodies are gzipped (level 1)
for a cluster on another machine, and sent as they are to one on this machine
(``compresses``), where compressing costs CPU at both ends and saves no network.
"""

from __future__ import annotations

import gzip
import ipaddress
import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import orjson
from opensearchpy import JSONSerializer, OpenSearch, Urllib3HttpConnection
from opensearchpy import exceptions as os_exc

from scholarindex.core.retry import is_retryable_status, parse_retry_after
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.errors import IndexUnavailable


class _Connection(Urllib3HttpConnection):
    """opensearch-py's connection with two additions, made through its public methods.

    * Request bodies gzipped at level 1 when ``compress_bodies`` (opensearch-py's own
      ``http_compress`` uses level 9: three times the CPU, for JSON that shrinks about
      7x at 1 and 10x at 9, more than any network a crawl writes over needs).
    * An error answer's ``Retry-After`` kept on the error: opensearch-py raises
      ``TransportError`` from the status and body alone, after reading the headers
      (``get_response_headers``) on the same thread; they are kept per thread and
      attached as ``retry_after`` (seconds, or None) to the exception, which
      ``translate_errors`` turns into ``IndexUnavailable``.
    """

    def __init__(self, *args: Any, compress_bodies: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compress_bodies = compress_bodies
        self._last = threading.local()

    def get_response_headers(self, response: Any) -> Any:
        headers = super().get_response_headers(response)
        self._last.headers = headers
        return headers

    def perform_request(self, method: str, url: str, params: Mapping[str, Any] | None = None,
                        body: bytes | None = None, timeout: float | None = None,
                        ignore: Collection[int] = (), headers: Mapping[str, str] | None = None,
                        ) -> Any:
        if self.compress_bodies and body:
            raw = body.encode("utf-8") if isinstance(body, str) else body
            body = gzip.compress(raw, compresslevel=1)
            headers = {**(headers or {}), "content-encoding": "gzip"}
        self._last.headers = None
        try:
            return super().perform_request(method, url, params, body, timeout, ignore, headers)
        except os_exc.TransportError as exc:
            answered = getattr(self._last, "headers", None) or {}
            # opensearch-py's errors have no field for it; RetryPolicy reads it.
            exc.retry_after = parse_retry_after(answered.get("retry-after"))  # type: ignore[attr-defined]
            raise


class _OrjsonSerializer(JSONSerializer):
    """opensearch-py's JSON serializer, on orjson: the same JSON, several times faster.

    ``dumps`` returns ``str``, as the bulk helper measures and joins strings; what
    orjson cannot encode itself goes to opensearch-py's ``default`` (datetimes as
    ``isoformat``, as before).
    """

    def loads(self, s: str) -> Any:
        try:
            return orjson.loads(s)
        except orjson.JSONDecodeError as exc:
            raise os_exc.SerializationError(s, exc) from exc

    def dumps(self, data: Any) -> Any:
        if isinstance(data, str | bytes):  # already serialised
            return data
        return dumps_json(data).decode()


_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
_JSON_DEFAULT = JSONSerializer().default


def dumps_json(data: Any) -> bytes:
    """``data`` as the client sends it: UTF-8 JSON, compact, keys in their order.

    For bodies built by hand (``scholarindex.indexing.bulkbody``), byte for byte what the client's
    serializer writes; what it cannot encode raises opensearch-py's ``SerializationError``.
    """
    try:
        return orjson.dumps(data, default=_JSON_DEFAULT, option=_JSON_OPTIONS)
    except TypeError as exc:  # orjson.JSONEncodeError is one
        raise os_exc.SerializationError(data, exc) from exc


POOL_SIZE = 4  # connections kept open per node


def build_client(config: OpenSearchConfig) -> OpenSearch:
    """A client with a request timeout, over every node ``config.url`` names.

    Retries belong to the writer (tenacity, with jitter and a budget), so the
    transport retries only where another node can answer at once: a connection refused
    or reset by one node is tried on the next (at most once per other node), and the
    node sits out a while. With several nodes a timeout counts as such a failure too:
    a node that hangs (cut off by the network, stuck in GC) otherwise costs every
    request sent its way the whole timeout, one in N of them. Re-sending a write that
    timed out is safe (merges are idempotent, writes conditional). Errors a node
    answers with come to us.
    """
    urls = config.urls
    kwargs: dict[str, Any] = {
        "hosts": urls,
        "timeout": config.timeout,
        "max_retries": len(urls) - 1,
        "retry_on_status": (),
        "retry_on_timeout": len(urls) > 1,
        "verify_certs": config.verify_certs,
        "ssl_show_warn": config.verify_certs,
        "compress_bodies": any(compresses(url) for url in urls),
        "connection_class": _Connection,
        # Scans and bulk writes run a few requests side by side: each keeps its
        # connection rather than opening a new one.
        "pool_maxsize": POOL_SIZE,
        "serializer": _OrjsonSerializer(),
    }
    if config.user:
        kwargs["http_auth"] = (config.user, config.password)
    if config.ca_certs:
        kwargs["ca_certs"] = config.ca_certs
    return OpenSearch(**kwargs)


def compresses(url: str) -> bool:
    """True unless the cluster at ``url`` is on this machine (see the module doc)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        return True


def quiet_transport_logs() -> None:
    """Silence opensearch-py's per-request logging (call from entry points, not imports).

    It logs every request at INFO and every failure with a traceback at WARNING;
    the indexer logs each failure once, with its cause, where it handles it.
    """
    logging.getLogger("opensearch").setLevel(logging.ERROR)


def describe(exc: BaseException) -> str:
    """A one-line cause for logs and dead-letter reasons, never with credentials."""
    if isinstance(exc, os_exc.ConnectionTimeout):
        return f"timed out ({_root_cause(exc)})"
    if isinstance(exc, os_exc.SSLError):
        return f"TLS error ({_root_cause(exc)})"
    if isinstance(exc, os_exc.ConnectionError):
        return f"connection failed ({_root_cause(exc)})"
    if isinstance(exc, os_exc.AuthenticationException):
        return "authentication failed (HTTP 401): check OPENSEARCH_USER/OPENSEARCH_PASSWORD"
    if isinstance(exc, os_exc.AuthorizationException) and not is_write_block(exc):
        return "not authorised (HTTP 403): the user lacks index permissions"
    if isinstance(exc, os_exc.TransportError):
        detail = _reason(exc.info) if isinstance(exc.info, Mapping) else str(exc.error)
        return with_block_hint(f"HTTP {exc.status_code} {detail}")
    return f"{type(exc).__name__}: {exc}"


# What a disk past its flood-stage watermark makes OpenSearch answer a write with (429 in
# OpenSearch 2.x, 403 in older releases): the index turned read-only-allow-delete.
FLOOD_STAGE_MARKERS = ("read-only-allow-delete", "read_only_allow_delete",
                       "flood-stage watermark", "flood stage")
FLOOD_STAGE_HINT = (
    "a node's disk is past its flood-stage watermark "
    "(cluster.routing.allocation.disk.watermark.flood_stage): OpenSearch made the index "
    "read-only (index.blocks.read_only_allow_delete); free disk space there or add a node. "
    "OpenSearch lifts the block by itself once usage falls below the high watermark, and "
    "writing resumes then")


def is_flood_stage_block(reason: str) -> bool:
    """Whether an error's text is the flood-stage watermark's read-only block."""
    text = reason.lower()
    return "cluster_block_exception" in text and any(m in text for m in FLOOD_STAGE_MARKERS)


def is_disk_block(reason: str) -> bool:
    """A refusal the flood stage causes: the indices' read-only block, or the cluster's
    create-index block that comes with it (and that OpenSearch's disk monitor keeps for a
    minute or more after the disk is back under its watermarks)."""
    return is_flood_stage_block(reason) or "index_create_block_exception" in reason


def with_block_hint(reason: str) -> str:
    """``reason``, with what to do about it when it is the flood-stage block."""
    if is_flood_stage_block(reason) and FLOOD_STAGE_HINT not in reason:
        return f"{reason} -- {FLOOD_STAGE_HINT}"
    return reason


def is_write_block(exc: os_exc.TransportError) -> bool:
    """A 403 or 429 that is an index block (a reindex's freeze, disk flood stage), not a
    refusal of our rights: it passes."""
    info = exc.info if isinstance(exc.info, Mapping) else {}
    # index_create_block_exception: the cluster's create-index block, set at flood stage too.
    return any(kind in _reason(info) for kind in ("cluster_block_exception",
                                                  "index_create_block_exception"))


# A query past the engine's limit of clauses (``indices.query.bool.max_clause_count``).
_QUERY_TOO_LARGE = ("too_many_nested_clauses", "too_many_clauses")


@contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """Run an opensearch-py call; raise ``IndexUnavailable`` if the request failed.

    ``what`` names the call for the message ("bulk", "mget works", ...).
    """
    try:
        yield
    except os_exc.AuthorizationException as exc:
        # A write block answers 403 on older releases: waiting lifts it; rights it is not.
        raise IndexUnavailable(f"{what}: {describe(exc)}", retryable=is_write_block(exc),
                               status=exc.status_code) from exc
    except (os_exc.AuthenticationException, os_exc.SSLError) as exc:
        raise IndexUnavailable(f"{what}: {describe(exc)}", retryable=False,
                               status=exc.status_code) from exc
    except os_exc.ConnectionError as exc:  # includes timeouts
        raise IndexUnavailable(f"{what}: {describe(exc)}", retryable=True,
                               status="N/A") from exc
    except os_exc.SerializationError as exc:  # a garbled answer, e.g. from a proxy
        raise IndexUnavailable(f"{what}: unreadable response ({exc})", retryable=True) from exc
    except os_exc.TransportError as exc:
        # A status that is not a number here is a failure opensearch-py could not place.
        retryable = isinstance(exc.status_code, int) and is_retryable_status(exc.status_code)
        described = describe(exc)
        # Answered 500, but the query is what is wrong: the same query fails every time.
        retryable = retryable and not any(kind in described for kind in _QUERY_TOO_LARGE)
        raise IndexUnavailable(f"{what}: {described}", retryable=retryable,
                               status=exc.status_code,
                               retry_after=getattr(exc, "retry_after", None)) from exc


# A document's error in an mget answer that no retry fixes; any other (the node holding
# the shard died, its replica is being promoted, a queue is full) passes in seconds.
_PERMANENT_READ_ERRORS = ("index_not_found_exception", "illegal_argument_exception",
                          "security_exception", "action_request_validation_exception")


def read_error(what: str, error: Any) -> IndexUnavailable:
    """The exception for one document's ``error`` in an mget answer: retryable unless it
    is one no retry fixes (a missing index, a bad request, no rights)."""
    reason = _reason({"error": error}) if isinstance(error, Mapping) else str(error)
    permanent = any(kind in reason for kind in _PERMANENT_READ_ERRORS)
    return IndexUnavailable(f"{what}: {reason}", retryable=not permanent)


def mget_hits(client: OpenSearch, wanted: Sequence[tuple[str, str]], part: int, what: str,
              source: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The hit of each ``(index, id)`` in ``wanted``, in order (realtime: the latest write,
    refreshed or not), read in requests of ``part`` documents; a document's error raises
    (``read_error``), a failed request too (``translate_errors``). ``source``: the fields
    read (all by default)."""
    fields = {} if source is None else {"_source": source}
    for start in range(0, len(wanted), part):
        chunk = wanted[start:start + part]
        body = {"docs": [{"_index": index, "_id": doc_id, **fields} for index, doc_id in chunk]}
        with translate_errors(f"{what} {chunk[0][0]}"):
            hits = client.mget(body=body)["docs"]
        for (index, _), hit in zip(chunk, hits, strict=True):
            if "error" in hit:
                raise read_error(f"{what} {index}", hit["error"])
            yield hit


@dataclass(frozen=True)
class ItemResult:
    """What one bulk item's response means for the writer."""

    outcome: Literal["ok", "conflict", "retry", "rejected"]
    status: int | str
    reason: str = ""
    seq_no: int | None = None
    primary_term: int | None = None


def classify_item(info: Mapping[str, Any]) -> ItemResult:
    """Classify one bulk response item (the dict under its op type)."""
    status = info.get("status", 500)
    if isinstance(status, int) and 200 <= status < 300:
        return ItemResult("ok", status, seq_no=info.get("_seq_no"),
                          primary_term=info.get("_primary_term"))
    reason = with_block_hint(_reason(info.get("error")))
    if status in (403, 429) and "cluster_block_exception" in reason:
        # A write-blocked index (a reindex's final catch-up, or disk flood stage): it passes.
        return ItemResult("retry", status, f"HTTP {status}: {reason}")
    if status == 409:
        return ItemResult("conflict", status, f"version conflict: {reason}")
    if is_retryable_status(status):
        return ItemResult("retry", status, f"HTTP {status}: {reason}")
    return ItemResult("rejected", status, f"HTTP {status}: {reason}")


def _reason(error: Any) -> str:
    """The ``type: reason`` of an OpenSearch error body, whatever shape it has."""
    if isinstance(error, Mapping):
        inner = error.get("error", error)
        if isinstance(inner, Mapping):
            kind = inner.get("type", "error")
            reason = inner.get("reason", "")
            caused = inner.get("caused_by")
            if isinstance(caused, Mapping) and caused.get("reason"):
                reason = f"{reason} (caused by {caused.get('type')}: {caused.get('reason')})"
            return f"{kind}: {reason}"
        return str(inner)
    return str(error)


def _root_cause(exc: os_exc.TransportError) -> str:
    """The innermost error of a connection failure, e.g. ``Connection refused``."""
    cause: BaseException | None = exc.info if isinstance(exc.info, BaseException) else None
    seen = 0
    while cause is not None and seen < 10:
        nxt = cause.__cause__ or cause.__context__
        if nxt is None:
            break
        cause, seen = nxt, seen + 1
    text = str(cause) if cause is not None else str(exc.error)
    return text[:300]
