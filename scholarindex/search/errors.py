"""What can go wrong with a search, each with its HTTP status and a message fit to show
a user (the search UI turns them into a page or a JSON body)."""

from __future__ import annotations


class SearchError(Exception):
    """Base class: ``status`` is the HTTP status, ``code`` a stable machine-readable name."""

    status = 500
    code = "search_failed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidRequest(SearchError):
    """The request itself is wrong: query too long, page too deep, a bad filter value."""

    status = 400
    code = "invalid_request"


class NotFound(SearchError):
    """No such researcher (or work)."""

    status = 404
    code = "not_found"


class ServiceUnavailable(SearchError):
    """The index cannot answer now: down, timing out, overloaded, not built yet."""

    status = 503
    code = "service_unavailable"


class SearchFailed(SearchError):
    """OpenSearch refused a request we built: a bug or a mapping mismatch, not the user's."""

    status = 500
    code = "search_failed"
