"""The project's own errors for arXiv lookups.

``client`` translates every error of the ``arxiv`` package and of ``requests``
into one of these, at one boundary, so callers never see a library exception.
"""

from __future__ import annotations


class EnrichmentError(Exception):
    """Base class of enrichment errors."""


class ArxivUnavailable(EnrichmentError):
    """arXiv could not answer (429, 5xx, timeouts, empty pages) even after retries.

    Works waiting on it stay pending; a later run completes them.
    """


class BadQuery(EnrichmentError):
    """arXiv rejected the query as malformed (HTTP 400): retrying cannot help."""


class Cancelled(EnrichmentError):
    """The lookup was abandoned because the enricher is shutting down."""
