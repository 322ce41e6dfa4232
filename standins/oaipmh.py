"""A stand-in arXiv OAI-PMH endpoint: a real HTTP server on 127.0.0.1, as the current one answers.

    with OaiStandIn(page_size=5) as oai:
        ...  # ARXIV_OAI_URL=oai.base_url
        oai.fail_next("503", times=2, retry_after=1)
        assert oai.request_count == 7

It serves the same recorded-style entries as the query-API stand-in
(``standins.arxiv.load_entries``: ``fixtures/arxiv/*.json``), so the same papers
exist in both, and answers as arXiv's current service (https://oaipmh.arxiv.org/oai,
whose responses the tests also replay from real files) does where a harvester cares:

* ``verb=Identify`` and ``verb=ListRecords`` in two formats. ``arXivRaw`` lists every
  version with its submission time (``Wed, 25 Jun 2008 15:29:38 GMT``) and gives the
  authors as one string (``A, B and C``). ``arXiv`` describes the latest version only:
  its ``<created>`` is the latest version's day, ``<updated>`` the record's datestamp.
  An entry ``2205.14465v3`` has three versions: v1 at ``published``, v3 at ``updated``,
  v2 halfway (the fixtures do not record it);
* records in datestamp order (then id), ``page_size`` a page; a page that is not the
  last ends with a ``resumptionToken`` as arXiv's: the request's arguments with
  ``from`` the page's last datestamp and ``skip`` the records of that day already
  listed, URL-encoded, no ``cursor`` and no ``completeListSize``, an
  ``expirationDate`` at the next UTC midnight; the last page of a resumed list ends
  with an empty ``<resumptionToken/>``. Tokens work until ``expire_tokens()`` (arXiv's
  expire daily);
* a record's datestamp is its entry's ``updated`` day; its sets are one per category,
  named as arXiv names them (``cs:cs:LG``, ``physics:hep-th``, ``math:math:MP``);
  ``set=cs`` and ``set=cs:cs`` select ``cs:cs:LG`` too;
* ``from``/``until`` (``YYYY-MM-DD``, inclusive) select by datestamp, ``until`` being
  today when absent;
* errors as arXiv answers them, with HTTP 200 and its words (``badArgument``: "Set
  does not exist", "start date too early" before ``EARLIEST_DATESTAMP``, "from date
  format must be YYYY-MM-DD", "until date must be greater than or equal to from date",
  "until date too late", "Duplicate parameters not allowed", ...; ``noRecordsMatch``,
  ``badResumptionToken``, ``cannotDisseminateFormat``, ``badVerb``);
* ``fail_next("503", times, retry_after)``: HTTP 503 with ``Retry-After``, as arXiv
  answers a harvester going too fast;
* ``add(entry, datestamp)``: a new or changed paper, and ``withdraw(id, datestamp)``:
  a deleted record (``status="deleted"``, no metadata) as OAI-PMH defines it (arXiv
  declares ``deletedRecord`` persistent, though its current server emits none);
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
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit
from xml.etree import ElementTree as ET

from scholarindex.core.arxiv_categories import is_oai_set, oai_set_of
from standins.arxiv import load_entries
from standins.loopback import LoopbackServer

OAI = "http://www.openarchives.org/OAI/2.0/"
ARXIV_FORMAT = "http://arxiv.org/OAI/arXiv/"
ARXIV_RAW = "http://arxiv.org/OAI/arXivRaw/"
ET.register_namespace("", OAI)
EARLIEST_DATESTAMP = "2005-09-16"  # arXiv's Identify says so
FORMATS = ("arXiv", "arXivRaw")
_BAD_ARGUMENT = ("The request includes illegal arguments, is missing required arguments, "
                 "includes a repeated argument, or values for arguments have an illegal "
                 "syntax. Reason: ")
_BAD_TOKEN = "The value of the resumptionToken argument is invalid or expired. Reason: "
_NO_RECORDS = ("The combination of the values of the from, until, set and metadataPrefix "
               "arguments results in an empty list.")
_BAD_FORMAT = ("The metadata format identified by the value given for the metadataPrefix "
               "argument is not supported by the item or by the repository. Reason: ")
_BAD_VERB = ("Value of the verb argument is not a legal OAI-PMH verb, the verb argument is "
             "missing, or the verb argument is repeated. Reason: ")


# arXiv lists a paper in both halves of an alias pair, and an old archive's paper in the
# category that took it over.
ALIASES = {"cs.SY": "eess.SY", "eess.SY": "cs.SY", "math.NA": "cs.NA", "cs.NA": "math.NA",
           "math.IT": "cs.IT", "cs.IT": "math.IT", "math.MP": "math-ph", "math-ph": "math.MP",
           "math.ST": "stat.TH", "stat.TH": "math.ST", "q-fin.EC": "econ.GN",
           "econ.GN": "q-fin.EC"}
SUBSUMED = {"chao-dyn": "nlin.CD", "ao-sci": "physics.ao-ph", "solv-int": "nlin.SI",
            "patt-sol": "nlin.PS", "adap-org": "nlin.AO", "comp-gas": "nlin.CG",
            "mtrl-th": "cond-mat.mtrl-sci", "chem-ph": "physics.chem-ph",
            "atom-ph": "physics.atom-ph", "acc-phys": "physics.acc-ph",
            "plasm-ph": "physics.plasm-ph", "bayes-an": "physics.data-an",
            "supr-con": "cond-mat.supr-con", "alg-geom": "math.AG", "dg-ga": "math.DG",
            "funct-an": "math.FA", "q-alg": "math.QA", "cmp-lg": "cs.CL"}


def set_specs(categories: list[str]) -> tuple[str, ...]:
    """The OAI sets a record with these categories carries: one per category, its alias's
    too (``cs.IT`` is also ``math:math:IT``), an old archive's as its successor's."""
    found: list[str] = []
    for category in categories:
        category = SUBSUMED.get(category, category)
        for one in (category, ALIASES.get(category)):
            spec = oai_set_of(one) if one else None
            if spec:
                found.append(spec)
    return tuple(dict.fromkeys(found))


def bare_id(versioned: str) -> str:
    """``2405.12345v2`` -> ``2405.12345`` (OAI-PMH lists an article, not a version)."""
    head, sep, tail = versioned.rpartition("v")
    return head if sep and tail.isdigit() and head else versioned


def version_times(entry: dict) -> list[datetime]:
    """Every version's submission time: v1 at ``published``, the last at ``updated``, the
    ones between (which the fixtures do not record) evenly spread."""
    first = _instant(entry["published"])
    last = _instant(entry["updated"])
    _, _, tail = entry["id"].rpartition("v")
    count = int(tail) if tail.isdigit() else 1
    count = max(count, 2 if last != first else 1)
    if count == 1:
        return [first]
    step = (last - first) / (count - 1)
    return [first + step * i for i in range(count - 1)] + [last]


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
        self._issued: set[str] = set()  # tokens that still work
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
                        set_specs(entry["categories"]), entry)
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
        """Every token issued so far becomes a ``badResumptionToken`` (as after a day)."""
        with self._lock:
            self._issued.clear()

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

    def answer(self, query: dict[str, list[str]]) -> tuple[bytes, str | None]:
        """The OAI-PMH document for one request's arguments, and its error code if any."""
        root = ET.Element(f"{{{OAI}}}OAI-PMH")
        ET.SubElement(root, f"{{{OAI}}}responseDate").text = _now().strftime("%Y-%m-%dT%H:%M:%SZ")
        request = ET.SubElement(root, f"{{{OAI}}}request")
        request.text = self.base_url
        args = {name: values[0] for name, values in query.items()}
        try:
            if any(len(values) > 1 for values in query.values()):
                raise _OaiError("badArgument", _BAD_ARGUMENT + "Duplicate parameters not allowed")
            verb = args.get("verb", "")
            if verb == "Identify":
                request.set("verb", verb)
                self._identify(root)
            elif verb == "ListRecords":
                for name, value in args.items():
                    request.set(name, value)
                self._list_records(root, args)
            else:
                raise _OaiError("badVerb", _BAD_VERB + "Invalid verb provided")
        except _OaiError as exc:
            ET.SubElement(root, f"{{{OAI}}}error", code=exc.code).text = exc.message
            return _serialize(root), exc.code
        return _serialize(root), None

    def _identify(self, root: ET.Element) -> None:
        node = ET.SubElement(root, f"{{{OAI}}}Identify")
        for name, value in (("repositoryName", "arXiv (stand-in)"), ("baseURL", self.base_url),
                            ("protocolVersion", "2.0"), ("adminEmail", "help@example.org"),
                            ("earliestDatestamp", EARLIEST_DATESTAMP),
                            ("deletedRecord", "persistent"), ("granularity", "YYYY-MM-DD")):
            ET.SubElement(node, f"{{{OAI}}}{name}").text = value

    def _arguments(self, args: dict[str, str]) -> tuple[dict[str, str], int]:
        """The list's arguments and how many of its records to skip (from a token)."""
        token = args.get("resumptionToken")
        if token is None:
            return args, 0
        if set(args) != {"verb", "resumptionToken"}:
            raise _OaiError("badArgument",
                            _BAD_ARGUMENT + "No other paramters allowed with resumptionToken")
        with self._lock:
            known = token in self._issued
        params = {k: v[0] for k, v in parse_qs(unquote(token)).items()}
        skip = params.pop("skip", "")
        if not known or not skip.isdigit():
            raise _OaiError("badResumptionToken",
                            _BAD_TOKEN + "Token decoding failed or format is invalid.")
        return params, int(skip)

    def _list_records(self, root: ET.Element, request_args: dict[str, str]) -> None:
        args, skip = self._arguments(request_args)
        prefix = args.get("metadataPrefix")
        if prefix is None:
            raise _OaiError("badArgument", _BAD_ARGUMENT + "metadataPrefix required.")
        if prefix not in FORMATS:
            raise _OaiError("cannotDisseminateFormat", _BAD_FORMAT + "Did not recognize "
                            "requested format")
        unknown = set(args) - {"verb", "metadataPrefix", "set", "from", "until"}
        if unknown:
            raise _OaiError("badArgument", _BAD_ARGUMENT + f"Unknown parameter(s): "
                            f"{', '.join(sorted(unknown))}")
        today = _now().date().isoformat()
        start, until = args.get("from"), args.get("until")
        for name, value in (("from", start), ("until", until)):
            if value is not None and not _is_day(value):
                raise _OaiError("badArgument",
                                _BAD_ARGUMENT + f"{name} date format must be YYYY-MM-DD")
        if start is not None and start < EARLIEST_DATESTAMP:
            raise _OaiError("badArgument", _BAD_ARGUMENT + "start date too early")
        if until is not None and until > today:
            raise _OaiError("badArgument", _BAD_ARGUMENT + "until date too late")
        if start is not None and start > (until or today):
            raise _OaiError("badArgument", _BAD_ARGUMENT +
                            "until date must be greater than or equal to from date")
        set_name = args.get("set")
        if set_name is not None and not is_oai_set(set_name):
            raise _OaiError("badArgument", _BAD_ARGUMENT + "Set does not exist")
        found = self.select(set_name, start, until)[skip:]
        if not found:
            raise _OaiError("noRecordsMatch", _NO_RECORDS)
        node = ET.SubElement(root, f"{{{OAI}}}ListRecords")
        page = found[:self.page_size]
        for record in page:
            _record_element(node, record, prefix)
        if len(found) > len(page):
            last = page[-1].datestamp
            same_day = sum(r.datestamp == last for r in page)
            skip_next = same_day + (skip if start == last else 0)
            token = quote(urlencode({**{k: v for k, v in args.items() if k != "from"},
                                     "from": last, "skip": skip_next}))
            with self._lock:
                self._issued.add(token)
            ET.SubElement(node, f"{{{OAI}}}resumptionToken",
                          expirationDate=_next_midnight()).text = token
        elif "resumptionToken" in request_args:
            ET.SubElement(node, f"{{{OAI}}}resumptionToken")


class _OaiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _now() -> datetime:
    return datetime.now(UTC)


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)


def _next_midnight() -> str:
    tomorrow = (_now() + timedelta(days=1)).date()
    return f"{tomorrow.isoformat()}T00:00:00Z"


def _is_day(value: str) -> bool:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        return False
    return len(value) == 10


def _serialize(root: ET.Element) -> bytes:
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _split_name(name: str) -> tuple[str, str]:
    """(keyname, forenames), as arXiv splits an author: the last word is the key name."""
    forenames, _, keyname = name.rpartition(" ")
    return keyname, forenames


def _authors_string(names: list[str]) -> str:
    """The authors as a submitter types them: "A, B and C"."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _categories(entry: dict) -> str:
    primary = entry.get("primary_category") or entry["categories"][0]
    return " ".join(dict.fromkeys([primary, *entry["categories"]]))


def _record_element(parent: ET.Element, record: Record, prefix: str) -> None:
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
    namespace = ARXIV_RAW if prefix == "arXivRaw" else ARXIV_FORMAT
    metadata = ET.SubElement(ET.SubElement(node, f"{{{OAI}}}metadata"),
                             f"{{{namespace}}}{prefix}")

    def add(name: str, value: str | None, under: ET.Element = metadata) -> ET.Element | None:
        if not value:
            return None
        child = ET.SubElement(under, f"{{{namespace}}}{name}")
        child.text = value
        return child

    versions = version_times(entry)
    add("id", record.id)
    if prefix == "arXivRaw":
        add("submitter", entry["authors"][0] if entry["authors"] else "arXiv")
        for number, moment in enumerate(versions, start=1):
            version = ET.SubElement(metadata, f"{{{namespace}}}version", version=f"v{number}")
            add("date", moment.strftime("%a, %d %b %Y %H:%M:%S GMT"), version)
            add("size", "10kb", version)
        add("title", entry["title"])
        add("authors", _authors_string(entry["authors"]))
        add("categories", _categories(entry))
    else:  # arXiv: the latest version only
        add("created", versions[-1].date().isoformat())
        if record.datestamp != versions[-1].date().isoformat():
            add("updated", record.datestamp)
        authors = ET.SubElement(metadata, f"{{{namespace}}}authors")
        for name in entry["authors"]:
            author = ET.SubElement(authors, f"{{{namespace}}}author")
            keyname, forenames = _split_name(name)
            add("keyname", keyname, author)
            add("forenames", forenames, author)
        add("title", entry["title"])
        add("categories", _categories(entry))
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
                  content_type: str = "application/xml") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
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
            query = parse_qs(parts.query, keep_blank_values=True)
            args = {k: v[0] for k, v in query.items()}
            fault = standin._next_fault()
            if fault is not None:
                standin._record(args, 503, None)
                self._send(503, b"Retry after a while", {"Retry-After": str(fault[1])},
                           "text/plain")
                return
            body, error = standin.answer(query)
            standin._record(args, 200, error)
            self._send(200, body)

    return Handler
