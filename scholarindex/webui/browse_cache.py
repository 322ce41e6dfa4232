"""Answers to searches without text (browsing, facet counts), kept until the index changes.

Why: browsing computes every facet over every work, and an embedded single-process
server takes seconds for that at 10,000 works, while the answer only changes when
the index does. Searches with text are not kept: they match few works (cheap to
count) and rarely repeat.

When an answer is stale: it is keyed by the request body and by the works index's
*state* (``index_state``): the concrete index behind the alias (a reindex moves
it), its document count, its index and delete operation totals, and its refresh
total, summed over every shard copy (``_stats``'s ``total``). A write becomes
visible to searches only at a refresh, which adds to the refresh total of the copy
that refreshed. Every copy counts, not the primaries alone: a search may be answered
by a replica, which refreshes on its own schedule, so a key taken from the primaries
could keep an answer a replica computed before its refresh. So a kept answer is
never older than what a fresh search would see. Reading the state costs one small
``_stats`` call per browse.

A cluster that refuses ``_stats`` (a search-only user) simply gets no caching.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

MAX_ENTRIES = 256  # distinct browse requests kept (filters x sort x page): a few MB

IndexState = tuple[tuple[str, int, int, int, int], ...]


def index_state(stats: Mapping[str, Any]) -> IndexState:
    """What changes whenever a search could see something new, from an ``indices.stats``
    response (``metric=docs,indexing,refresh``)."""
    out = []
    for name, entry in sorted((stats.get("indices") or {}).items()):
        copies = entry.get("total") or {}
        docs = copies.get("docs") or {}
        indexing = copies.get("indexing") or {}
        refresh = copies.get("refresh") or {}
        out.append((name, int(docs.get("count", 0)), int(indexing.get("index_total", 0)),
                    int(indexing.get("delete_total", 0)), int(refresh.get("total", 0))))
    return tuple(out)


class BrowseCache:
    """A small LRU of responses, each valid for one index state."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[IndexState, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, body: Mapping[str, Any], state: IndexState,
            compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The kept response for ``body`` at ``state``, or ``compute()``'s, then kept."""
        key = json.dumps(body, sort_keys=True, default=str)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] == state:
                self._entries.move_to_end(key)
                self.hits += 1
                return found[1]
            self.misses += 1
        response = compute()  # outside the lock: other browses go on meanwhile
        with self._lock:
            self._entries[key] = (state, response)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return response
