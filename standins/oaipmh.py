"""A stand-in arXiv OAI-PMH endpoint: a real HTTP server on 127.0.0.1, arXiv's ``arXiv`` format.

    with OaiStandIn(page_size=5) as oai:
        ...  # ARXIV_OAI_URL=oai.base_url
        oai.fail_next("503", times=2, retry_after=1)
        assert oai.request_count == 7

It serves the same recorded-style entries as the query-API stand-in
(``standins.arxiv.load_entries``: ``fixtures/arxiv/*.json``), so the same papers
exist in both, and behaves as arXiv's OAI-PMH service does where a harvester cares:

* ``verb=Identify`` and ``verb=ListRecords`` with ``metadataPrefix=arXiv``; records
  in datestamp order, ``page_size`` a page, then a ``resumptionToken`` (with
  ``cursor``, ``completeListSize`` and ``expirationDate``, the next UTC midnight);
* a record's datestamp is the day of its latest version (``updated``); its sets are
  the archives of its categories, as arXiv names them (``cs``, ``math``, ``stat``,
  ``physics:hep-th``); ``set=physics`` also selects ``physics:...``;
* ``from``/``until`` (``YYYY-MM-DD``, inclusive) select by datestamp;
* errors as OAI-PMH answers them, with HTTP 200: ``noRecordsMatch``,
  ``badResumptionToken`` (a token it never issued, or one issued before
  ``expire_tokens()``), ``badArgument``, ``cannotDisseminateFormat``, ``badVerb``;
* ``fail_next("503", times, retry_after)``: HTTP 503 with ``Retry-After``, as
  arXiv answers a harvester going too fast;
* ``add(entry, datestamp)``: a new or changed paper, and ``withdraw(id, datestamp)``:
  a deleted record (``status="deleted"``, no metadata), for incremental harvests;
* every request is recorded (``requests``: time, arguments, HTTP status, OAI error).

Nothing here imports the code under test.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit
from xml.etree import ElementTree as ET

from standins.arxiv import load_entries
from standins.loopback import LoopbackServer

OAI = "http://www.openarchives.org/OAI/2.0/"
ARXIV_FORMAT = "http://arxiv.org/OAI/arXiv/"
ET.register_namespace("", OAI)
ET.register_namespace("arXiv", ARXIV_FORMAT)

# arXiv's physics archives, whose sets are named "physics:<archive>".
PHYSICS_ARCHIVES = frozenset({
    "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph", "nlin",
    "nucl-ex", "nucl-th", "physics", "quant-ph"})
EARLIEST_DATESTAMP = "2007-05-23"


def set_spec(category: str) -> str:
    """The OAI set of an arXiv category: its archive (``cs.LG`` -> ``cs``, ``hep-th`` ->
    ``physics:hep-th``)."""
    archive = category.split(".")[0]
    return f"physics:{archive}" if archive in PHYSICS_ARCHIVES else archive


def bare_id(versioned: str) -> str:
    """``2405.12345v2`` -> ``2405.12345`` (OAI-PMH lists an article, not a version)."""
    head, sep, tail = versioned.rpartition("v")
    return head if sep and tail.isdigit() and head else versioned


@dataclass(frozen=True)
class Record:
    """One article as the endpoint lists it."""

    id: str
    datestamp: str  # YYYY-MM-DD
    sets: tuple[str, ...]
    entry: dict


@dataclass(frozen=True)
class Recorded:
    """One request the stand-in received."""

    at: float
    args: dict[str, str]
    status: int
    error: str | None  # the OAI-PMH error code, if it answered one


class OaiStandIn:
    """The server; use as a context manager."""

    def __init__(self, entries: list[dict] | None = None, page_size: int = 2500) -> None:
        self.page_size = page_size
        self.requests: list[Recorded] = []
        self._records: dict[str, Record] = {}
        for entry in entries if entries is not None else load_entries():
            self.add(entry)
        self._generation = 0  # tokens carry it; expire_tokens() moves it on
        self._faults: deque[tuple[str, int]] = deque()
        self._lock = threading.Lock()
        self._http = LoopbackServer(_handler_for(self), "oai-standin")

    # --- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> OaiStandIn:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def base_url(self) -> str:
        """An ``ARXIV_OAI_URL`` pointing here."""
        return f"http://127.0.0.1:{self._http.port}/oai"

    # --- controls --------------------------------------------------------------------

    def add(self, entry: dict, datestamp: str | None = None) -> Record:
        """Serve a fixture entry, stamped ``datestamp`` (default: its ``updated`` day)."""
        record = Record(bare_id(entry["id"]), datestamp or entry["updated"][:10],
                        tuple(dict.fromkeys(set_spec(c) for c in entry["categories"])), entry)
        self._records[record.id] = record
        return record

    def withdraw(self, arxiv_id: str, datestamp: str) -> None:
        """List ``arxiv_id`` from now on as a deleted record stamped ``datestamp``."""
        record = self._records[arxiv_id]
        self._records[arxiv_id] = Record(record.id, datestamp, record.sets, {})

    def fail_next(self, mode: str, times: int = 1, retry_after: int = 1) -> None:
        """Answer the next ``times`` requests with HTTP ``mode`` ("503" only) and Retry-After."""
        if mode != "503":
            raise ValueError(f"unknown fault {mode!r}")
        with self._lock:
            self._faults.extend([(mode, retry_after)] * times)

    def expire_tokens(self) -> None:
        """Every token issued so far becomes a ``badResumptionToken`` (as at UTC midnight)."""
        with self._lock:
            self._generation += 1

    def reset(self) -> None:
        """Forget recorded requests and queued faults."""
        with self._lock:
            self.requests.clear()
            self._faults.clear()

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def ids(self) -> set[str]:
        """The article ids served."""
        return set(self._records)

    # --- answering -------------------------------------------------------------------

    def _next_fault(self) -> tuple[str, int] | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _record(self, args: dict[str, str], status: int, error: str | None) -> None:
        with self._lock:
            self.requests.append(Recorded(time.time(), args, status, error))

    def select(self, set_name: str | None, start: str | None, until: str | None) -> list[Record]:
        """The records a selective harvest lists, in datestamp order."""
        found = [r for r in self._records.values()
                 if (not start or r.datestamp >= start) and (not until or r.datestamp <= until)
                 and (not set_name or any(s == set_name or s.startswith(set_name + ":")
                                          for s in r.sets))]
        return sorted(found, key=lambda r: (r.datestamp, r.id))

    def answer(self, args: dict[str, str]) -> tuple[bytes, str | None]:
        """The OAI-PMH document for one request, and its error code if any."""
        root = ET.Element(f"{{{OAI}}}OAI-PMH")
        ET.SubElement(root, f"{{{OAI}}}responseDate").text = _now().strftime("%Y-%m-%dT%H:%M:%SZ")
        request = ET.SubElement(root, f"{{{OAI}}}request")
        request.text = self.base_url
        verb = args.get("verb")
        try:
            if verb == "Identify":
                request.set("verb", verb)
                self._identify(root)
            elif verb == "ListRecords":
                for name, value in args.items():
                    request.set(name, value)
                self._list_records(root, args)
            else:
                raise _OaiError("badVerb", f"illegal verb {verb!r}")
        except _OaiError as exc:
            ET.SubElement(root, f"{{{OAI}}}error", code=exc.code).text = exc.message
            return _serialize(root), exc.code
        return _serialize(root), None

    def _identify(self, root: ET.Element) -> None:
        node = ET.SubElement(root, f"{{{OAI}}}Identify")
        for name, value in (("repositoryName", "arXiv (stand-in)"), ("baseURL", self.base_url),
                            ("protocolVersion", "2.0"),
                            ("earliestDatestamp", EARLIEST_DATESTAMP),
                            ("deletedRecord", "persistent"), ("granularity", "YYYY-MM-DD")):
            ET.SubElement(node, f"{{{OAI}}}{name}").text = value

    def _list_records(self, root: ET.Element, args: dict[str, str]) -> None:
        token = args.get("resumptionToken")
        if token is not None:
            if set(args) != {"verb", "resumptionToken"}:
                raise _OaiError("badArgument", "resumptionToken is an exclusive argument")
            set_name, start, until, offset = self._read_token(token)
        else:
            if args.get("metadataPrefix") is None:
                raise _OaiError("badArgument", "metadataPrefix is required")
            if args["metadataPrefix"] != "arXiv":
                raise _OaiError("cannotDisseminateFormat", args["metadataPrefix"])
            unknown = set(args) - {"verb", "metadataPrefix", "set", "from", "until"}
            if unknown:
                raise _OaiError("badArgument", f"unknown arguments {sorted(unknown)}")
            set_name, start, until, offset = (args.get("set") or None, args.get("from"),
                                              args.get("until"), 0)
            for value in (start, until):
                if value is not None and not _is_day(value):
                    raise _OaiError("badArgument", f"bad datestamp {value!r}")
        found = self.select(set_name, start, until)
        if not found:
            raise _OaiError("noRecordsMatch", "no records match")
        node = ET.SubElement(root, f"{{{OAI}}}ListRecords")
        for record in found[offset:offset + self.page_size]:
            _record_element(node, record)
        end = offset + self.page_size
        if end < len(found) or token is not None:
            resumption = ET.SubElement(
                node, f"{{{OAI}}}resumptionToken", cursor=str(offset),
                completeListSize=str(len(found)), expirationDate=_next_midnight())
            if end < len(found):
                resumption.text = "|".join((set_name or "", start or "", until or "", str(end),
                                            str(self._generation)))

    def _read_token(self, token: str) -> tuple[str | None, str | None, str | None, int]:
        parts = token.split("|")
        if len(parts) != 5 or not parts[3].isdigit() or parts[4] != str(self._generation):
            raise _OaiError("badResumptionToken", f"unknown or expired token {token!r}")
        return parts[0] or None, parts[1] or None, parts[2] or None, int(parts[3])


class _OaiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _now() -> datetime:
    return datetime.now(UTC)


def _next_midnight() -> str:
    tomorrow = (_now() + timedelta(days=1)).date()
    return f"{tomorrow.isoformat()}T00:00:00Z"


def _is_day(value: str) -> bool:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _serialize(root: ET.Element) -> bytes:
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _split_name(name: str) -> tuple[str, str]:
    """(keyname, forenames), as arXiv splits an author: the last word is the key name."""
    forenames, _, keyname = name.rpartition(" ")
    return keyname, forenames


def _record_element(parent: ET.Element, record: Record) -> None:
    entry = record.entry
    node = ET.SubElement(parent, f"{{{OAI}}}record")
    header = ET.SubElement(node, f"{{{OAI}}}header")
    ET.SubElement(header, f"{{{OAI}}}identifier").text = f"oai:arXiv.org:{record.id}"
    ET.SubElement(header, f"{{{OAI}}}datestamp").text = record.datestamp
    for spec in record.sets:
        ET.SubElement(header, f"{{{OAI}}}setSpec").text = spec
    if not entry:  # withdrawn: a header only
        header.set("status", "deleted")
        return
    metadata = ET.SubElement(ET.SubElement(node, f"{{{OAI}}}metadata"), f"{{{ARXIV_FORMAT}}}arXiv")

    def add(name: str, value: str | None) -> None:
        if value:
            ET.SubElement(metadata, f"{{{ARXIV_FORMAT}}}{name}").text = value

    add("id", record.id)
    created, updated = entry["published"][:10], entry["updated"][:10]
    add("created", created)
    if updated != created:
        add("updated", updated)
    authors = ET.SubElement(metadata, f"{{{ARXIV_FORMAT}}}authors")
    for name in entry["authors"]:
        author = ET.SubElement(authors, f"{{{ARXIV_FORMAT}}}author")
        keyname, forenames = _split_name(name)
        ET.SubElement(author, f"{{{ARXIV_FORMAT}}}keyname").text = keyname
        if forenames:
            ET.SubElement(author, f"{{{ARXIV_FORMAT}}}forenames").text = forenames
    add("title", entry["title"])
    primary = entry.get("primary_category") or entry["categories"][0]
    add("categories", " ".join(dict.fromkeys([primary, *entry["categories"]])))
    add("comments", entry.get("comment"))
    add("journal-ref", entry.get("journal_ref"))
    add("doi", entry.get("doi"))
    add("license", "http://arxiv.org/licenses/nonexclusive-distrib/1.0/")
    add("abstract", entry.get("summary"))


def _handler_for(standin: OaiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                  content_type: str = "text/xml") -> None:
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/oai":
                self._send(404, b"not found", content_type="text/plain")
                return
            args = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            fault = standin._next_fault()
            if fault is not None:
                standin._record(args, 503, None)
                self._send(503, b"Retry after a while", {"Retry-After": str(fault[1])},
                           "text/plain")
                return
            body, error = standin.answer(args)
            standin._record(args, 200, error)
            self._send(200, body)

    return Handler
