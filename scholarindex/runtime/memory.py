"""Hand memory the process has freed back to the system.

glibc's allocator keeps freed memory for reuse. The index writer's batches are
its largest allocations (cluster answers, merged documents, bulk bodies), freed
between long-lived small objects, so the freed pages stay mapped and its
resident size creeps up batch after batch though its live data does not
(docs/performance.md). ``malloc_trim`` returns them, in a fraction of a millisecond.
Elsewhere than
glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_free_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
