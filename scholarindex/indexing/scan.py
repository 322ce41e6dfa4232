"""Every hit of a search, read through opensearch-py's ``helpers.scan``, with our errors.

A search sees what the index's last refresh made visible (every second by default,
never while a re-index fills a new index): whoever reads "everything written so far"
refreshes first (``refresh``).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from typing import Any

from opensearchpy import OpenSearch, helpers
from opensearchpy.helpers.errors import ScanError

from scholarindex.core.malloc import one_arena
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.errors import IndexUnavailable

KEEP_ALIVE = "5m"  # how long the scroll waits between two pages
# The most hits one search answers (the engine's default ``index.max_result_window``).
MAX_WINDOW = 10_000


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
    one_arena()
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


def fetch_each(client: OpenSearch, index: str,
               searches: Sequence[tuple[Mapping[str, Any], int]],
               at_once: int = SCANS_AT_ONCE) -> Generator[dict[str, Any], None, None]:
    """Every hit of each search (a body, and how many hits it is expected to have at
    most), in the order given: one request each, ``at_once`` in flight, so the caller
    works on one answer while the engine reads the next.

    For a search whose hits are known to be few, this is several times cheaper than
    ``scan``: a scroll runs its query again for every page, and a terms query over
    thousands of keys, or pairs of common words, costs more to run than its hits do to
    read. A search that finds more than expected (the index grew since it was counted)
    is read again by ``scan``, as is one expected past the engine's window."""
    def fetch(body: Mapping[str, Any], expected: int) -> list[dict[str, Any]] | None:
        if expected > MAX_WINDOW:
            return None
        request = {**body, "size": expected, "sort": ["_doc"], "track_total_hits": True}
        with translate_errors(f"search {index}"):
            answer = client.search(index=index, body=request)
        if answer.get("_shards", {}).get("failed"):
            raise IndexUnavailable(f"search {index}: some shards failed", retryable=True)
        hits: list[dict[str, Any]] = answer["hits"]["hits"]
        return hits if answer["hits"]["total"]["value"] <= len(hits) else None

    if at_once < 2:
        for body, expected in searches:
            hits = fetch(body, expected)
            yield from scan(client, index, body) if hits is None else hits
        return
    one_arena()  # the threads' answers, freed, stay reusable by the caller
    with ThreadPoolExecutor(max_workers=at_once,
                            thread_name_prefix=f"fetch-{index}") as pool:
        waiting: deque[tuple[Mapping[str, Any], Future[list[dict[str, Any]] | None]]] = deque()
        todo = iter(searches)
        try:
            while True:
                while len(waiting) < at_once and (search := next(todo, None)) is not None:
                    waiting.append((search[0], pool.submit(fetch, *search)))
                if not waiting:
                    return
                body, answer = waiting.popleft()
                hits = answer.result()
                yield from scan(client, index, body) if hits is None else hits
        finally:
            for _, pending in waiting:
                pending.cancel()
