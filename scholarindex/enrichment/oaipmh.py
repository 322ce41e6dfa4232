"""arXiv's OAI-PMH endpoint: ``ListRecords`` in the ``arXivRaw`` metadata format, page by page.

arXiv asks bulk users to harvest metadata over OAI-PMH (``ARXIV_OAI_URL``,
https://oaipmh.arxiv.org/oai since 2025) rather than search its query API title by
title. This is the thin client the harvester (``scholarindex.enrichment.harvest``) needs: one
verb, selective harvesting (``set``, ``from``), resumption tokens, the OAI errors
(``noRecordsMatch``: an empty list; ``badResumptionToken``: the token expired,
restart from the checkpoint; anything else: a refused request, ``OaiError``, whose
``reason`` is arXiv's own words, "start date too early") and 503 with ``Retry-After``.

Why ``arXivRaw``: enrichment checks a listed year against the paper's *first*
version, and arXiv's ``arXiv`` format describes the latest version only: on the
current endpoint its ``<created>`` is the day the latest version was submitted
(0806.4129: v1 2008-06-25, v6 2014-12-12, ``<created>2014-12-12``), and no format
but ``arXivRaw`` gives older versions' dates. ``arXivRaw`` lists every version with
its submission time, so one format, at the same cost of one request per page, gives
the first version's date and time (``published``, the query API's value to the
second), the latest's (``updated``) and the latest version number (``entry_id``).
It gives the rest as submitted: the authors as one string and TeX accents unread,
which ``scholarindex.enrichment.arxiv_raw`` splits and reads as arXiv's own parser and the query
API do; ``scholarindex.enrichment.metadata.build_metadata`` then normalises every field exactly as
for the query API. Titles keep their TeX, as the query API gives them.

Not sent: ``until`` (arXiv asks incremental harvesters to leave it out, and the day
boundary gains nothing: a run stores what it is given, and the next starts from the
day this one started). Tokens carry no total (arXiv's no longer count the list) and
expire: at their ``expirationDate``, or the next UTC midnight when they give none.

Written on ``requests`` and ``xml.etree`` rather than taken from PyPI: the one
client in use, ``sickle``, had its last release (0.7.0) in 2020, sleeps on 503 in
its own loop outside our machine-wide request slot, and parses into generic
records we would convert anyway. What we need is ~200 lines that share the query
client's rate limiter (``ratelimit``: one request every ``ARXIV_DELAY_SECONDS``,
never below 3 s against arXiv, across every process) and retry policy
(``scholarindex.core.retry``).

Blocking: call it from the harvest command, never from a reactor.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

import requests

from scholarindex.core.retry import is_retryable_status, parse_retry_after
from scholarindex.enrichment.arxiv_raw import split_authors, tex_accents, version_dates
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable, Cancelled, EnrichmentError
from scholarindex.enrichment.metadata import build_metadata
from scholarindex.enrichment.ratelimit import build_limiter

logger = logging.getLogger(__name__)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
METADATA_PREFIX = "arXivRaw"
# Identify's earliestDatestamp at arXiv: no record changed before; it refuses an earlier from=.
EARLIEST_DATESTAMP = "2005-09-16"


class OaiError(EnrichmentError):
    """The endpoint refused the request (an OAI-PMH error other than noRecordsMatch).

    ``reason`` is the endpoint's own explanation: the text after "Reason:" in arXiv's
    answers ("start date too early", "Set does not exist"), else the whole text.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.reason = message.rsplit("Reason:", 1)[-1].strip() if message else code
        super().__init__(f"{code}: {self.reason}")


class BadResumptionToken(OaiError):
    """The resumption token expired (arXiv's expire daily) or is unknown."""


@dataclass(frozen=True)
class Record:
    """One article: ``metadata`` has the keys of ``enrichment.metadata`` (None when deleted);
    ``versions`` every version's submission time (ISO 8601, UTC), v1 first."""

    id: str
    datestamp: str  # YYYY-MM-DD: when the record last changed
    sets: tuple[str, ...]
    metadata: dict | None
    versions: tuple[str, ...] = ()

    @property
    def deleted(self) -> bool:
        return self.metadata is None


@dataclass(frozen=True)
class Page:
    """One ``ListRecords`` answer."""

    records: list[Record]
    token: str | None  # None on the last page
    token_expires: datetime | None  # when ``token`` stops working


def _text(node: ET.Element, name: str) -> str | None:
    return node.findtext(ARXIV_RAW + name)


def metadata_from_arxiv_raw(node: ET.Element) -> tuple[dict, tuple[str, ...]]:
    """The metadata dict of ``scholarindex.enrichment.metadata`` and every version's time, from an
    ``<arXivRaw>`` element. ValueError when it lists no version with a readable date."""
    arxiv_id = (_text(node, "id") or "").strip()
    versions = version_dates(node, ARXIV_RAW)
    if not versions:
        raise ValueError(f"record {arxiv_id or '?'} lists no version")
    metadata = build_metadata(
        arxiv_id=arxiv_id, version=len(versions), title=_text(node, "title"),
        authors=split_authors(tex_accents(_text(node, "authors") or "")),
        categories=(_text(node, "categories") or "").split(), published=versions[0],
        updated=versions[-1], doi=_text(node, "doi"), journal_ref=_text(node, "journal-ref"),
        comment=_text(node, "comments"), summary=_text(node, "abstract"))
    return metadata, tuple(v.isoformat() for v in versions)


def _record(node: ET.Element) -> Record:
    header = node.find(OAI + "header")
    if header is None:
        raise ValueError("record without a header")
    identifier = header.findtext(OAI + "identifier") or ""
    arxiv_id = identifier.rsplit(":", 1)[-1]  # oai:arXiv.org:hep-th/9901001 -> hep-th/9901001
    sets = tuple(s.text.strip() for s in header.findall(OAI + "setSpec") if s.text)
    datestamp = (header.findtext(OAI + "datestamp") or "")[:10]
    if header.get("status") == "deleted":
        return Record(arxiv_id, datestamp, sets, None)
    found = node.find(f"{OAI}metadata/{ARXIV_RAW}arXivRaw")
    if found is None:
        raise ValueError(f"record {identifier} has no arXivRaw metadata")
    metadata, versions = metadata_from_arxiv_raw(found)
    if not metadata["id"]:
        metadata["id"] = arxiv_id
    return Record(metadata["id"], datestamp, sets, metadata, versions)


def _next_utc_midnight(now: datetime) -> datetime:
    return datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)


def parse_page(body: bytes, now: datetime | None = None) -> Page:
    """A ``ListRecords`` answer; ``OaiError`` for an OAI error, ``ValueError`` if unreadable."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ValueError(f"unreadable OAI-PMH answer: {exc}") from None
    error = root.find(OAI + "error")
    if error is not None:
        code, message = error.get("code") or "unknown", (error.text or "").strip()
        if code == "noRecordsMatch":
            return Page([], None, None)
        if code == "badResumptionToken":
            raise BadResumptionToken(code, message)
        raise OaiError(code, message)
    listing = root.find(OAI + "ListRecords")
    if listing is None:
        raise ValueError("OAI-PMH answer without ListRecords")
    records = [_record(node) for node in listing.findall(OAI + "record")]
    token_node = listing.find(OAI + "resumptionToken")
    token, expires = None, None
    if token_node is not None:
        token = (token_node.text or "").strip() or None
        stamp = token_node.get("expirationDate")
        try:
            expires = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
        except ValueError:
            expires = None
        if token and expires is None:  # arXiv's tokens last until the next UTC midnight
            expires = _next_utc_midnight(now or datetime.now(UTC))
    return Page(records, token, expires)


# Receives (event, count): REQUESTS for every HTTP request sent, RETRIES for every retry.
EventSink = Callable[[str, int], None]
REQUESTS = "requests"
RETRIES = "retries"


def _ignore(name: str, count: int) -> None:
    """The default event sink: counts go nowhere."""


class OaiClient:
    """``ListRecords`` against ``config.oai_url``, polite and retried."""

    def __init__(self, config: EnrichmentConfig, stop: threading.Event | None = None,
                 on_event: EventSink | None = None) -> None:
        self.base_url = config.oai_url
        self._config = config
        self._stop = stop or threading.Event()
        self._on_event = on_event if on_event is not None else _ignore
        # The crawl's slot: per machine, or the deployment's with REDIS_URL.
        self._limiter = build_limiter(config, self._stop, url=config.oai_url)
        self._policy = config.retry_policy()
        self._session = requests.Session()
        self._session.headers["User-Agent"] = config.user_agent
        self._timeout = (min(10.0, config.timeout_seconds), config.timeout_seconds)

    def list_records(self, *, set_spec: str | None = None, from_day: str | None = None,
                     token: str | None = None) -> Page:
        """One page: the first of a selective harvest, or the one ``token`` points at.

        Raises ``BadResumptionToken``, ``OaiError`` (a request the endpoint refuses),
        ``ArxivUnavailable`` (still failing after the retries) or ``Cancelled``.
        """
        if token is not None:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            params = {"verb": "ListRecords", "metadataPrefix": METADATA_PREFIX}
            for name, value in (("set", set_spec), ("from", from_day)):
                if value:
                    params[name] = value
        problem = ""
        for attempt in range(1, self._config.max_attempts + 1):
            wait: float | None = None
            try:
                with self._limiter.slot():
                    self._on_event(REQUESTS, 1)
                    response = self._session.get(self.base_url, params=params,
                                                 timeout=self._timeout)
                if response.status_code == 200:
                    return parse_page(response.content)
                problem = f"HTTP {response.status_code}"
                if not is_retryable_status(response.status_code):
                    raise OaiError(f"http{response.status_code}",
                                   f"{self.base_url} answered {problem}")
                wait = parse_retry_after(response.headers.get("Retry-After"))
            except (requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                problem = type(exc).__name__
            except ValueError as exc:  # an unreadable page: worth another try
                problem = str(exc)
            if attempt == self._config.max_attempts:
                break
            wait = self._policy.delay_after(attempt, wait)
            logger.info("OAI-PMH request failed (%s); retry %d in %.1f s", problem, attempt, wait)
            self._on_event(RETRIES, 1)
            if self._stop.wait(wait):
                raise Cancelled("shutting down during an OAI-PMH retry pause")
        raise ArxivUnavailable(f"{self.base_url}: {problem} after "
                               f"{self._config.max_attempts} attempts")

    def close(self) -> None:
        """Close the HTTP connection."""
        self._session.close()
