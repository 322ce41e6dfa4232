"""Hand memory the process has freed back to the system.

glibc's allocator keeps freed memory for reuse, and a long crawl fragments its
heap: short-lived large buffers (bulk bodies, cluster answers, pages) are freed
between long-lived small objects (caches, queues), so the holes stay mapped and
the resident size creeps up with the pages crawled, though live data does not.
``malloc_trim`` returns those free pages (a fraction of a millisecond a call).
Elsewhere than glibc it does nothing.
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
