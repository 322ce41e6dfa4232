"""ChangeBuffer: a flush's changes in parts of whole pages, each within INDEX_MAX_BUFFER."""

from __future__ import annotations

from dataclasses import replace

from pipelines.buffer import ChangeBuffer
from scholarindex.indexing.batching import Batching
from scholarindex.indexing.changes import Change, change_from_item, unpack_changes
from tests.support.sample_items import CHAO, T1

BATCHING = Batching(size=2, max_bytes=1 << 20, flush_interval=2.0, max_buffer=5)


def page(name: str, listings: int) -> list[Change]:
    """A page's changes: ``listings`` listings of one profile."""
    return [change_from_item(replace(CHAO, work_id=f"{name}-{n}", researcher_id=name), T1)
            for n in range(listings)]


def test_a_flush_takes_whole_pages_in_parts_within_the_bound() -> None:
    buffer = ChangeBuffer(BATCHING)
    pages = [page("a", 3), page("b", 2), page("c", 4), page("d", 7), page("e", 1)]
    for changes in pages:
        buffer.add(changes)
    parts = buffer.take()
    # a+b fill one part; c alone (c+d would pass 5); d, larger than the bound, alone.
    assert [len(changes) for changes, _ in parts] == [5, 4, 7, 1]
    assert [len(packed) for _, packed in parts] == [2, 1, 1, 1]
    for changes, packed in parts:  # each part's messages are its changes
        assert [c.doc_id for c in unpack_changes(packed)] == [c.doc_id for c in changes]
    assert [c for changes, _ in parts for c in changes] == [c for p in pages for c in p]
    assert not buffer.pending and buffer.size == 0 and buffer.take() == []


def test_held_changes_go_first_in_the_next_flush() -> None:
    buffer = ChangeBuffer(BATCHING)
    buffer.add(page("a", 2))
    buffer.hold(page("held", 3))
    assert buffer.release_held() == 3
    parts = buffer.take()
    assert [c.data["researcher_id"] for changes, _ in parts for c in changes] == \
        ["held"] * 3 + ["a"] * 2
    assert [len(changes) for changes, _ in parts] == [5]
