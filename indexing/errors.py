"""The indexer's own exceptions: callers never see opensearch-py's.

Two tiers, as the product brief asks: the cluster cannot take requests
(``IndexUnavailable``: stop or pause the run loudly) versus one document is bad
(``DocumentRejected``: dead-letter it, carry on).
"""

from __future__ import annotations


class IndexingError(Exception):
    """Base class for indexing failures."""


class IndexUnavailable(IndexingError):
    """The cluster did not take a request: down, overloaded, unauthorised, index missing.

    ``retryable`` tells whether waiting may help (connection refused, 429, 5xx)
    or not (401, 403, a missing index, a bad TLS certificate).
    """

    def __init__(self, message: str, *, retryable: bool, status: int | str | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class DocumentRejected(IndexingError):
    """The cluster refused one document (mapping error, bad value); retrying cannot help."""

    def __init__(self, message: str, *, status: int | str | None = None):
        super().__init__(message)
        self.status = status


class InvalidItem(IndexingError, ValueError):
    """An item or patch that cannot become (part of) a document: missing id, unknown field."""
