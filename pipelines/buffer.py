"""``ChangeBuffer``: the index changes waiting for the next flush (no I/O, no Twisted).

Changes come a page (or one arXiv answer) at a time and are packed for the writer's
child as they come (``changes.pack_changes``): the packed length stands for their size
in a bulk request, about their JSON's and cheaper than any estimate of it. During an
outage the writer hands batches back; they are *held* apart and go first, ahead of
what was buffered meanwhile, once the cluster answers.
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

    def take(self) -> tuple[list[Change], list[bytes]]:
        """The buffered changes and their packed messages, for a flush; empties both."""
        batch, self.changes = self.changes, []
        packed, self.packed = self.packed, []
        self.size = 0
        return batch, packed

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
        self.held, self.changes, self.packed, self.size = [], [], [], 0
        return everything

    def _pack(self, changes: list[Change], first: bool = False) -> None:
        message = pack_changes(changes)
        if first:
            self.packed.insert(0, message)
        else:
            self.packed.append(message)
        self.size += len(message)
