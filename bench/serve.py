"""A fast static file server on 127.0.0.1 for the benchmark site.

    python -m bench.serve ROOT [--port 0] [--threaded]

Prints one JSON line ``{"url": "http://127.0.0.1:PORT"}`` when it listens, and
stops when its stdin closes. ``StaticServer`` runs it as a child process
(``bench.child_server``): its own interpreter and GIL, so serving never competes with
the runner's arXiv stand-in.

Why not ``http.server``: a thread per connection plus its per-request header
handling in Python caps out well below what Scrapy can fetch, and the raw fetch
rate is the limit every other figure is divided by, so the server must not be
what bounds it. This one is one asyncio protocol: parse the request line, read
the file (from the page cache), write headers and body in one call; keep-alive.
``--threaded`` serves with ``ThreadingHTTPServer`` instead, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import sys
import threading
from email.utils import formatdate
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bench.child_server import ChildServer

_TYPES = {".html": "text/html; charset=utf-8", ".txt": "text/plain; charset=utf-8",
          ".json": "application/json"}
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
_MAX_HEAD = 64 * 1024


def content_type(path: str) -> str:
    suffix = os.path.splitext(path)[1].lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"


class _Protocol(asyncio.Protocol):
    """HTTP/1.1 GET and HEAD of files under ``root``; one request at a time per connection."""

    def __init__(self, root: str, counter: list[int]) -> None:
        self.root = root
        self.counter = counter
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head, self.buffer = self.buffer[:end], self.buffer[end + 4:]
            self._answer(head)
        if len(self.buffer) > _MAX_HEAD:
            self._reply(400, b"request head too large", "text/plain", close=True)

    def _answer(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            self._reply(400, b"bad request line", "text/plain", close=True)
            return
        method, target, version = parts
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        close = (headers.get("connection", "").lower() == "close"
                 or (version == "HTTP/1.0" and headers.get("connection", "").lower()
                     != "keep-alive"))
        if method not in ("GET", "HEAD"):
            self._reply(405, b"only GET and HEAD", "text/plain", close=close)
            return
        self.counter[0] += 1
        path = unquote(urlsplit(target).path)
        if path.endswith("/"):
            path += "index.html"
        full = os.path.normpath(os.path.join(self.root, path.lstrip("/")))
        if not full.startswith(self.root + os.sep):  # no way out of the site
            self._reply(404, b"not found", "text/plain", close=close)
            return
        try:
            with open(full, "rb") as handle:
                body = handle.read()
        except OSError:
            self._reply(404, b"not found", "text/plain", close=close)
            return
        self._reply(200, body, content_type(full), close=close, head_only=method == "HEAD")

    def _reply(self, status: int, body: bytes, ctype: str, *, close: bool,
               head_only: bool = False) -> None:
        assert self.transport is not None
        head = (f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
                f"Date: {formatdate(usegmt=True)}\r\nServer: bench-static\r\n"
                f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n").encode("latin-1")
        self.transport.write(head if head_only else head + body)
        if close:
            self.transport.close()


async def _serve_async(root: str, port: int) -> None:
    counter = [0]
    loop = asyncio.get_running_loop()
    server = await loop.create_server(partial(_Protocol, root, counter), "127.0.0.1", port,
                                      backlog=512)
    bound = server.sockets[0].getsockname()[1]
    _announce(bound)
    stdin_closed = loop.create_future()
    loop.add_reader(sys.stdin.fileno(), _on_stdin, stdin_closed)
    async with server:
        await stdin_closed
    print(json.dumps({"requests": counter[0]}), flush=True)


def _on_stdin(done: asyncio.Future[None]) -> None:
    if not os.read(sys.stdin.fileno(), 4096) and not done.done():
        done.set_result(None)  # EOF: the parent is gone or done with us


def _announce(port: int) -> None:
    print(json.dumps({"url": f"http://127.0.0.1:{port}"}), flush=True)


class _QuietHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve_threaded(root: str, port: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(_QuietHandler, directory=root))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _announce(server.server_address[1])
    sys.stdin.read()  # until EOF
    server.shutdown()


class StaticServer(ChildServer):
    """``python -m bench.serve`` as a child process; ``url`` once it listens."""

    def __init__(self, root: Path, threaded: bool = False, port: int = 0) -> None:
        super().__init__("bench.serve", str(root), "--port", str(port),
                         *(["--threaded"] if threaded else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a directory on 127.0.0.1.")
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threaded", action="store_true",
                        help="http.server's ThreadingHTTPServer instead (for comparison)")
    args = parser.parse_args(argv)
    root = str(args.root.resolve())
    if args.threaded:
        _serve_threaded(root, args.port)
    else:
        asyncio.run(_serve_async(root, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
