"""HTML routes: call the service, render a template. Errors are the app's handlers' job."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from scholarindex.search.params import SearchRequest
from scholarindex.webui.inputs import get_service, search_request
from scholarindex.webui.service import SearchService

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def search_page(request: Request,
                search: Annotated[SearchRequest, Depends(search_request)],
                service: Annotated[SearchService, Depends(get_service)]) -> HTMLResponse:
    """The search page; with nothing asked yet, its empty state (facets still browse)."""
    result = service.search(search)
    return request.app.state.templates.TemplateResponse(
        request, "search.html", {"req": search, "result": result})


@router.get("/researchers/{researcher_id}", response_class=HTMLResponse)
def researcher_page(request: Request, researcher_id: str,
                    service: Annotated[SearchService, Depends(get_service)]) -> HTMLResponse:
    """A researcher's profile, works and co-authors."""
    page = service.researcher(researcher_id)
    return request.app.state.templates.TemplateResponse(
        request, "researcher.html", {"page": page})
