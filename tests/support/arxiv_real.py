"""arXiv's own responses, replayed from 127.0.0.1: what the stand-ins are checked against.

The files (OAI-PMH pages rendered by arXiv's current OAI-PMH service code over a real
subset of its metadata, its error answers, query-API Atom feeds recorded from arXiv)
live outside the repository, in ``ARXIV_REAL_DATA`` (default ``../shared/data/arxiv-real``
beside the repository); tests that need them skip with the reason when it is absent.
Their provenance is in that directory's ``SOURCE.txt``.

``RealOaiEndpoint`` answers a harvest as arXiv did: the request's arguments select the
file arXiv's server answered them with; a resumption token is followed to the page it
named; a ``from`` after the data's last datestamp, up to today, gets the recorded
``noRecordsMatch`` (the server's answer for any such day). A request no file answers gets HTTP
500 with "no recording", so a test never reads an invented answer.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from standins.loopback import LoopbackServer
from tests.support.crawl import ROOT

DEFAULT = ROOT / ".." / "shared" / "data" / "arxiv-real"
NEW = "oai-new-rendered"
LAST_DATESTAMP = "2023-10-13"  # the latest datestamp of the rendered pages


def real_data() -> Path:
    """The real-response directory, or skip the test saying where it was looked for."""
    path = Path(os.environ.get("ARXIV_REAL_DATA") or DEFAULT).resolve()
    if not (path / NEW).is_dir():
        pytest.skip(f"arXiv's real responses are not at {path} (set ARXIV_REAL_DATA)")
    return path


def truth() -> dict[str, dict]:
    """Per arXiv id: what the rendered arXivRaw pages say (v1_date, dois, authors, ...)."""
    return json.loads((real_data() / NEW / "newoai-truth.json").read_text("utf-8"))["records"]


def token_of(body: bytes) -> str | None:
    """The resumption token a page ends with (None: none, or an empty one)."""
    found = re.search(rb"<resumptionToken[^>]*>([^<]+)</resumptionToken>", body)
    return found.group(1).decode().strip() if found else None


@dataclass(frozen=True)
class Seen:
    args: dict[str, list[str]]
    file: str | None  # None: no recording answered it (HTTP 500)


# (sorted request arguments) -> file; tokens are added from the pages themselves.
_FIRST_PAGES = {
    (("metadataPrefix", "arXivRaw"), ("verb", "ListRecords")): "newoai-listrecords-arXivRaw-p1.xml",
    (("metadataPrefix", "arXiv"), ("verb", "ListRecords")): "newoai-listrecords-arXiv-p1.xml",
    (("metadataPrefix", "arXivRaw"), ("set", "cs"), ("verb", "ListRecords")):
        "newoai-listrecords-arXivRaw-set-cs-p1.xml",
    (("metadataPrefix", "arXivRaw"), ("set", "math"), ("verb", "ListRecords")):
        "newoai-listrecords-arXivRaw-set-math-p1.xml",
    (("metadataPrefix", "arXiv"), ("set", "cs"), ("verb", "ListRecords")):
        "newoai-listrecords-arXiv-set-cs-p1.xml",
    (("metadataPrefix", "arXiv"), ("set", "math"), ("verb", "ListRecords")):
        "newoai-listrecords-arXiv-set-math-p1.xml",
    (("metadataPrefix", "arXivRaw"), ("set", "cs:cs:LG"), ("verb", "ListRecords")):
        "newoai-error-noRecordsMatch-set-cs-cs-LG.xml",
    (("from", "2000-01-01"), ("metadataPrefix", "arXivRaw"), ("verb", "ListRecords")):
        "newoai-error-from-too-early.xml",
    (("metadataPrefix", "arXivRaw"), ("set", "cs.LG"), ("verb", "ListRecords")):
        "newoai-error-bad-set.xml",
    (("verb", "Identify"),): "newoai-identify.xml",
}
# Requests whose answer does not depend on the data: any such request gets the recorded one.
ERROR_CASES = {
    "newoai-error-from-too-early.xml": {"verb": "ListRecords", "metadataPrefix": "arXivRaw",
                                        "from": "2000-01-01"},
    "newoai-error-bad-set.xml": {"verb": "ListRecords", "metadataPrefix": "arXivRaw",
                                 "set": "cs.LG"},
    "newoai-error-from-datetime.xml": {"verb": "ListRecords", "metadataPrefix": "arXiv",
                                       "from": "2024-01-01T00:00:00Z"},
    "newoai-error-until-datetime.xml": {"verb": "ListRecords", "metadataPrefix": "arXiv",
                                        "until": "2024-01-01T00:00:00Z"},
    "newoai-error-until-too-late.xml": {"verb": "ListRecords", "metadataPrefix": "arXiv",
                                        "until": "2099-01-01"},
    "newoai-error-from-after-until.xml": {"verb": "ListRecords", "metadataPrefix": "arXiv",
                                          "from": "2099-01-01"},
    "newoai-error-cannotDisseminateFormat.xml": {"verb": "ListRecords", "metadataPrefix": "foo"},
    "newoai-error-no-metadataPrefix.xml": {"verb": "ListRecords"},
    "newoai-error-badVerb.xml": {"verb": "Foo"},
    "newoai-error-badResumptionToken.xml": {"verb": "ListRecords", "resumptionToken": "bogus"},
    "newoai-error-token-with-other-args.xml": {"verb": "ListRecords", "resumptionToken": "x",
                                               "metadataPrefix": "arXiv"},
}


class RealOaiEndpoint:
    """The rendered pages of arXiv's current OAI-PMH server, served as it answered them."""

    def __init__(self) -> None:
        self.directory = real_data() / NEW
        self._routes = {key: self.directory / name for key, name in _FIRST_PAGES.items()}
        self._tokens: dict[str, Path] = {}
        for prefix in ("arXiv", "arXivRaw"):
            pages = [self.directory / f"newoai-listrecords-{prefix}-p{n}.xml" for n in (1, 2, 3)]
            for page, following in itertools.pairwise(pages):
                token = token_of(page.read_bytes())
                assert token, f"{page.name} ends without a token"
                self._tokens[token] = following
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._http = LoopbackServer(_handler_for(self), "real-oai")

    def __enter__(self) -> RealOaiEndpoint:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.port}/oai"

    def answer(self, query: dict[str, list[str]]) -> Path | None:
        """The file arXiv answered these arguments with; None when none was recorded."""
        if any(len(values) > 1 for values in query.values()):
            return self.directory / "newoai-error-repeated-arg.xml"
        args = {name: values[0] for name, values in query.items()}
        token = args.get("resumptionToken")
        if token is not None and set(args) == {"verb", "resumptionToken"}:
            return self._tokens.get(token, self.directory / "newoai-error-badResumptionToken.xml")
        listing = args.get("verb") == "ListRecords"
        if listing and args.get("metadataPrefix") in ("arXiv", "arXivRaw"):
            start = args.get("from", "")
            today = datetime.now(UTC).date().isoformat()
            if (LAST_DATESTAMP < start <= today and re.fullmatch(r"\d{4}-\d\d-\d\d", start)
                    and set(args) <= {"verb", "metadataPrefix", "from", "set"}):
                return self.directory / "newoai-error-noRecordsMatch.xml"
        found = self._routes.get(tuple(sorted(args.items())))
        if found is not None:
            return found
        for name, case in ERROR_CASES.items():
            if case == args:
                return self.directory / name
        return None

    @property
    def requests(self) -> list[dict[str, list[str]]]:
        with self._lock:
            return [seen.args for seen in self.seen]

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)


def _handler_for(endpoint: RealOaiEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query, keep_blank_values=True)
            found = endpoint.answer(query) if parts.path == "/oai" else None
            endpoint._record(Seen(query, found.name if found else None))
            body = found.read_bytes() if found else b"no recording answers this request"
            self.send_response(200 if found else 500)
            # As arXiv's server sends every OAI-PMH answer, errors included.
            self.send_header("Content-Type", "application/xml" if found else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


class RealApiFeeds:
    """The query API's recorded Atom feeds: each request gets the one file the test chose,
    with the HTTP status arXiv answered it with (400 for the ``id_abc`` error feed)."""

    def __init__(self) -> None:
        self.directory = real_data() / "api"
        self.file: Path | None = None
        self.paths: list[str] = []
        self._http = LoopbackServer(_api_handler_for(self), "real-api")

    def __enter__(self) -> RealApiFeeds:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._http.port}/api/query?{{}}"

    def feeds(self) -> list[Path]:
        return sorted(self.directory.glob("*.xml"))


def _api_handler_for(feeds: RealApiFeeds) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            feeds.paths.append(self.path)
            assert feeds.file is not None
            body = feeds.file.read_bytes()
            self.send_response(400 if "id_abc" in feeds.file.name else 200)
            self.send_header("Content-Type", "application/atom+xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
