"""arXiv's OAI-PMH endpoint: ``ListRecords`` in the ``arXiv`` metadata format, page by page.

arXiv asks bulk users to harvest metadata over OAI-PMH (``ARXIV_OAI_URL``,
https://oaipmh.arxiv.org/oai since 2025) rather than search its query API title by
title. This is the thin client the harvester (``enrichment.harvest``) needs: one
verb, selective harvesting (``set``, ``from``, ``until``), resumption tokens, the
three OAI errors that matter (``noRecordsMatch``: an empty list;
``badResumptionToken``: the token expired, restart from the checkpoint; anything
else: a bad request) and 503 with ``Retry-After``.

Written on ``requests`` and ``xml.etree`` rather than taken from PyPI: the one
client in use, ``sickle``, had its last release (0.7.0) in 2020, sleeps on 503 in
its own loop outside our machine-wide request slot, and parses into generic
records we would convert anyway. What we need is ~150 lines that share the query
client's rate limiter (``ratelimit``: one request every ``ARXIV_DELAY_SECONDS``,
never below 3 s against arXiv, across every process) and retry policy
(``core.retry``).

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

from core.retry import is_retryable_status, parse_retry_after
from enrichment.config import EnrichmentConfig
from enrichment.errors import ArxivUnavailable, Cancelled, EnrichmentError
from enrichment.ratelimit import build_limiter

logger = logging.getLogger(__name__)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV_FORMAT = "{http://arxiv.org/OAI/arXiv/}"
METADATA_PREFIX = "arXiv"


class OaiError(EnrichmentError):
    """The endpoint refused the request (an OAI-PMH error other than noRecordsMatch)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class BadResumptionToken(OaiError):
    """The resumption token expired (arXiv's expire at the next UTC midnight) or is unknown."""


@dataclass(frozen=True)
class Record:
    """One article: ``metadata`` has the keys of ``enrichment.metadata`` (None when deleted)."""

    id: str
    datestamp: str  # YYYY-MM-DD: when the record last changed
    sets: tuple[str, ...]
    metadata: dict | None

    @property
    def deleted(self) -> bool:
        return self.metadata is None


@dataclass(frozen=True)
class Page:
    """One ``ListRecords`` answer."""

    records: list[Record]
    token: str | None  # None on the last page
    complete_size: int | None  # records in the whole list, when the server says
    token_expires: datetime | None  # when ``token`` stops working


def _text(node: ET.Element, name: str) -> str | None:
    """An element's text with its whitespace collapsed; None when absent or empty."""
    value = " ".join((node.findtext(ARXIV_FORMAT + name) or "").split())
    return value or None


def _author(node: ET.Element) -> str:
    parts = [_text(node, "forenames"), _text(node, "keyname"), _text(node, "suffix")]
    return " ".join(p for p in parts if p)


def metadata_from_arxiv_format(node: ET.Element) -> dict:
    """The metadata dict of ``enrichment.metadata`` from an ``<arXiv>`` element.

    The format has no version number and dates without a time: ``entry_id`` is the
    abstract URL without version, ``published``/``updated`` are midnight UTC of the
    first and latest version's day.
    """
    arxiv_id = _text(node, "id") or ""
    created = _text(node, "created")
    updated = _text(node, "updated") or created
    categories = (_text(node, "categories") or "").split()
    authors = node.find(ARXIV_FORMAT + "authors")
    return {
        "id": arxiv_id,
        "entry_id": f"http://arxiv.org/abs/{arxiv_id}",
        "title": _text(node, "title") or "",
        "authors": [_author(a) for a in authors.findall(ARXIV_FORMAT + "author")]
        if authors is not None else [],
        "primary_category": categories[0] if categories else None,
        "categories": categories,
        "published": f"{created}T00:00:00+00:00" if created else None,
        "updated": f"{updated}T00:00:00+00:00" if updated else None,
        "pdf_url": f"http://arxiv.org/pdf/{arxiv_id}",
        "doi": _text(node, "doi"),
        "journal_ref": _text(node, "journal-ref"),
        "comment": _text(node, "comments"),
        "summary": _text(node, "abstract"),
    }


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
    found = node.find(f"{OAI}metadata/{ARXIV_FORMAT}arXiv")
    if found is None:
        raise ValueError(f"record {identifier} has no arXiv-format metadata")
    metadata = metadata_from_arxiv_format(found)
    return Record(metadata["id"] or arxiv_id, datestamp, sets, metadata)


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
            return Page([], None, 0, None)
        if code == "badResumptionToken":
            raise BadResumptionToken(code, message)
        raise OaiError(code, message)
    listing = root.find(OAI + "ListRecords")
    if listing is None:
        raise ValueError("OAI-PMH answer without ListRecords")
    records = [_record(node) for node in listing.findall(OAI + "record")]
    token_node = listing.find(OAI + "resumptionToken")
    token, size, expires = None, None, None
    if token_node is not None:
        token = (token_node.text or "").strip() or None
        listed = token_node.get("completeListSize") or ""
        size = int(listed) if listed.isdigit() else None
        stamp = token_node.get("expirationDate")
        try:
            expires = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
        except ValueError:
            expires = None
        if token and expires is None:  # arXiv's tokens last until the next UTC midnight
            expires = _next_utc_midnight(now or datetime.now(UTC))
    return Page(records, token, size, expires)


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
                     until_day: str | None = None, token: str | None = None) -> Page:
        """One page: the first of a selective harvest, or the one ``token`` points at.

        Raises ``BadResumptionToken``, ``OaiError`` (a request the endpoint refuses),
        ``ArxivUnavailable`` (still failing after the retries) or ``Cancelled``.
        """
        if token is not None:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            params = {"verb": "ListRecords", "metadataPrefix": METADATA_PREFIX}
            for name, value in (("set", set_spec), ("from", from_day), ("until", until_day)):
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
