"""The index client's wire: JSON through orjson, gzip only for a cluster elsewhere."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime

import pytest
from opensearchpy import exceptions as os_exc

from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client, compresses
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.sample_items import CHAO, T1


@pytest.mark.parametrize(("url", "expected"), [
    ("http://127.0.0.1:9200", False),
    ("http://localhost:9200", False),
    ("http://[::1]:9200", False),
    ("https://search.example.org", True),
    ("http://10.0.0.7:9200", True),
])
def test_bodies_are_compressed_only_for_a_cluster_on_another_machine(url: str,
                                                                      expected: bool) -> None:
    assert compresses(url) is expected
    client = build_client(OpenSearchConfig(url=url, verify_certs=True, timeout=5))
    assert all(c.compress_bodies is expected and not c.http_compress
               for c in client.transport.connection_pool.connections)


def test_the_serializer_writes_what_opensearch_py_wrote_and_reads_it_back() -> None:
    serializer = build_client(OpenSearchConfig(url="http://127.0.0.1:9200", verify_certs=True,
                                                 timeout=5)).transport.serializer
    body = {"title": "Cháo Jin", "n": 1, "x": 0.5, "ok": True, "none": None, "ids": ("a", "b"),
            "at": datetime(2026, 11, 22, 12, 0, tzinfo=UTC), 7: "seven"}
    text = serializer.dumps(body)
    assert isinstance(text, str) and "Cháo" in text  # not escaped, as before
    assert serializer.loads(text) == {"title": "Cháo Jin", "n": 1, "x": 0.5, "ok": True,
                                      "none": None, "ids": ["a", "b"],
                                      "at": "2026-11-22T12:00:00+00:00", "7": "seven"}
    assert serializer.dumps("already json") == "already json"
    with pytest.raises(os_exc.SerializationError):
        serializer.loads("{not json")
    with pytest.raises(os_exc.SerializationError):
        serializer.dumps({"what": object()})


def test_a_change_survives_the_pipe_to_the_writer_process() -> None:
    change = change_from_item(CHAO, T1)
    assert pickle.loads(pickle.dumps(change)) == change


def test_a_compressed_body_goes_out_gzipped_at_level_1() -> None:
    import gzip
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[tuple[str | None, bytes]] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            seen.append((self.headers.get("Content-Encoding"),
                         self.rfile.read(int(self.headers["Content-Length"]))))
            answer = json.dumps({"_id": "1", "result": "created"}).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = build_client(OpenSearchConfig(url=f"http://127.0.0.1:{server.server_port}",
                                               verify_certs=True, timeout=5))
        [connection] = client.transport.connection_pool.connections
        connection.compress_bodies = True  # as for a cluster on another machine
        client.index(index="works", id="1", body={"title": "Cháo " * 200})
    finally:
        server.shutdown()
        server.server_close()
    [(encoding, body)] = seen
    assert encoding == "gzip"
    assert json.loads(gzip.decompress(body)) == {"title": "Cháo " * 200}
    assert body[8] == 4  # gzip's XFL byte: 4 is the fastest level
