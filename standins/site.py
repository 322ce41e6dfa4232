"""A real HTTP profile site for the demo and crawl tests, on 127.0.0.1, with fault routes.

    with SiteServer(root) as site:
        site.url("/bzpeer/researchers/chao-jin/")

Fault routes (for bad-input tests): ``/_status/<code>``, ``/_slow/<seconds>``,
``/_huge/<megabytes>``, and ``site.routes[path] = (status, headers, body)`` for any
response a test wants to script.
"""

from __future__ import annotations

import contextlib
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_TYPES = {**SimpleHTTPRequestHandler.extensions_map,
          ".txt": "text/plain; charset=utf-8", ".html": "text/html; charset=utf-8"}


class _Handler(SimpleHTTPRequestHandler):
    def __init__(self, *args, site: SiteServer, **kwargs) -> None:
        self.site = site
        self.extensions_map = _TYPES
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.site.requests.append(self.path)
        path = self.path.split("?", 1)[0]
        if path in self.site.routes:
            status, headers, body = self.site.routes[path]
            return self._send(status, headers, body)
        if path.startswith("/_status/"):
            return self._send(int(path.rsplit("/", 1)[1]), {}, b"error page")
        if path.startswith("/_slow/"):
            time.sleep(float(path.rsplit("/", 1)[1]))
            return self._send(200, {"Content-Type": "text/plain"}, b"late")
        if path.startswith("/_huge/"):
            size = int(float(path.rsplit("/", 1)[1]) * 1024 * 1024)
            return self._send(200, {"Content-Type": "text/html"}, b"<p>x</p>" * (size // 8))
        return super().do_GET()

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)


class SiteServer:
    """Serve ``root`` on a free loopback port until the context exits."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.requests: list[str] = []
        handler = partial(_Handler, site=self, directory=str(root))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base + "/" + path.lstrip("/")

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
