"""The indexer's own exceptions: callers never see opensearch-py's.

Two tiers, because they call for opposite reactions: the cluster cannot take requests
(``IndexUnavailable``: retry, then stop the run loudly) versus one item is bad
(``InvalidItem`` before a request; a document the cluster refuses is not an
exception at all but a bulk result, ``client.classify_item`` -> "rejected",
which the writer dead-letters while the others carry on).
"""

from __future__ import annotations


class IndexingError(Exception):
    """Base class for indexing failures."""


class IndexUnavailable(IndexingError):
    """The cluster did not take a request: down, overloaded, unauthorised, index missing.

    ``retryable`` tells whether waiting may help (connection refused, 429, 5xx)
    or not (401, 403, a missing index, a bad TLS certificate). ``retry_after``:
    the seconds the cluster (or a proxy) asked to wait with ``Retry-After``, if it did.
    """

    def __init__(self, message: str, *, retryable: bool, status: int | str | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class InvalidItem(IndexingError, ValueError):
    """An item or patch that cannot become (part of) a document: missing id, unknown field."""
