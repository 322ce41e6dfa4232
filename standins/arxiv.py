"""A stand-in arXiv API: a real HTTP server on 127.0.0.1 answering in arXiv's Atom format.

    with ArxivStandIn() as arxiv_api:
        config = EnrichmentConfig(api_url=arxiv_api.api_url, ...)
        arxiv_api.fail_next("503", times=2)
        ...
        assert arxiv_api.request_count == 1

It serves ``fixtures/arxiv/*.json`` (recorded-style entries plus decoys) for
``/api/query?search_query=...&start=...&max_results=...``, and behaves as arXiv
does where the enricher cares:

* titles match loosely: an entry matches ``ti:"w1 w2 ..."`` when its title's
  words, lower-cased, split at hyphens and with a plural "s" dropped, include
  every word of the phrase (in any order: looser than arXiv's phrase match, so
  more decoys come back);
* a fielded query, ``(ti:w1 AND ti:w2 AND au:surname)`` clauses joined by ``OR``,
  matches an entry whose title holds every ``ti:`` word and whose authors include
  every ``au:`` name (a surname or a full name, as its words);
* a query with a non-ASCII character, a stray double quote, an empty phrase or
  anything but those clauses in parentheses gets HTTP 400;
* ``refuse_words`` (a set): a phrase holding one of these words gets a 400, as
  arXiv refuses some queries for reasons a client cannot predict;
* ``fail_next(mode, times)`` makes the next requests answer "429", "503",
  "400", "empty" (200 with a valid feed of no entries), "blank" (200 with no
  body) or "hang" (no answer until the client gives up); ``retry_after`` adds
  that ``Retry-After`` header (seconds or an HTTP-date) to a 429 or 503;
* every request is recorded (``requests``: time, query, start, max_results,
  status), so tests can count them and check their spacing.

It stops itself when the ``with`` block ends. Nothing here imports the code
under test.
"""

from __future__ import annotations

import json
import re
import threading
import time
import unicodedata
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit
from xml.etree import ElementTree as ET

from standins.loopback import LoopbackServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"
ATOM = "http://www.w3.org/2005/Atom"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
ARXIV = "http://arxiv.org/schemas/atom"
ET.register_namespace("", ATOM)
ET.register_namespace("opensearch", OPENSEARCH)
ET.register_namespace("arxiv", ARXIV)

FAULTS = ("429", "503", "400", "empty", "blank", "hang")
_CLAUSE = re.compile(r'ti:"([^"]*)"|ti:([A-Za-z0-9]+)')


def load_entries(directory: Path = FIXTURES) -> list[dict]:
    """Every entry of the fixture files; decoys first, so they rank before the real paper."""
    files = sorted(directory.glob("*.json"), key=lambda p: (p.name != "decoys.json", p.name))
    return [entry for path in files for entry in json.loads(path.read_text("utf-8"))["entries"]]


def _tokens(text: str) -> set[str]:
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch)).lower()
    words = re.findall(r"[a-z0-9]+", plain)
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in words}


class BadQueryError(ValueError):
    """The query would get a 400 from arXiv."""


def parse_query(query: str) -> list[set[str]]:
    """The word sets of the ``ti:`` clauses; ``BadQueryError`` where arXiv answers 400."""
    if not query.isascii():
        raise BadQueryError("non-ASCII query")
    phrases = [m.group(1) if m.group(1) is not None else m.group(2)
               for m in _CLAUSE.finditer(query)]
    rest = _CLAUSE.sub(" ", query).replace("(", " ( ").replace(")", " ) ").split()
    if not phrases or any(token not in {"(", ")", "OR"} for token in rest):
        raise BadQueryError(f"unparsable query: {query!r}")
    if rest.count("(") != rest.count(")"):
        raise BadQueryError("unbalanced parentheses")
    sets = [_tokens(p) for p in phrases]
    if not all(sets):
        raise BadQueryError("empty phrase")
    return sets


_TERM = re.compile(r'\(|\)|(ti|au):"([^"]*)"|(ti|au):([A-Za-z0-9]+)|AND\b|OR\b|\S+')
Conjunction = tuple[frozenset[str], tuple[frozenset[str], ...]]  # title words, author names


def parse_fielded(query: str) -> list[Conjunction]:
    """A query of ``ti:`` and ``au:`` terms with ``AND``, ``OR`` and parentheses, as the
    conjunctions it ORs (title words, author names); ``BadQueryError`` where arXiv
    answers 400."""
    if not query.isascii():
        raise BadQueryError("non-ASCII query")
    tokens = [m for m in _TERM.finditer(query)]
    position = 0

    def peek() -> str | None:
        return tokens[position].group(0) if position < len(tokens) else None

    def either() -> list[Conjunction]:
        nonlocal position
        found = both()
        while peek() == "OR":
            position += 1
            found += both()
        return found

    def both() -> list[Conjunction]:
        nonlocal position
        found = term()
        while peek() == "AND":
            position += 1
            found = [(t1 | t2, a1 + a2) for t1, a1 in found for t2, a2 in term()]
        return found

    def term() -> list[Conjunction]:
        nonlocal position
        if position >= len(tokens):
            raise BadQueryError(f"unparsable query: {query!r}")
        token = tokens[position]
        position += 1
        if token.group(0) == "(":
            found = either()
            if peek() != ")":
                raise BadQueryError("unbalanced parentheses")
            position += 1
            return found
        field, text = token.group(1) or token.group(3), token.group(2) or token.group(4)
        if field is None or not _tokens(text or ""):
            raise BadQueryError(f"unparsable query: {query!r}")
        if field == "ti":
            return [(frozenset(_tokens(text)), ())]
        return [(frozenset(), (frozenset(_tokens(text)),))]

    found = either()
    if position != len(tokens):
        raise BadQueryError(f"unparsable query: {query!r}")
    return found


@dataclass(frozen=True)
class Recorded:
    """One request the stand-in received."""

    at: float
    query: str
    start: int
    max_results: int
    status: int


class ArxivStandIn:
    """The server; use as a context manager."""

    def __init__(self, entries: list[dict] | None = None, hang_seconds: float = 30.0) -> None:
        self.entries = entries if entries is not None else load_entries()
        self._titles = [_tokens(e["title"]) for e in self.entries]
        self.hang_seconds = hang_seconds
        self.requests: list[Recorded] = []
        self.refuse_words: set[str] = set()
        self._faults: deque[tuple[str, str | None]] = deque()  # (mode, Retry-After)
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._http = LoopbackServer(_handler_for(self), "arxiv-standin")

    # --- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> ArxivStandIn:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()  # let hanging handlers finish
        self._http.stop()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._http.port}"

    @property
    def api_url(self) -> str:
        """An ``ARXIV_API_URL`` (``arxiv.Client.query_url_format``) pointing here."""
        return f"{self.base}/api/query?{{}}"

    # --- controls --------------------------------------------------------------------

    def fail_next(self, mode: str, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with the fault ``mode`` (see ``FAULTS``).

        ``retry_after``: the ``Retry-After`` header value sent with a 429 or 503.
        """
        if mode not in FAULTS:
            raise ValueError(f"unknown fault {mode!r}; one of {FAULTS}")
        with self._lock:
            self._faults.extend([(mode, retry_after)] * times)

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
    def queries(self) -> list[str]:
        with self._lock:
            return [r.query for r in self.requests]

    # --- answering -------------------------------------------------------------------

    def _next_fault(self) -> tuple[str | None, str | None]:
        with self._lock:
            return self._faults.popleft() if self._faults else (None, None)

    def _record(self, query: str, start: int, max_results: int, status: int) -> None:
        with self._lock:
            self.requests.append(Recorded(time.time(), query, start, max_results, status))

    def matches(self, query: str) -> list[dict]:
        """The entries a query matches, in serving order."""
        if "AND" in query or "au:" in query:
            return self.fielded_matches(query)
        phrases = parse_query(query)
        if any(p & self.refuse_words for p in phrases):
            raise BadQueryError("refused word")
        return [e for e, words in zip(self.entries, self._titles, strict=True)
                if any(p <= words for p in phrases)]

    def fielded_matches(self, query: str) -> list[dict]:
        """The entries a fielded (``ti:``/``au:`` with ``AND``) query matches."""
        clauses = parse_fielded(query)
        if any(title & self.refuse_words for title, _ in clauses):
            raise BadQueryError("refused word")

        def by(names: tuple[frozenset[str], ...], entry: dict) -> bool:
            people = [_tokens(author) for author in entry["authors"]]
            return all(any(name <= person for person in people) for name in names)
        return [e for e, words in zip(self.entries, self._titles, strict=True)
                if any(title <= words and by(names, e) for title, names in clauses)]

    def feed(self, query: str, start: int, max_results: int, entries: list[dict],
             total: int) -> bytes:
        """An Atom page in arXiv's current format."""
        root = ET.Element(f"{{{ATOM}}}feed")
        link = f"{self.base}/api/query?" + urlencode(
            {"search_query": query, "start": start, "max_results": max_results})
        ET.SubElement(root, f"{{{ATOM}}}id").text = link
        ET.SubElement(root, f"{{{ATOM}}}title").text = f"arXiv Query: search_query={query}"
        ET.SubElement(root, f"{{{ATOM}}}updated").text = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                        time.gmtime())
        ET.SubElement(root, f"{{{ATOM}}}link", href=link, type="application/atom+xml")
        ET.SubElement(root, f"{{{OPENSEARCH}}}itemsPerPage").text = str(max_results)
        ET.SubElement(root, f"{{{OPENSEARCH}}}totalResults").text = str(total)
        ET.SubElement(root, f"{{{OPENSEARCH}}}startIndex").text = str(start)
        for entry in entries:
            _entry(root, entry)
        return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _entry(root: ET.Element, data: dict) -> None:
    entry = ET.SubElement(root, f"{{{ATOM}}}entry")
    ET.SubElement(entry, f"{{{ATOM}}}id").text = f"http://arxiv.org/abs/{data['id']}"
    ET.SubElement(entry, f"{{{ATOM}}}title").text = data["title"]
    ET.SubElement(entry, f"{{{ATOM}}}updated").text = data["updated"]
    ET.SubElement(entry, f"{{{ATOM}}}link", href=f"https://arxiv.org/abs/{data['id']}",
                  rel="alternate", type="text/html")
    ET.SubElement(entry, f"{{{ATOM}}}link", href=f"https://arxiv.org/pdf/{data['id']}",
                  rel="related", type="application/pdf", title="pdf")
    if data.get("doi"):
        ET.SubElement(entry, f"{{{ATOM}}}link", href=f"https://doi.org/{data['doi']}",
                      rel="related", title="doi")
    ET.SubElement(entry, f"{{{ATOM}}}summary").text = data["summary"]
    for term in data["categories"]:
        ET.SubElement(entry, f"{{{ATOM}}}category", term=term, scheme="http://arxiv.org/schemas/atom")
    ET.SubElement(entry, f"{{{ATOM}}}published").text = data["published"]
    for field in ("comment", "journal_ref", "doi"):
        if data.get(field):
            ET.SubElement(entry, f"{{{ARXIV}}}{field}").text = data[field]
    ET.SubElement(entry, f"{{{ARXIV}}}primary_category", term=data["primary_category"],
                  scheme="http://arxiv.org/schemas/atom")
    for name in data["authors"]:
        author = ET.SubElement(entry, f"{{{ATOM}}}author")
        ET.SubElement(author, f"{{{ATOM}}}name").text = name


def _handler_for(standin: ArxivStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/atom+xml",
                  retry_after: str | None = None) -> None:
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/api/query":
                self._send(404, b"not found", "text/plain")
                return
            args = parse_qs(parts.query, keep_blank_values=True)
            query = args.get("search_query", [""])[0]
            start = int(args.get("start", ["0"])[0] or 0)
            size = int(args.get("max_results", ["10"])[0] or 10)
            fault, retry_after = standin._next_fault()
            status = 200
            if fault in ("429", "503", "400"):
                status = int(fault)
            elif fault == "hang":
                standin._record(query, start, size, 0)
                standin._released.wait(standin.hang_seconds)
                self.close_connection = True
                return
            else:
                try:
                    found = standin.matches(query)
                except BadQueryError:
                    status = 400
            standin._record(query, start, size, status)
            if status != 200:
                self._send(status, f"HTTP {status}".encode(), "text/plain",
                           retry_after if status in (429, 503) else None)
            elif fault == "blank":
                self._send(200, b"")
            elif fault == "empty":
                self._send(200, standin.feed(query, start, size, [], 0))
            else:
                self._send(200, standin.feed(query, start, size, found[start:start + size],
                                             len(found)))

    return Handler


# --- the fixture profiles, as the enrichment tests see them ----------------------------

EXPECTED = Path(__file__).resolve().parent.parent / "fixtures" / "expected"

# Which seed listing each recorded-style entry is (by the title the profile prints).
# Listings of the same work on other profiles share the id; every other work has none.
ARXIV_ID_OF_SEED = {
    "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning":
        "2603.08127",
    "Cross-Modal ASR Post-Processing System for Error Correction and Utterance Rejection":
        "2201.03313",
    "FFConv: Fast Factorized Convolutional Neural Network Inference on Encrypted Data":
        "2208.03160",
    "LSTMSPLIT: Effective SPLIT Learning based LSTM on Sequential Time-Series Data": "2203.04305",
    "Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs": "1301.6412",
    "DisagMoE: Computation-Communication overlapped MoE Training via Disaggregated AF-Pipe "
    "Parallelism": "2601.07719",
    "SRT: Accelerating Reinforcement Learning via Speculative Rollout with Tree-Structured Cache":
        "2602.13316",
    "ByteComp: Revisiting Gradient Compression in Distributed Training": "2205.14465",
    "dPRO: A Generic Profiling and Optimization System for Expediting Distributed DNN Training":
        "2205.02473",
    "Accelerated Large Batch Optimization of BERT Pretraining in 54 minutes": "2006.13484",
    "GluonCV and GluonNLP: Deep Learning in Computer Vision and Natural Language Processing":
        "1907.04433",
    "ResNeSt: Split-Attention Networks": "2004.08955",
    "LoKA: Low-precision Kernel Applications for Recommendation Models At Scale": "2604.11235",
    "m3BERT: A Modern, Multi-lingual, Matryoshka Bidirectional Encoder": "2609.02281",
    "A Self-Paced Mixed Distillation Method for Non-Autoregressive Generation": "2205.11162",
    "Age of Information with Hybrid-ARQ: A Unified Explicit Result": "2204.06622",
    "New Upper Bounds on the Error Probability under ML Decoding for Spinal Codes and the Joint "
    "Transmission-Decoding System Design": "2207.13208",
    "NGAME: Negative Mining-aware Mini-batching for Extreme Classification": "2207.04452",
    "Taming Sparsely Activated Transformer with Stochastic Experts": "2110.04260",
    "The Counterfactual-Shapley Value: Attributing Change in System Metrics": "2208.08399",
    "TwinBERT: Distilling Knowledge to Twin-Structured BERT Models for Efficient Retrieval":
        "2002.06275",
    "BEAM: Binary Expert Activation Masking for Dynamic Routing in MoE": "2605.09318",
    "EDiT: A Local-SGD-Based Efficient Distributed Training Method for Large Language Models":
        "2412.10047",
}


def profile_works() -> list[dict]:
    """Every work listing of the seed and held-out pages: title, year, owner, printed authors."""
    rows = []
    for path in sorted(EXPECTED.glob("*.json")):
        page = json.loads(path.read_text("utf-8"))
        owner = (page.get("researcher") or {}).get("name")
        for work in page.get("works") or []:
            rows.append({"page": path.stem, "title": work["title"], "year": work.get("year"),
                         "researcher_name": owner, "authors": work.get("authors") or []})
    return rows
