"""When the crawl's indexer sends what it buffered: the ``INDEX_BATCH_*`` knobs.

Declared with their defaults in ``scholarindex/settings.py``; read here with none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scholarindex.core.settings import read_setting


@dataclass(frozen=True, kw_only=True)
class Batching:
    """Flush by count, by size or by time; wait for the flush past ``max_buffer`` items."""

    size: int  # items per flush
    max_bytes: int  # ...or fewer, once they add up to this many bytes
    flush_interval: float  # ...or every this many seconds
    max_buffer: int  # items buffered during a flush before the crawl waits (backpressure)

    @classmethod
    def from_settings(cls, settings: Any) -> Batching:
        """Read ``INDEX_BATCH_SIZE``, ``INDEX_BATCH_BYTES``, ``INDEX_FLUSH_INTERVAL`` and
        ``INDEX_MAX_BUFFER`` (Scrapy settings or any mapping); each must be there."""
        return cls(
            size=read_setting(settings, "INDEX_BATCH_SIZE", int),
            max_bytes=read_setting(settings, "INDEX_BATCH_BYTES", int),
            flush_interval=read_setting(settings, "INDEX_FLUSH_INTERVAL", float),
            max_buffer=read_setting(settings, "INDEX_MAX_BUFFER", int),
        )
