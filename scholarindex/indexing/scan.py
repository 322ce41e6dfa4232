"""Every hit of a search, read through opensearch-py's ``helpers.scan``, with our errors.

A search sees what the index's last refresh made visible (every second by default,
never while a re-index fills a new index): whoever reads "everything written so far"
refreshes first (``refresh``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from opensearchpy import OpenSearch, helpers
from opensearchpy.helpers.errors import ScanError

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.errors import IndexUnavailable

KEEP_ALIVE = "5m"  # how long the scroll waits between two pages


def refresh(client: OpenSearch, index: str) -> None:
    """Make every write acknowledged so far searchable on ``index`` (an alias will do)."""
    with translate_errors(f"refresh {index}"):
        client.indices.refresh(index=index)


def scan(client: OpenSearch, index: str, body: Mapping[str, Any], page_size: int = 1000,
         request_timeout: float | None = None,
         preference: str | None = None) -> Iterator[dict[str, Any]]:
    """Every hit of ``body``'s query on ``index``, in index order (``_doc``), page by page.

    The scroll is cleared at the end, also when the caller stops early. A failed
    request, or a page some shards could not answer (the hits would not be all of
    them), raises ``IndexUnavailable``. ``request_timeout`` bounds every request;
    ``preference`` (``_shards:0``) reads some shards only.
    """
    scroll_kwargs = {"request_timeout": request_timeout} if request_timeout else {}
    search_kwargs: dict[str, Any] = {"preference": preference} if preference else {}
    try:
        with translate_errors(f"scan {index}"):
            yield from helpers.scan(client, query=dict(body), index=index, size=page_size,
                                    scroll=KEEP_ALIVE, request_timeout=request_timeout,
                                    scroll_kwargs=scroll_kwargs, **search_kwargs)
    except ScanError as exc:
        raise IndexUnavailable(f"scan {index}: {exc}", retryable=True) from exc
