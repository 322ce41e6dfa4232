"""arXiv searches through the ``arxiv`` package, behind one error boundary.

The package pages through results and parses the Atom feed; this module adds
what it lacks to be a polite, robust client of arXiv's API:

* a timeout on every request, and our User-Agent: ``_PoliteSession`` replaces
  the package's plain ``requests.Session``;
* the machine-wide request slot (``ratelimit``; deployment-wide with ``REDIS_URL``)
  instead of the package's per-client ``time.sleep``, which is switched off (``delay_seconds=0``);
* retries with exponential backoff and jitter (``scholarindex.core.retry``) on 429, 408,
  5xx, connection errors, timeouts and unexpectedly empty or malformed pages,
  per page, so a failure on page 2 does not refetch page 1. The package's own
  immediate retries are off (``num_retries=0``). A 400 is never retried. A
  ``Retry-After`` header (which ``arxiv.HTTPError`` does not keep) is read by
  ``_PoliteSession`` and attached to the error, so the wait obeys it, capped
  at ``ARXIV_RETRY_AFTER_MAX``.
* an empty first page is asked again (twice by default) before it counts as
  "no match": arXiv sometimes answers 200 with nothing in it, and caching that
  as a miss would hide the papers for a day. A batch of titles that truly
  matches nothing is rare (loose matching returns something for most titles),
  so the extra requests cost little;
* every library error becomes ``ArxivUnavailable`` or ``BadQuery`` here.

It overrides ``arxiv.Client._parse_feed``, the package's per-page fetch hook, and
``_format_url`` (an argument the ``ARXIV_API_URL`` format fixes, such as ``sortBy``,
is not sent twice), both stable through 2.x-4.0, and sets ``_session``: hence the upper bound on
``arxiv`` in ``pyproject.toml``, raised only once these are checked again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

import arxiv
import requests
from requests.structures import CaseInsensitiveDict
from tenacity import RetryCallState, Retrying, retry_if_exception

from scholarindex.core import stat_keys
from scholarindex.core.retry import is_retryable_status, parse_retry_after
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable, BadQuery, Cancelled
from scholarindex.enrichment.metadata import to_metadata
from scholarindex.enrichment.ratelimit import RequestSlot, build_limiter

logger = logging.getLogger(__name__)

# Receives (stat key, count) for what the fetcher did: requests sent, retries.
EventSink = Callable[[str, int], None]


def _ignore(name: str, count: int) -> None:
    """The default event sink: counts go nowhere."""


class _SuspectPage(Exception):
    """A 200 answer that is empty or unreadable where results were expected."""


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, arxiv.HTTPError):
        return is_retryable_status(exc.status)
    return isinstance(exc, (_SuspectPage, arxiv.UnexpectedEmptyPageError,
                            requests.ConnectionError, requests.Timeout,
                            requests.exceptions.ChunkedEncodingError))


class _PoliteSession(requests.Session):
    """Takes the shared request slot and applies a timeout to every request."""

    def __init__(self, limiter: RequestSlot, timeout: float, user_agent: str,
                 on_request: Callable[[], None]) -> None:
        super().__init__()
        self._limiter = limiter
        self._timeout = (min(10.0, timeout), timeout)  # (connect, read)
        self._user_agent = user_agent
        self._on_request = on_request
        self._last = threading.local()  # per thread: the Retry-After of its last answer

    @property
    def last_retry_after(self) -> float | None:
        """Seconds the last answer on this thread asked to wait (``Retry-After``), if any."""
        return getattr(self._last, "retry_after", None)

    def request(self, method, url, *args, **kwargs):
        if kwargs.get("timeout") is None:  # the arxiv package passes none
            kwargs["timeout"] = self._timeout
        headers = CaseInsensitiveDict(kwargs.get("headers") or {})
        headers["User-Agent"] = self._user_agent
        kwargs["headers"] = headers
        with self._limiter.slot():
            self._on_request()
            response = super().request(method, url, *args, **kwargs)
        self._last.retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return response


class _RetryingClient(arxiv.Client):
    """``arxiv.Client`` with per-page retries and a look at each first page."""

    def __init__(self, api_url: str, page_size: int, session: _PoliteSession,
                 retrying: Retrying, empty_confirmations: int) -> None:
        super().__init__(page_size=page_size, delay_seconds=0.0, num_retries=0)
        self.query_url_format = api_url
        self._session = session
        self._retrying = retrying
        self._empty_confirmations = empty_confirmations
        self._confirmations_left = 0
        self.total_results = 0

    def _format_url(self, search: arxiv.Search, start: int, page_size: int) -> str:
        """The package's page URL, without the arguments ``ARXIV_API_URL`` fixes itself
        (``...?{}&sortBy=submittedDate``): arXiv refuses none, but a repeated one is
        ambiguous, and the URL's own value is what its author meant."""
        fixed = {name for name, _ in parse_qsl(urlsplit(self.query_url_format.replace(
            "{}", "")).query, keep_blank_values=True)}
        args = {**search._url_args(), "start": str(start), "max_results": str(page_size)}
        return self.query_url_format.format(
            urlencode({name: value for name, value in args.items() if name not in fixed}))

    def start_search(self, confirm_empty: bool = True) -> None:
        self._confirmations_left = self._empty_confirmations if confirm_empty else 0
        self.total_results = 0

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0):
        return self._retrying(self._fetch_page, url, first_page)

    def _fetch_page(self, url: str, first_page: bool):
        try:
            feed = super()._parse_feed(url, first_page=first_page)
        except arxiv.HTTPError as exc:
            exc.retry_after = self._session.last_retry_after  # read by the policy's wait
            raise
        if feed.malformed:
            raise _SuspectPage(f"unreadable feed ({feed.error})")
        if first_page:
            if not feed.results and feed.header.total_results > 0:
                raise _SuspectPage(f"empty page of {feed.header.total_results} results")
            if not feed.results and self._confirmations_left > 0:
                self._confirmations_left -= 1
                raise _SuspectPage("empty first page (asking again to confirm)")
            self.total_results = feed.header.total_results
        return feed


@dataclass(frozen=True)
class SearchResult:
    """The entries one query returned, and how many arXiv said matched."""

    entries: list[dict]
    total: int

    @property
    def truncated(self) -> bool:
        """Whether more entries matched than were fetched."""
        return self.total > len(self.entries)


class ArxivFetcher:
    """Runs searches against ``ARXIV_API_URL``; blocking, so never on the reactor."""

    def __init__(self, config: EnrichmentConfig, stop: threading.Event | None = None,
                 on_event: EventSink | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        """``sleep`` replaces the stoppable wait between retries (tests observe it)."""
        self._config = config
        self._stop = stop or threading.Event()
        self._on_event = on_event if on_event is not None else _ignore
        limiter = build_limiter(config, stop=self._stop)
        self._session = _PoliteSession(
            limiter, config.timeout_seconds, config.user_agent,
            on_request=lambda: self._on_event(stat_keys.ARXIV_REQUESTS, 1))
        policy = config.retry_policy()
        retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            stop=policy.stop(),
            wait=policy.wait(),
            sleep=sleep or self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )
        self._client = _RetryingClient(config.api_url, config.page_size, self._session, retrying,
                               config.empty_page_confirmations)

    def _sleep(self, seconds: float) -> None:
        if self._stop.wait(seconds):
            raise Cancelled("shutting down during an arXiv retry backoff")

    def _count_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        logger.info("arXiv request failed (%s); retry %d", error, state.attempt_number)
        self._on_event(stat_keys.ARXIV_RETRIES, 1)

    def search(self, query: str, confirm_empty: bool = True) -> SearchResult:
        """All entries for ``query``, up to ``page_size * max_pages``.

        An empty first page is asked again ``empty_page_confirmations`` times, unless
        ``confirm_empty`` is false (a best-effort query, where a missed answer costs
        little). Raises ``BadQuery`` on HTTP 400, ``ArxivUnavailable`` when arXiv
        still fails after the retries, ``Cancelled`` when stopped meanwhile.
        """
        cap = self._config.page_size * self._config.max_pages
        search = arxiv.Search(query=query, max_results=cap)
        self._client.start_search(confirm_empty)
        attempts = self._config.max_attempts
        try:
            results = list(self._client.results(search))
        except arxiv.HTTPError as exc:
            if exc.status == 400:
                raise BadQuery(f"arXiv rejected the query (HTTP 400): {query[:200]}") from exc
            raise ArxivUnavailable(f"HTTP {exc.status} after {attempts} attempts") from exc
        except (_SuspectPage, arxiv.UnexpectedEmptyPageError) as exc:
            raise ArxivUnavailable(f"{exc} after {attempts} attempts") from exc
        except requests.Timeout as exc:
            raise ArxivUnavailable(f"no answer within {self._config.timeout_seconds:g} s "
                                   f"after {attempts} attempts") from exc
        except requests.RequestException as exc:
            raise ArxivUnavailable(f"connection failed after {attempts} attempts: "
                                   f"{type(exc).__name__}") from exc
        entries = [to_metadata(result) for result in results]
        return SearchResult(entries, max(self._client.total_results, len(entries)))

    def close(self) -> None:
        """Close the HTTP connection."""
        self._session.close()
