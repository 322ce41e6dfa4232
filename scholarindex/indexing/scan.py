"""Every hit of a search, read through opensearch-py's ``helpers.scan``, with our errors.

A search sees what the index's last refresh made visible (every second by default,
never while a re-index fills a new index): whoever reads "everything written so far"
refreshes first (``refresh``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Mapping, Sequence
from contextlib import closing
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
         preference: str | None = None) -> Generator[dict[str, Any], None, None]:
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


SCANS_AT_ONCE = 2  # a scroll's page is read by one engine thread: two keep two cores busy
_DONE = object()


def scan_each(client: OpenSearch, index: str, bodies: Sequence[Mapping[str, Any]],
              at_once: int = SCANS_AT_ONCE, page_size: int = 1000
              ) -> Generator[dict[str, Any], None, None]:
    """Every hit of each of ``bodies``' queries (``scan``), ``at_once`` scans running side
    by side, their pages interleaved as they come. The first error stops them all and
    is raised here; so does the caller stopping early (each scroll is cleared). At most
    a page per scan and one waiting are held beyond the caller's."""
    if len(bodies) < 2 or at_once < 2:
        for body in bodies:
            yield from scan(client, index, body, page_size=page_size)
        return
    todo: queue.Queue[Mapping[str, Any]] = queue.Queue()
    for body in bodies:
        todo.put(body)
    pages: queue.Queue[Any] = queue.Queue(maxsize=1)  # a page waits while one is read
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                pages.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            while not stop.is_set():
                try:
                    body = todo.get_nowait()
                except queue.Empty:
                    return
                with closing(scan(client, index, body, page_size=page_size)) as hits:
                    page: list[dict[str, Any]] = []
                    for hit in hits:
                        page.append(hit)
                        if len(page) == page_size:
                            if not put(page):
                                return
                            page = []
                    if page and not put(page):
                        return
        except BaseException as exc:  # raised to the caller, in its thread
            put(exc)
        finally:
            put(_DONE)

    workers = [threading.Thread(target=work, name=f"scan-{index}-{n}", daemon=True)
               for n in range(min(at_once, len(bodies)))]
    for worker in workers:
        worker.start()
    try:
        running = len(workers)
        while running:
            item = pages.get()
            if item is _DONE:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield from item
    finally:
        stop.set()
        for worker in workers:
            worker.join()
