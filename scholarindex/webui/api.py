"""JSON routes (docs/interfaces.md, "Search API"): call the service, return its result."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict

from scholarindex.search.params import SearchRequest
from scholarindex.webui.inputs import get_service, search_request
from scholarindex.webui.results import HitJSON
from scholarindex.webui.service import MAX_SUGGEST_CHARS, SearchService
from scholarindex.webui.templating import researcher_url, search_url

router = APIRouter(prefix="/api", tags=["search"])


class _Open(BaseModel):
    # The fields docs/interfaces.md names are the minimum; the body carries more than listed.
    model_config = ConfigDict(extra="allow")


class FacetValueOut(_Open):
    value: Any
    count: int


class SearchOut(_Open):
    total: int
    hits: list[HitJSON]  # the hit's one shape, from webui.results
    facets: dict[str, list[FacetValueOut]]


class SuggestionOut(BaseModel):
    kind: str
    id: str
    text: str
    url: str


class SuggestOut(BaseModel):
    q: str
    suggestions: list[SuggestionOut]


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "Bad parameter (query too long, page too deep)"},
    503: {"model": ErrorOut, "description": "The search index is unavailable"},
}


@router.get("/search", response_model=SearchOut, responses=ERRORS)
def api_search(search: Annotated[SearchRequest, Depends(search_request)],
               service: Annotated[SearchService, Depends(get_service)]) -> dict[str, Any]:
    """Works matching ``q`` and the filters, with every facet's counts.

    Values within one facet combine with OR, facets with AND; each facet is
    counted over the query with every *other* facet's filters applied.
    """
    return service.search(search).to_json()


@router.get("/researchers/{researcher_id}", responses={**ERRORS, 404: {"model": ErrorOut}})
def api_researcher(researcher_id: str,
                   service: Annotated[SearchService, Depends(get_service)]) -> dict[str, Any]:
    """A researcher profile, their works and the profiles they share works with."""
    return service.researcher(researcher_id).to_json()


@router.get("/works/{work_id}", responses={**ERRORS, 404: {"model": ErrorOut}})
def api_work(work_id: str,
             service: Annotated[SearchService, Depends(get_service)]) -> dict[str, Any]:
    """The work holding ``work_id``: every listing, and why each joined the work
    (``joined.by``: ``title``, ``match`` with its score and evidence, ``manual`` or
    ``identity``)."""
    return service.work(work_id)


@router.get("/suggest", response_model=SuggestOut, responses=ERRORS)
def api_suggest(q: Annotated[str, Query(max_length=MAX_SUGGEST_CHARS)],
                service: Annotated[SearchService, Depends(get_service)]) -> dict[str, Any]:
    """Autocomplete: researcher names and work titles starting like ``q``."""
    suggestions = [
        {"kind": s.kind, "id": s.id, "text": s.text,
         "url": researcher_url(s.id) if s.kind == "researcher" else search_url(q=s.text)}
        for s in service.suggest(q)
    ]
    return {"q": q, "suggestions": suggestions}
