"""A document store that speaks the OpenSearch API the indexer uses, and nothing more.

    python -m bench.sink          # prints {"url": ...}; stops when stdin closes

Why it exists: to measure the crawl's side of indexing alone. ``bench.run`` crawls
the bench site into a real OpenSearch node and again into this store, and the
per-item baseline writes into both: the gap is what the engine costs, on the same
machine's two cores. It is a separate process, like a cluster on other machines,
that keeps each document's JSON as sent and answers the calls the crawl makes with
OpenSearch's semantics:

* ``GET /``; ``GET /_alias/<a>``, ``PUT /<index>``, ``POST /_aliases`` (ensure_aliases);
  ``HEAD /<index>`` (ensure_plain_index, for the tombstones); ``GET /_cluster/health/<index>``
  (a new index is used once its primaries are active: here at once);
* ``POST /_mget`` (realtime, with ``_seq_no``/``_primary_term``);
* ``POST /_bulk`` with ``create`` (409 if it exists), ``index`` and ``delete`` with
  ``if_seq_no``/``if_primary_term`` (409 on a stale one), gzip request bodies;
* ``PUT /<index>/_doc/<id>`` (one document a request, for the per-item baseline);
* ``/<index>/_refresh``, ``/<index>/_count``; ``GET /_sink/stats`` (requests per
  endpoint, documents, listings in the works documents, for the runner's checks).

It does no analysis and no search: what it measures is the crawl's side of
indexing (merging, serialising, compressing, HTTP), not a cluster's.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sys
import urllib.request
from collections import Counter
from typing import Any
from urllib.parse import unquote, urlsplit

from bench.child_server import ChildServer

_REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}
Doc = tuple[int, bytes]  # _seq_no, _source as sent


class Store:
    """Indices of raw JSON documents, aliases, and request counts."""

    def __init__(self) -> None:
        self.indices: dict[str, dict[str, Doc]] = {}
        self.mappings: dict[str, Any] = {}
        self.aliases: dict[str, str] = {}
        self.seq: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.bulk_items: Counter[str] = Counter()

    def resolve(self, name: str) -> list[str]:
        if name in self.aliases:
            return [self.aliases[name]]
        if name.endswith("*"):
            return [i for i in self.indices if i.startswith(name[:-1])]
        return [name] if name in self.indices else []

    # --- endpoints ---------------------------------------------------------------

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        parts = [unquote(p) for p in urlsplit(path).path.split("/") if p]
        if not parts:
            self.requests["info"] += 1
            return 200, _json({"name": "bench-sink", "cluster_name": "bench",
                               "version": {"number": "2.19.0", "distribution": "opensearch"},
                               "tagline": "The OpenSearch Project: https://opensearch.org/"})
        if parts[0] == "_sink":
            return 200, _json(self.stats())
        if parts[-1] == "_bulk":
            self.requests["bulk"] += 1
            return self.bulk(body)
        if parts[-1] == "_mget":
            self.requests["mget"] += 1
            return self.mget(json.loads(body), parts[0] if len(parts) == 2 else None)
        if len(parts) == 3 and parts[1] == "_doc" and method in ("PUT", "POST"):
            self.requests["doc"] += 1  # one document per request: the per-item baseline
            query = dict(p.split("=", 1) for p in urlsplit(path).query.split("&") if "=" in p)
            meta: dict[str, Any] = {"_index": parts[0], "_id": parts[2]}
            if "if_seq_no" in query:
                meta["if_seq_no"] = int(query["if_seq_no"])
            status, result = self._one("index", meta, body)
            return status, _json(result)
        self.requests["other"] += 1
        if parts[0] == "_alias" and len(parts) == 2:
            found: dict[str, Any] | None = {self.aliases[parts[1]]: {"aliases": {parts[1]: {}}}} \
                if parts[1] in self.aliases else None
            return (200, _json(found)) if found else (404, _json(
                {"error": f"alias [{parts[1]}] missing", "status": 404}))
        if parts[:2] == ["_cluster", "health"]:
            names = parts[2].split(",") if len(parts) > 2 else list(self.indices)
            shards = {"number_of_shards": 1, "active_primary_shards": 1, "status": "green"}
            return 200, _json({"status": "green", "timed_out": False, "indices": {
                name: shards for name in names if name in self.indices}})
        if parts[0] == "_aliases":
            for action in json.loads(body).get("actions", []):
                for kind, spec in action.items():
                    if kind == "add":
                        self.aliases[spec["alias"]] = spec["index"]
                    elif kind == "remove":
                        self.aliases.pop(spec["alias"], None)
            return 200, _json({"acknowledged": True})
        if len(parts) == 1 and method == "HEAD":  # indices.exists (the tombstones index)
            return (200 if parts[0] in self.indices else 404), b""
        if len(parts) == 1 and method == "PUT":
            if parts[0] in self.indices:
                return 400, _error("resource_already_exists_exception",
                                   f"index [{parts[0]}] already exists", 400)
            self.indices[parts[0]] = {}
            self.mappings[parts[0]] = json.loads(body or b"{}").get("mappings", {})
            return 200, _json({"acknowledged": True, "index": parts[0]})
        if parts[-1] == "_mapping":
            return 200, _json({i: {"mappings": self.mappings.get(i, {})}
                               for i in self.resolve(parts[0])})
        if parts[:2] == ["_cluster", "health"]:  # a new index's primaries: started at once
            names = self.resolve(parts[2]) if len(parts) > 2 else list(self.indices)
            return 200, _json({"status": "green", "indices": {
                name: {"number_of_shards": 1, "active_primary_shards": 1} for name in names}})
        if parts[-1] == "_refresh":
            return 200, _json({"_shards": {"total": 1, "successful": 1, "failed": 0}})
        if parts[-1] == "_count":
            count = sum(len(self.indices[i]) for i in self.resolve(parts[0]))
            return 200, _json({"count": count})
        return 400, _error("illegal_argument_exception", f"bench sink: no {method} {path}", 400)

    def mget(self, body: dict[str, Any], default_index: str | None) -> tuple[int, bytes]:
        out = []
        for spec in body.get("docs", []):
            names = self.resolve(spec.get("_index") or default_index or "")
            index, doc_id = (names[0] if names else ""), str(spec["_id"])
            doc = self.indices.get(index, {}).get(doc_id)
            head = {"_index": index, "_id": doc_id, "found": doc is not None}
            if doc is None:
                out.append(_json(head))
            else:
                head.update(_seq_no=doc[0], _primary_term=1, _version=doc[0] + 1)
                out.append(_json(head)[:-1] + b', "_source": ' + doc[1] + b"}")
        return 200, b'{"docs": [' + b", ".join(out) + b"]}"

    def bulk(self, body: bytes) -> tuple[int, bytes]:
        lines = body.split(b"\n")
        items: list[bytes] = []
        errors = False
        at = 0
        while at < len(lines):
            if not lines[at].strip():
                at += 1
                continue
            action = json.loads(lines[at])
            (op, meta), = action.items()
            source = lines[at + 1] if op in ("create", "index") else b""
            at += 2 if op in ("create", "index") else 1
            status, result = self._one(op, meta, source)
            self.bulk_items[op] += 1
            errors |= status >= 300
            items.append(_json({op: result}))
        return 200, b'{"took": 1, "errors": ' + (b"true" if errors else b"false") + \
            b', "items": [' + b", ".join(items) + b"]}"

    def _one(self, op: str, meta: dict[str, Any], source: bytes) -> tuple[int, dict[str, Any]]:
        names = self.resolve(meta["_index"])
        if not names:
            return 404, {"status": 404, "error": {"type": "index_not_found_exception",
                                                  "reason": f"no such index [{meta['_index']}]"}}
        index, doc_id = names[0], str(meta["_id"])
        docs = self.indices[index]
        current = docs.get(doc_id)
        base = {"_index": index, "_id": doc_id}
        if op == "create" and current is not None:
            return 409, {**base, "status": 409, "error": {
                "type": "version_conflict_engine_exception",
                "reason": f"[{doc_id}]: version conflict, document already exists"}}
        if "if_seq_no" in meta and (current is None or current[0] != meta["if_seq_no"]):
            return 409, {**base, "status": 409, "error": {
                "type": "version_conflict_engine_exception",
                "reason": f"[{doc_id}]: version conflict, required seqNo [{meta['if_seq_no']}]"}}
        seq = self.seq[index]
        self.seq[index] += 1
        if op == "delete":
            if current is None:
                return 404, {**base, "status": 404, "result": "not_found"}
            del docs[doc_id]
            return 200, {**base, "status": 200, "result": "deleted", "_seq_no": seq,
                         "_primary_term": 1}
        docs[doc_id] = (seq, source)
        return (201 if current is None else 200), {
            **base, "status": 201 if current is None else 200,
            "result": "created" if current is None else "updated", "_seq_no": seq,
            "_primary_term": 1, "_version": seq + 1}

    def stats(self) -> dict[str, Any]:
        """Request counts, and per index its documents (and listings, for works)."""
        indices: dict[str, Any] = {}
        for name, docs in self.indices.items():
            entry: dict[str, Any] = {"docs": len(docs)}
            if "works" in name:
                parsed = [json.loads(source) for _, source in docs.values()]
                entry["listings"] = sum(len(d.get("listings") or ()) for d in parsed)
                entry["with_arxiv_id"] = sum(bool(d.get("arxiv_id")) for d in parsed)
            indices[name] = entry
        return {"requests": dict(self.requests), "bulk_items": dict(self.bulk_items),
                "indices": indices}


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _error(kind: str, reason: str, status: int) -> bytes:
    return _json({"error": {"type": kind, "reason": reason, "root_cause": [
        {"type": kind, "reason": reason}]}, "status": status})


class _Protocol(asyncio.Protocol):
    """HTTP/1.1 with Content-Length bodies (gzip or not), keep-alive."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in
                       (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length", "0") or 0)
            if len(self.buffer) < end + 4 + length:
                return  # the rest of the body is still on its way
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            if headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            method, path = lines[0].split(" ")[:2]
            try:
                status, answer = self.store.handle(method, path, body)
            except (ValueError, KeyError) as exc:  # a request this sink cannot read
                status, answer = 400, _error("parse_exception", repr(exc), 400)
            assert self.transport is not None
            self.transport.write(
                f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
                f"content-type: application/json; charset=UTF-8\r\n"
                f"content-length: {len(answer)}\r\n\r\n".encode("latin-1") + answer)


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    store = Store()
    server = await loop.create_server(lambda: _Protocol(store), "127.0.0.1", 0, backlog=128)
    print(json.dumps({"url": f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"}),
          flush=True)
    done = loop.create_future()

    def on_stdin() -> None:
        if not os.read(sys.stdin.fileno(), 4096) and not done.done():
            done.set_result(None)

    loop.add_reader(sys.stdin.fileno(), on_stdin)
    async with server:
        await done


class SinkServer(ChildServer):
    """``python -m bench.sink`` as a child process; ``url`` once it listens."""

    def __init__(self) -> None:
        super().__init__("bench.sink")

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_sink/stats", timeout=300) as answer:
            return json.loads(answer.read())


if __name__ == "__main__":
    asyncio.run(_serve())
