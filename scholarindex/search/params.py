"""``SearchRequest``: one search (query, facet filters, sort, page), validated, and its URL.

The limits live here so the HTML page, the JSON API and the service agree. A
request turns back into URL parameters with ``to_params``: the URL holds the whole
state, so a search can be shared and the back button replays it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any
from urllib.parse import urlencode

from scholarindex.search.errors import InvalidRequest
from scholarindex.search.facets import FACET_BY_NAME, FACETS

MAX_QUERY_CHARS = 300  # a longer "query" is a paste accident or an attack, not a search
MAX_PAGE = 50  # deep paging costs the cluster and helps nobody; refine the query instead
MAX_SIZE = 50
DEFAULT_SIZE = 10
MAX_RESULT_WINDOW = 1000  # from + size never goes past this
MAX_VALUES_PER_FACET = 20  # selected values in one facet
SORTS = ("relevance", "newest")


@dataclass(frozen=True)
class SearchRequest:
    """A validated search. ``filters`` maps a facet name to its selected values (typed)."""

    q: str = ""
    filters: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    sort: str = "relevance"
    page: int = 1
    size: int = DEFAULT_SIZE

    def __post_init__(self) -> None:
        q = " ".join(self.q.split())  # one space between words: newlines and tabs are noise
        if len(q) > MAX_QUERY_CHARS:
            raise InvalidRequest(f"The query is too long: at most {MAX_QUERY_CHARS} characters.")
        if self.sort not in SORTS:
            raise InvalidRequest(f"Unknown sort {self.sort!r}: use one of {', '.join(SORTS)}.")
        if not 1 <= self.size <= MAX_SIZE:
            raise InvalidRequest(f"Page size must be between 1 and {MAX_SIZE}.")
        if not 1 <= self.page <= MAX_PAGE or self.page * self.size > MAX_RESULT_WINDOW:
            last = min(MAX_PAGE, MAX_RESULT_WINDOW // self.size)
            raise InvalidRequest(f"Results stop at page {last}; refine the search to see more.")
        filters = {}
        for name in self.filters:
            if name not in FACET_BY_NAME:
                raise InvalidRequest(f"Unknown filter {name!r}.")
        for facet in FACETS:  # facet order, de-duplicated: one state, one URL
            values = tuple(dict.fromkeys(self.filters.get(facet.name, ())))
            if len(values) > MAX_VALUES_PER_FACET:
                raise InvalidRequest(f"At most {MAX_VALUES_PER_FACET} values per filter.")
            if values:
                filters[facet.name] = values
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "filters", MappingProxyType(filters))

    @classmethod
    def from_strings(cls, q: str = "", filters: Mapping[str, Iterable[str]] | None = None,
                     sort: str = "relevance", page: int = 1,
                     size: int = DEFAULT_SIZE) -> SearchRequest:
        """Build from URL-style strings; a value a facet cannot read is an ``InvalidRequest``."""
        typed: dict[str, tuple[Any, ...]] = {}
        for name, raw_values in (filters or {}).items():
            facet = FACET_BY_NAME.get(name)
            if facet is None:
                raise InvalidRequest(f"Unknown filter {name!r}.")
            values = []
            for raw in raw_values:
                if not raw.strip():
                    continue  # an empty checkbox or a trailing "&year=": nothing selected
                try:
                    values.append(facet.parse(raw))
                except ValueError as exc:
                    raise InvalidRequest(
                        f"Bad value for {facet.label.lower()}: {raw[:40]!r} ({exc}).") from exc
            typed[name] = tuple(values)
        return cls(q=q, filters=typed, sort=sort, page=page, size=size)

    # --- state -------------------------------------------------------------------------

    @property
    def offset(self) -> int:
        """``from`` of the OpenSearch request."""
        return (self.page - 1) * self.size

    @property
    def is_empty(self) -> bool:
        """Nothing asked yet, the bare ``/``: the page shows its empty state.

        ``/?sort=newest`` asks for something: every work, newest first.
        """
        return not self.to_params()

    @property
    def last_page(self) -> int:
        """The deepest page this page size may ask for."""
        return min(MAX_PAGE, MAX_RESULT_WINDOW // self.size)

    def selected(self, facet: str, value: Any) -> bool:
        """True if ``value`` is selected in ``facet``."""
        return value in self.filters.get(facet, ())

    def active_filters(self) -> list[tuple[str, Any]]:
        """Every (facet, value) selected, in facet order."""
        return [(name, value) for name, values in self.filters.items() for value in values]

    # --- derived requests (filters and sort changes go back to page 1) -----------------

    def toggled(self, facet: str, value: Any) -> SearchRequest:
        """This search with ``value`` added to ``facet``, or removed if it was selected."""
        values = self.filters.get(facet, ())
        new = tuple(v for v in values if v != value) if value in values else (*values, value)
        return replace(self, filters={**self.filters, facet: new}, page=1)

    def without_filter(self, facet: str, value: Any | None = None) -> SearchRequest:
        """Without one value of ``facet`` (or all of its values when ``value`` is None)."""
        values = () if value is None else tuple(v for v in self.filters.get(facet, ())
                                                 if v != value)
        return replace(self, filters={**self.filters, facet: values}, page=1)

    def without_filters(self) -> SearchRequest:
        """The same query text with no filter."""
        return replace(self, filters={}, page=1)

    def without_query(self) -> SearchRequest:
        """The same filters with no query text."""
        return replace(self, q="", page=1)

    def with_page(self, page: int) -> SearchRequest:
        """Another page of the same search."""
        return replace(self, page=page)

    def with_sort(self, sort: str) -> SearchRequest:
        """The same search in another order."""
        return replace(self, sort=sort, page=1)

    # --- URL ---------------------------------------------------------------------------

    def to_params(self) -> list[tuple[str, str]]:
        """URL parameters, defaults left out, in a stable order."""
        params: list[tuple[str, str]] = []
        if self.q:
            params.append(("q", self.q))
        for name, values in self.filters.items():
            facet = FACET_BY_NAME[name]
            params.extend((name, facet.format(value)) for value in values)
        if self.sort != "relevance":
            params.append(("sort", self.sort))
        if self.size != DEFAULT_SIZE:
            params.append(("size", str(self.size)))
        if self.page != 1:
            params.append(("page", str(self.page)))
        return params

    def url(self, path: str = "/") -> str:
        """``path`` with this search's parameters."""
        query = urlencode(self.to_params())
        return f"{path}?{query}" if query else path
