"""Tombstones: an unlisted profile's older listings stay out; a newer listing comes back.

Pure folds first (idempotent, order-independent, for the document and its tombstone),
then the writer and ``scholarindex replay`` against OpenSearch.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.items import WorkItem
from indexing.changes import Change, change_from_item, unlist_change
from indexing.tombstones import Folded, fold_with_tombstone, unlisted_entry

T1, T2, T3, T4 = ("2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z",
                  "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z")


def listing(researcher: str, work: str = "w", **fields: Any) -> dict[str, Any]:
    return asdict(WorkItem(work_id=work, title=f"Title of {work}", researcher_id=researcher,
                           researcher_name=researcher.title(), **fields))


def listed(researcher: str, at: str, **fields: Any) -> Change:
    return change_from_item(listing(researcher, **fields), at)


def fold(changes: list[Change], doc: Any = None, tomb: Any = None) -> Folded:
    folded = Folded(doc, tomb)
    for change in changes:
        folded = fold_with_tombstone(folded.doc, folded.tombstone, change)
    return folded


# --- pure folds ------------------------------------------------------------------------

def test_an_unlist_records_the_time_and_an_older_listing_stays_out() -> None:
    gone = fold([listed("ann", T1), unlist_change("w", "ann", T2)])
    assert gone.doc is None
    assert unlisted_entry(gone.tombstone, "ann") == {
        "researcher_id": "ann", "unlisted_at": T2, "first_seen": T1}
    replayed = fold_with_tombstone(gone.doc, gone.tombstone, listed("ann", T1))
    assert replayed.ignored and replayed.doc is None
    assert replayed.tombstone == gone.tombstone  # nothing learnt: nothing to write


def test_a_newer_listing_restores_it_with_its_first_seen() -> None:
    gone = fold([listed("ann", T1), unlist_change("w", "ann", T2)])
    back = fold_with_tombstone(gone.doc, gone.tombstone, listed("ann", T3))
    assert not back.ignored and back.doc is not None
    assert [e["researcher_id"] for e in back.doc["listings"]] == ["ann"]
    assert (back.doc["first_seen"], back.doc["last_seen"]) == (T1, T3)
    # A listing at the very time of the unlist stays, as unlist_listing keeps it.
    assert fold_with_tombstone(gone.doc, gone.tombstone, listed("ann", T2)).doc is not None


def test_a_tombstone_of_one_profile_leaves_the_others_alone() -> None:
    state = fold([listed("ann", T1), listed("bob", T1), unlist_change("w", "ann", T2)])
    assert state.doc is not None and [p["id"] for p in state.doc["profiles"]] == ["bob"]
    late_ann = fold_with_tombstone(state.doc, state.tombstone, listed("ann", T1))
    assert late_ann.ignored and late_ann.doc == state.doc
    late_bob = fold_with_tombstone(state.doc, state.tombstone, listed("bob", T1, venue="X"))
    assert not late_bob.ignored and late_bob.tombstone == state.tombstone
    assert fold([listed("bob", T1)]).tombstone is None  # a listing alone makes no tombstone


def test_an_older_listing_of_a_listed_profile_only_widens_first_seen() -> None:
    state = fold([listed("ann", T3), unlist_change("w", "ann", T2)])
    assert state.doc is not None  # the unlist is older than the listing
    older = fold_with_tombstone(state.doc, state.tombstone, listed("ann", T1, venue="Old"))
    assert not older.ignored and older.doc is not None
    assert older.doc["first_seen"] == T1 and older.doc["venues"] == []


_changes = st.one_of(
    st.builds(lambda r, at, venue: listed(r, at, venue=venue),
              st.sampled_from(["ann", "bob"]), st.sampled_from([T1, T2, T3, T4]),
              st.sampled_from([None, "A", "B"])),
    st.builds(lambda r, at: unlist_change("w", r, at),
              st.sampled_from(["ann", "bob"]), st.sampled_from([T1, T2, T3, T4])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_changes, min_size=1, max_size=8), st.randoms())
def test_any_order_any_repeats_same_document_and_tombstone(changes: list[Change],
                                                           rnd: random.Random) -> None:
    shuffled = list(changes)
    rnd.shuffle(shuffled)
    expected = fold(changes)
    for other in (fold(shuffled), fold(changes + changes[:3]), fold(shuffled + changes)):
        assert (other.doc, other.tombstone) == (expected.doc, expected.tombstone)
