"""glibc's allocator told to keep one arena, for processes that read on helper threads."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

_M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)


@functools.cache
def one_arena() -> bool:
    """Every thread allocates from glibc's main arena for the rest of the process;
    whether that could be set. By default each thread that allocates while another
    does gets an arena of its own (up to eight a core), and what it frees stays there:
    threads that parse the engine's large answers leave megabytes the main thread
    cannot reuse (the resolution pass at 1M works peaked 45-60 MB higher reading on two
    threads, with one arena as low as on none). Python's small objects come from its
    own allocator and are not affected; the threads mostly wait on the network, so
    they seldom contend for the one lock. Elsewhere than glibc, nothing is done."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, 1))
