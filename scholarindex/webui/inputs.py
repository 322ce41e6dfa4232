"""FastAPI dependencies: the service, and query parameters read into a ``SearchRequest``.

The HTML page and ``/api/search`` take the same parameters (docs/interfaces.md), so
they share this one reader; the declarations also document the API in /docs.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from fastapi import Query, Request
from pydantic import WithJsonSchema

from scholarindex.search.errors import InvalidRequest
from scholarindex.search.params import (
    DEFAULT_SIZE,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_SIZE,
    SearchRequest,
)
from scholarindex.webui.service import SearchService

# The years the search takes, as its OpenAPI schema declares them: four ASCII digits from
# 1000 to 9999 (what the year facet reads), or empty for none (a trailing "&year=").
# Checked here, before the facet's looser reading (it trims spaces, takes any script's
# digits), so that what the schema allows is what answers 200. maxLength pins down the
# end for regex flavours whose "$" also matches before a final newline.
YEAR_PATTERN = "^([1-9][0-9]{3})?$"
YEAR_RE = re.compile(YEAR_PATTERN)
YearValue = Annotated[str, WithJsonSchema({"type": "string", "pattern": YEAR_PATTERN,
                                           "maxLength": 4})]


def get_service(request: Request) -> SearchService:
    """The app's search service (built once by ``create_app``)."""
    return request.app.state.service


def search_request(
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description=(
        'Full text over titles, abstracts and names. "quoted phrase", -exclude, a OR b.'))] = "",
    year: Annotated[list[YearValue] | None, Query(
        description="Year, four digits (1000 to 9999), e.g. 2024; repeat for OR")] = None,
    category: Annotated[list[str] | None, Query(description="Category tag, e.g. LG")] = None,
    author: Annotated[list[str] | None, Query(description="Author name, exactly")] = None,
    researcher: Annotated[list[str] | None, Query(description="Researcher profile id")] = None,
    venue: Annotated[list[str] | None, Query(description="Venue, e.g. arXiv")] = None,
    type: Annotated[list[str] | None, Query(description="Work type, e.g. preprint")] = None,
    source: Annotated[list[str] | None, Query(description="Source site, e.g. bzpeer")] = None,
    has_code: Annotated[list[str] | None, Query(description="true or false")] = None,
    sort: Annotated[Literal["relevance", "newest"], Query()] = "relevance",
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    size: Annotated[int, Query(ge=1, le=MAX_SIZE)] = DEFAULT_SIZE,
) -> SearchRequest:
    """The search the query string asks for; ``InvalidRequest`` for a bad value."""
    for value in year or ():
        if not YEAR_RE.fullmatch(value):
            # The year facet's own words: a 400 as before, now for exactly what the schema refuses.
            raise InvalidRequest(f"Bad value for year: {value[:40]!r} (not a four-digit year).")
    filters = {"year": year, "category": category, "author": author, "researcher": researcher,
               "venue": venue, "type": type, "source": source, "has_code": has_code}
    return SearchRequest.from_strings(
        q, {name: values for name, values in filters.items() if values}, sort, page, size)
