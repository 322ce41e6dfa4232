"""The FastAPI app: HTML pages, the JSON API, static files, and error answers.

``create_app(config)`` wires one ``SearchService`` to the routes. Errors are
answered here, in one place: an HTML page for the site, ``{"error": {...}}`` for
``/api/*``, with the right status and never a stack trace. Every route is GET:
nothing here writes to the index.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.search.errors import SearchError
from scholarindex.webui import api, pages
from scholarindex.webui.service import SearchService
from scholarindex.webui.templating import make_templates

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
SEARCH_TIMEOUT = 10.0  # seconds: a person is waiting; the indexer's 30 s is too long here
# Defence in depth against XSS: only our own scripts and styles run on our pages.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
# Swagger UI loads its script and styles from a CDN and inlines a bootstrap script.
_NO_CSP_PATHS = ("/docs", "/openapi.json")


def create_app(config: OpenSearchConfig | None = None, *,
               service: SearchService | None = None) -> FastAPI:
    """The web app over ``config``'s cluster and prefix.

    Pass ``service`` instead to use a ready one (tests wrap the client that way).
    """
    if service is None:
        if config is None:
            raise TypeError("create_app needs an OpenSearchConfig or a SearchService")
        timeout = min(config.timeout, SEARCH_TIMEOUT)
        service = SearchService(build_client(replace(config, timeout=timeout)), config.prefix)
    app = FastAPI(
        title="Scholar Index search",
        description="Full-text and faceted search over crawled researcher profiles and works.",
        version="1",
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.service = service
    app.state.templates = make_templates()
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(pages.router)
    app.include_router(api.router)
    _install_error_handlers(app)

    @app.middleware("http")
    async def security_headers(request: Request,
                               call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        if not request.url.path.startswith(_NO_CSP_PATHS):
            response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    return app


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def _error(request: Request, status: int, code: str, message: str,
           details: list[str] | None = None) -> Response:
    """The one shape of every error: JSON for the API, a friendly page for people."""
    if _wants_json(request):
        body: dict[str, object] = {"code": code, "message": message}
        if details:
            body["details"] = details
        return JSONResponse({"error": body}, status_code=status)
    return request.app.state.templates.TemplateResponse(
        request, "error.html",
        {"status": status, "code": code, "message": message, "details": details or []},
        status_code=status)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SearchError)
    async def search_error(request: Request, exc: SearchError) -> Response:
        return _error(request, exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(request: Request, exc: RequestValidationError) -> Response:
        details = [_describe(e) for e in exc.errors()]
        status = 422 if _wants_json(request) else 400
        return _error(request, status, "invalid_request", "Some parameters are not valid.",
                      details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        messages = {404: "There is no page here.", 405: "This address only answers GET."}
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        response = _error(request, exc.status_code, code,
                          messages.get(exc.status_code, str(exc.detail)))
        for name, value in (exc.headers or {}).items():  # e.g. Allow on a 405
            response.headers[name] = value
        return response

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        # Logged with its traceback for us; the user sees a plain sentence.
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(request, 500, "internal_error",
                      "Something went wrong on our side. The problem has been logged.")


def _describe(error: dict[str, object]) -> str:
    """A FastAPI validation error as one short sentence, without echoing the input."""
    loc = error.get("loc") or ()
    name = str(loc[-1]) if isinstance(loc, list | tuple) and loc else "parameter"
    return f"{name}: {error.get('msg', 'invalid')}"
