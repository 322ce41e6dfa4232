"""The one boundary where OpenSearch's errors become the search's (``search.errors``).

Each error knows its HTTP status and a message fit to show a user; the app turns
them into an HTML page or a JSON body. The details (hosts, causes) go to the log
only: a search page never shows a stack trace or the cluster's address.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from opensearchpy import exceptions as os_exc

from scholarindex.core.retry import is_retryable_status
from scholarindex.indexing.client import describe
from scholarindex.search.errors import SearchFailed, ServiceUnavailable

logger = logging.getLogger(__name__)


UNAVAILABLE_MESSAGE = "Search is unavailable right now. Please try again in a minute."


@contextmanager
def opensearch_errors(what: str) -> Iterator[None]:
    """Run OpenSearch calls; raise ``ServiceUnavailable`` or ``SearchFailed`` if they fail.

    ``what`` names the call in the log line ("search works", ...).
    """
    try:
        yield
    except os_exc.NotFoundError as exc:
        # A search on a missing alias: the index has not been built (or was deleted).
        logger.error("%s: %s", what, describe(exc))
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc
    except (os_exc.ConnectionError, os_exc.AuthenticationException,
            os_exc.AuthorizationException) as exc:  # ConnectionError covers timeouts, TLS
        logger.error("%s: %s", what, describe(exc))
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc
    except os_exc.SerializationError as exc:  # a garbled answer, e.g. from a proxy
        logger.error("%s: unreadable response (%s)", what, exc)
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc
    except os_exc.TransportError as exc:
        logger.error("%s: %s", what, describe(exc))
        status = exc.status_code
        if is_retryable_status(status) or (isinstance(status, int) and status >= 500):
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc
        raise SearchFailed("The search could not be run. The problem has been logged.") from exc
