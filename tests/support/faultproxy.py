"""A real TCP proxy in front of OpenSearch that injects faults on demand.

It speaks just enough HTTP/1.1 to see request boundaries on keep-alive
connections, so faults hit whole requests:

    proxy.fail_next(3, status=429)             # answer the next 3 requests itself
    proxy.fail_next(1, status=503, retry_after="2")  # ... with a Retry-After header
    proxy.drop_next(1, match="/_bulk")         # forward the next bulk, let the server
                                               # apply it, then hang up
    proxy.drop_next(1, forward=False)          # hang up before forwarding
    proxy.delay_next(1, 2.0)                   # hold the next request 2 s
    proxy.delay(0.5)                           # hold every request (a slow network)
    proxy.refuse()                             # close the port: refused, open ones cut
    proxy.pass_through()                       # back to normal

``match`` limits a fault to requests whose ``METHOD /path`` contains it; faults
are used up in the order they were queued.

Plain HTTP only (a TLS upstream cannot be inspected): the fixture skips then.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Self
from urllib.parse import urlsplit

_READ_TIMEOUT = 30.0


class FaultProxy:
    """Proxy on 127.0.0.1 (a free port) to ``upstream_host:upstream_port``."""

    def __init__(self, upstream_host: str, upstream_port: int,
                 read_timeout: float = _READ_TIMEOUT,
                 inspect: Callable[[bytes], Any] | None = None):
        self.upstream = (upstream_host, upstream_port)
        self.read_timeout = read_timeout  # a slower answer is cut, as a fault would be
        self.port = 0
        self.requests: list[str] = []  # "METHOD /path" of every request seen
        # (when sent, "METHOD /path", request bytes, seconds the upstream took to answer,
        # what ``inspect`` made of the whole request, if given)
        self.timings: list[tuple[float, str, int, float, Any]] = []
        self.inspect = inspect
        self.faults_injected = 0
        self._lock = threading.Lock()
        self._faults: list[tuple[str, Any, str]] = []  # (kind, value, match)
        self._delay = 0.0
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._stopped = False

    @classmethod
    def for_url(cls, url: str, read_timeout: float = _READ_TIMEOUT,
                inspect: Callable[[bytes], Any] | None = None) -> Self:
        """A proxy for the server at ``url`` (http only)."""
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise ValueError(f"fault proxy needs plain http, got {parts.scheme}")
        return cls(parts.hostname or "127.0.0.1", parts.port or 80, read_timeout, inspect)

    @property
    def url(self) -> str:
        """Where clients should connect."""
        return f"http://127.0.0.1:{self.port}"

    # --- controls -------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen (on a free port the first time, the same port afterwards)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def pass_through(self) -> None:
        """Forward everything again; reopen the port if it was refused."""
        with self._lock:
            self._faults.clear()
            self._delay = 0.0
        if self._listener is None and not self._stopped:
            self.start()

    def fail_next(self, count: int, status: int = 503, match: str = "",
                  retry_after: str | None = None,
                  error: dict[str, Any] | None = None) -> None:
        """Answer the next ``count`` requests with ``status`` without forwarding them.

        ``retry_after``: a ``Retry-After`` header value (seconds or an HTTP-date) to send.
        ``error``: the body's ``error`` object, as OpenSearch words one (default: a
        ``fault_proxy_injected`` error).
        """
        self._queue("status", (status, retry_after, error), count, match)

    def drop_next(self, count: int, forward: bool = True, match: str = "") -> None:
        """Cut the connection on the next ``count`` requests.

        ``forward``: the server receives and applies the request, the answer is lost.
        """
        self._queue("drop", forward, count, match)

    def delay_next(self, count: int, seconds: float, match: str = "") -> None:
        """Hold the next ``count`` requests for ``seconds`` before forwarding them."""
        self._queue("delay", seconds, count, match)

    def pending_faults(self) -> int:
        """Faults queued and not yet used."""
        with self._lock:
            return len(self._faults)

    def delay(self, seconds: float) -> None:
        """Wait this long before forwarding each request."""
        with self._lock:
            self._delay = seconds

    def refuse(self) -> None:
        """Close the port (new connections are refused) and cut open connections."""
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)  # shutdown first: a bare close leaves a blocked accept() serving
        self._cut_all()

    def stop(self) -> None:
        """Shut down for good."""
        self._stopped = True
        self.refuse()

    def _queue(self, kind: str, value: Any, count: int, match: str) -> None:
        with self._lock:
            self._faults.extend([(kind, value, match)] * count)

    def _take_fault(self, request_line: str) -> tuple[str, Any] | None:
        """The first queued fault matching this request, used up."""
        with self._lock:
            for i, (kind, value, match) in enumerate(self._faults):
                if match in request_line:
                    del self._faults[i]
                    self.faults_injected += 1
                    return kind, value
        return None

    def count(self, fragment: str) -> int:
        """How many requests seen so far contain ``fragment`` (e.g. ``"/_bulk"``)."""
        with self._lock:
            return sum(fragment in r for r in self.requests)

    # --- serving --------------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # listener closed
            conn.settimeout(self.read_timeout)
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        upstream_reader: _Reader | None = None
        reader = _Reader(conn)
        try:
            while True:
                request = reader.request()
                if request is None:
                    return
                line = request.split(b"\r\n", 1)[0].decode("latin-1")
                method, path = ([*line.split(" "), "", ""])[:2]
                with self._lock:
                    self.requests.append(f"{method} {path}")
                    delay = self._delay
                kind: str
                value: Any  # a status and Retry-After, a delay, or whether to forward
                kind, value = self._take_fault(f"{method} {path}") or ("", 0)
                if kind == "delay":
                    delay += value
                if delay:
                    time.sleep(delay)
                if kind == "status":
                    conn.sendall(_fault_response(*value))
                    continue
                if kind == "drop" and not value:
                    return
                if upstream is None or upstream_reader is None:
                    upstream = socket.create_connection(self.upstream,
                                                        timeout=self.read_timeout)
                    with self._lock:
                        self._conns.add(upstream)
                    upstream_reader = _Reader(upstream)
                sent = time.monotonic()
                upstream.sendall(request)
                response = upstream_reader.response(method)
                took = time.monotonic() - sent
                seen = self.inspect(request) if self.inspect is not None else None
                with self._lock:
                    self.timings.append((sent, f"{method} {path}", len(request), took, seen))
                if kind == "drop":
                    return  # the server applied it; the client never hears back
                conn.sendall(response)
        except (OSError, ValueError):
            return
        finally:
            for sock in (conn, upstream):
                if sock is not None:
                    _close(sock)
                    with self._lock:
                        self._conns.discard(sock)

    def _cut_all(self) -> None:
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for sock in conns:
            _close(sock)


class _Reader:
    """Reads whole HTTP/1.1 messages from a socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def _head(self) -> bytes | None:
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                if self.buf:
                    raise ValueError("connection closed inside a message head")
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        return head + b"\r\n\r\n"

    def _exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            if not self._fill():
                raise ValueError("connection closed inside a message body")
        data, self.buf = self.buf[:size], self.buf[size:]
        return data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise ValueError("connection closed inside a chunk")
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line + b"\r\n"

    def request(self) -> bytes | None:
        head = self._head()
        if head is None:
            return None
        headers = _headers(head)
        if "chunked" in headers.get("transfer-encoding", ""):
            raise ValueError("chunked requests are not supported")
        return head + self._exactly(int(headers.get("content-length", "0")))

    def response(self, method: str) -> bytes:
        head = self._head()
        if head is None:
            raise ValueError("upstream closed the connection")
        status = int(head.split(b" ", 2)[1])
        headers = _headers(head)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return head
        if "chunked" in headers.get("transfer-encoding", ""):
            body = b""
            while True:
                size_line = self._line()
                body += size_line
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:  # trailers up to the empty line
                        trailer = self._line()
                        body += trailer
                        if trailer == b"\r\n":
                            return head + body
                body += self._exactly(size + 2)
        if "content-length" in headers:
            return head + self._exactly(int(headers["content-length"]))
        while self._fill():  # no length: the body runs to the end of the connection
            pass
        body, self.buf = self.buf, b""
        return head + body


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {k.strip().lower(): v.strip().lower() for k, v in pairs}


def _fault_response(status: int, retry_after: str | None = None,
                    error: dict[str, Any] | None = None) -> bytes:
    phrase = HTTPStatus(status).phrase
    error = error or {"type": "fault_proxy_injected", "reason": phrase}
    body = json.dumps({"error": error, "status": status}).encode()
    extra = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {status} {phrase}\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
