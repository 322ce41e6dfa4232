"""``ChangeBuffer``: the index changes waiting for the next flush (no I/O, no Twisted).

Changes come a page (or one arXiv answer) at a time and are packed for the writer's
child as they come (``changes.pack_changes``): the packed length stands for their size
in a bulk request, about their JSON's and cheaper than any estimate of it. During an
outage the writer hands batches back; they are *held* apart and go first, ahead of
what was buffered meanwhile, once the cluster answers.

A flush hands the writer its changes in parts of whole pages, each of at most
``INDEX_MAX_BUFFER`` changes (``take``). The crawl waits for the index only once a page
is in, so while a write is in flight the buffer outgrows that bound by every page the
scraper holds (thousands of changes on the benchmark site); one write of all of them
was the writer child's largest working set, which its memory keeps after the write
(docs/performance.md). Written one after the other, in one flush, the parts are what a
crawl whose writer keeps up writes anyway.
"""

from __future__ import annotations

from scholarindex.indexing.batching import Batching
from scholarindex.indexing.changes import Change, pack_changes


class ChangeBuffer:
    """What the next flush sends (``changes``, ``packed``) and what an outage holds."""

    def __init__(self, batching: Batching) -> None:
        self.batch_size = batching.size
        self.batch_bytes = batching.max_bytes
        self.max_buffer = max(batching.max_buffer, batching.size)
        self.changes: list[Change] = []
        self.packed: list[bytes] = []  # ``changes`` packed, one message a page
        self.counts: list[int] = []  # the changes of each message of ``packed``
        self.held: list[Change] = []  # handed back by the writer, sent first on resume
        self.size = 0  # the length of ``packed``'s messages: the buffer's size in bytes

    @property
    def pending(self) -> bool:
        """Anything buffered or held: the next flush has something to carry."""
        return bool(self.changes or self.held)

    def add(self, changes: list[Change]) -> None:
        self.changes += changes
        self._pack(changes)

    def batch_ready(self) -> bool:
        """A full batch, by count or by size: flush without waiting for the timer."""
        return len(self.changes) >= self.batch_size or self.size >= self.batch_bytes

    def full(self) -> bool:
        """At ``INDEX_MAX_BUFFER``: the crawl waits for the index (backpressure)."""
        return len(self.changes) + len(self.held) >= self.max_buffer

    def take(self) -> list[tuple[list[Change], list[bytes]]]:
        """The buffered changes and their packed messages, for a flush, in parts of whole
        messages of at most ``max_buffer`` changes (a larger message alone); empties both."""
        parts: list[tuple[list[Change], list[bytes]]] = []
        start = 0
        for message, count in zip(self.packed, self.counts, strict=True):
            if parts and len(parts[-1][0]) + count <= self.max_buffer:
                parts[-1][0].extend(self.changes[start:start + count])
                parts[-1][1].append(message)
            else:
                parts.append((self.changes[start:start + count], [message]))
            start += count
        self.changes, self.packed, self.counts, self.size = [], [], [], 0
        return parts

    def hold(self, changes: list[Change]) -> None:
        self.held.extend(changes)

    def release_held(self) -> int:
        """The held changes back in the buffer, ahead of the rest; how many there were."""
        held, self.held = self.held, []
        if held:
            self.changes = held + self.changes
            self._pack(held, first=True)
        return len(held)

    def take_all(self) -> list[Change]:
        """Everything held and buffered, in that order (given up: to the dead letters)."""
        everything = self.held + self.changes
        self.held, self.changes, self.packed, self.counts, self.size = [], [], [], [], 0
        return everything

    def _pack(self, changes: list[Change], first: bool = False) -> None:
        message = pack_changes(changes)
        if first:
            self.packed.insert(0, message)
            self.counts.insert(0, len(changes))
        else:
            self.packed.append(message)
            self.counts.append(len(changes))
        self.size += len(message)
