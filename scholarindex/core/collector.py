"""Python's cycle collector paused around work that makes millions of objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """The collector off inside, as it was after. Work that keeps many objects alive
    while it makes many more that form no cycles worth collecting (resolution: atoms,
    features and decisions) gains nothing from the collector's passes, and each full
    pass walks every object alive again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
