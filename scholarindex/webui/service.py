"""``SearchService``: the only code of the UI that talks to OpenSearch, and only to read.

It builds requests with ``scholarindex.search.query``, sends them (one quick retry when the
cluster blinked), reads answers with ``scholarindex.webui.results`` and turns every
OpenSearch failure into a ``scholarindex.webui.http_errors`` exception at one boundary, so routes
stay thin: call, render, or let the app's error handler answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc
from tenacity import Retrying, retry_if_exception

from scholarindex.core.retry import RetryPolicy, is_retryable_status
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.shapes import (
    ProfileRef,
    ResearcherDoc,
    WorkDoc,
    researcher_of,
    work_of,
)
from scholarindex.search.errors import InvalidRequest, NotFound, ServiceUnavailable
from scholarindex.search.matching import loose_levels
from scholarindex.search.params import SearchRequest
from scholarindex.search.query import (
    namesakes_body,
    researcher_works_body,
    search_body,
    shared_works_body,
    suggest_searches,
    text_matches,
)
from scholarindex.webui.browse_cache import BrowseCache, IndexState, index_state
from scholarindex.webui.cross_site import linked, namesakes
from scholarindex.webui.http_errors import UNAVAILABLE_MESSAGE, opensearch_errors
from scholarindex.webui.results import (
    AlsoOn,
    ResearcherPage,
    SearchResult,
    Suggestion,
    parse_researcher,
    parse_search,
    parse_suggestions,
)

T = TypeVar("T")
logger = logging.getLogger(__name__)
MAX_SUGGEST_CHARS = 100
MIN_SUGGEST_CHARS = 2
MAX_ID_CHARS = 200


def _transient(exc: BaseException) -> bool:
    """Worth one more try at once: refused/reset connection, overload, a node restarting.

    Not a timeout (nor the cluster's 408): the user has already waited the whole
    timeout once.
    """
    if isinstance(exc, os_exc.ConnectionTimeout):
        return False
    if isinstance(exc, os_exc.ConnectionError):
        return True
    return (isinstance(exc, os_exc.TransportError) and isinstance(exc.status_code, int)
            and exc.status_code != 408 and is_retryable_status(exc.status_code))


class SearchService:
    """Searches the ``{prefix}works`` and ``{prefix}researchers`` aliases."""

    def __init__(self, client: OpenSearch, prefix: str = "", *, attempts: int = 2,
                 sleep: Callable[[float], None] = time.sleep, cache_browsing: bool = True):
        self.client = client
        self.prefix = prefix
        # One quick retry: a person is waiting for the page.
        self._retry = RetryPolicy(attempts=max(1, attempts), initial_wait=0.1, max_wait=0.5,
                                  jitter=0.1)
        self._sleep = sleep
        self.works = alias_name(prefix, "works")
        self.browse_cache: BrowseCache | None = BrowseCache() if cache_browsing else None
        self.researchers = alias_name(prefix, "researchers")

    def search(self, request: SearchRequest) -> SearchResult:
        """Hits, total and facet counts for one search, at the first match level
        (``scholarindex.search.matching``) whose text matches any work."""
        levels = loose_levels(request.q)
        level = "all"
        response = self._search_at(request, level)
        for looser in levels:
            if text_matches(response):
                break
            level = looser
            response = self._search_at(request, level)
        return parse_search(response, request, match=level)

    def _search_at(self, request: SearchRequest, level: str) -> dict[str, Any]:
        body = search_body(request, level)
        # A text search scores with every shard's term statistics (dfs), so a ranking does
        # not depend on which shard a work landed in; OpenSearch skips that round on an
        # index of one shard. Browsing sorts without scores and needs none.
        search_type = "dfs_query_then_fetch" if request.q else None

        def ask() -> dict[str, Any]:
            return self._call("search works", lambda: self._search(self.works, body,
                                                                   search_type))

        if request.q or self.browse_cache is None:
            return ask()
        state = self._index_state()
        return ask() if state is None else self.browse_cache.get(body, state, ask)

    def _index_state(self) -> IndexState | None:
        """The works index's state (``scholarindex.webui.browse_cache``); None turns caching off for
        good when the cluster refuses ``_stats`` to this user."""

        def read() -> dict[str, Any] | None:
            try:
                return self.client.indices.stats(index=self.works, metric="docs,indexing,refresh")
            except (os_exc.AuthorizationException, os_exc.RequestError):
                return None  # not allowed, or not supported: search still works

        stats = self._call("read index state", read)
        if stats is None:
            logger.warning("index stats refused: browsing is not cached")
            self.browse_cache = None
            return None
        return index_state(stats)

    def researcher(self, researcher_id: str) -> ResearcherPage:
        """A researcher's profile, works, co-authors and the same person's profiles on other
        sites; ``NotFound`` if nobody has that id."""
        if not researcher_id or len(researcher_id) > MAX_ID_CHARS:
            raise NotFound("No researcher with that id.")
        found = self._call("get researcher", lambda: self.client.get(
            index=self.researchers, id=researcher_id, ignore=404))
        if "error" in found:  # a 404 about the index, not the document
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE)
        works = self._call("search researcher works", lambda: self._search(
            self.works, researcher_works_body(researcher_id)))
        doc: ResearcherDoc | ProfileRef | None = researcher_of(
            found.get("_source") if found.get("found") else None)
        if doc is None:
            doc = _doc_from_works(researcher_id, works)
        if doc is None:
            raise NotFound("No researcher with that id.")
        return parse_researcher(doc, works, self._also_on(researcher_id, doc))

    def work(self, work_id: str) -> dict[str, Any]:
        """The work holding ``work_id`` (its own id or one joined into it): its listings and
        why each work id joined it; ``NotFound`` if none does."""
        if not work_id or len(work_id) > MAX_ID_CHARS:
            raise NotFound("No work with that id.")
        found = self._call("find work", lambda: self._search(
            self.works, {"size": 1, "query": {"term": {"work_ids": work_id}}}))
        hits = found.get("hits", {}).get("hits") or []
        if not hits:
            raise NotFound("No work with that id.")
        return work_explained(work_of(hits[0]["_source"]))

    def _also_on(self, researcher_id: str, doc: ResearcherDoc | ProfileRef) -> list[AlsoOn]:
        """Profiles on other sites with the same name and a shared work (``webui.cross_site``)."""
        name, source = doc.get("name"), doc.get("source")
        if not isinstance(name, str) or not isinstance(source, str) or not source:
            return []  # no site known: "another site" means nothing
        found = self._call("find namesakes", lambda: self._search(
            self.researchers, namesakes_body(name, source)))
        candidates = namesakes(researcher_id, name, source, found)
        if not candidates:
            return []
        body = shared_works_body(researcher_id, [c["id"] for c in candidates])
        shared = self._call("count shared works", lambda: self._search(self.works, body))
        return linked(candidates, shared)

    def suggest(self, text: str, limit: int = 8) -> list[Suggestion]:
        """Researcher names and work titles that start like ``text`` (autocomplete)."""
        text = " ".join(text.split())
        if len(text) > MAX_SUGGEST_CHARS:
            raise InvalidRequest(f"At most {MAX_SUGGEST_CHARS} characters for suggestions.")
        if len(text) < MIN_SUGGEST_CHARS:
            return []
        body = suggest_searches(text, self.prefix, limit)
        answer = self._call("suggest", lambda: self.client.msearch(body=body))
        responses = answer.get("responses") or []
        if any("error" in r for r in responses):  # msearch reports per search, with 200
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE)
        return parse_suggestions(responses, limit)

    def _search(self, index: str, body: dict[str, Any],
                search_type: str | None = None) -> dict[str, Any]:
        """One search, whole or not at all: a shard whose every copy failed (its node died
        between the query and the fetch, or no copy is started yet) makes OpenSearch answer
        an error, which ``_call`` retries, instead of a 200 that silently lacks that shard's
        works."""
        extra = {"search_type": search_type} if search_type else {}
        return self.client.search(index=index, body=body, allow_partial_search_results=False,
                                  **extra)

    def _call(self, what: str, request: Callable[[], T]) -> T:
        """Send one request: a quick retry if it failed transiently, errors translated."""
        retrying = Retrying(stop=self._retry.stop(), wait=self._retry.wait(),
                            retry=retry_if_exception(_transient), sleep=self._sleep,
                            reraise=True)
        with opensearch_errors(what):
            return retrying(request)


def _doc_from_works(researcher_id: str, works: dict[str, Any]) -> ProfileRef | None:
    """A minimal profile read from the works that list it (the profile document is missing)."""
    for hit in (works.get("hits") or {}).get("hits") or ():
        for profile in (hit.get("_source") or {}).get("profiles") or ():
            if isinstance(profile, dict) and profile.get("id") == researcher_id:
                return {"id": researcher_id, "name": profile.get("name"),
                        "url": profile.get("url"), "source": profile.get("source")}
    return None


# Fields of a listing the work API shows, as the profile printed them.
WORK_LISTING_FIELDS = ("work_id", "title", "researcher_id", "researcher_name", "researcher_url",
                       "source", "year", "venue", "type", "authors", "authors_truncated")


def work_explained(doc: WorkDoc) -> dict[str, Any]:
    """A work document as the API shows it: its listings, and why each joined.

    A listing under the document's own id, or under an id with no recorded link, is
    there because its title folds to the same text (``by: "title"``).
    """
    own = doc.get("work_id")
    links = {link.get("work_id"): link for link in doc.get("resolution") or ()}
    listings = []
    for entry in doc.get("listings") or ():
        item: dict[str, Any] = {name: entry.get(name) for name in WORK_LISTING_FIELDS}
        item["work_id"] = item["work_id"] or own
        link = links.get(item["work_id"])
        item["joined"] = ({"by": "title", "score": None, "evidence": []} if link is None
                          or item["work_id"] == own else
                          {"by": link.get("by"), "score": link.get("score"),
                           "evidence": list(link.get("evidence") or ())})
        listings.append(item)
    return {"id": own, "work_ids": doc.get("work_ids") or [own], "title": doc.get("title"),
            "year": doc.get("year"), "authors": doc.get("authors") or [],
            "profiles": doc.get("profiles") or [], "arxiv_id": doc.get("arxiv_id"),
            "listings": listings}
