"""Tombstones: an unlisted profile's older listings stay out; a newer listing comes back.

Pure folds first (idempotent, order-independent, for the document and its tombstone),
then the writer and ``scholarindex replay`` against OpenSearch.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from opensearchpy import OpenSearch

from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import (
    Change,
    MissingDocument,
    carried_enrichment,
    change_from_item,
    changes_from_item,
    changes_from_records,
    enrichment_change,
    fold_change,
    split_enrichment,
    unlist_change,
)
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import read_lines
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.shapes import TombstoneDoc
from scholarindex.indexing.tombstones import (
    Folded,
    expired_listing,
    fold_with_tombstone,
    prune_tombstone,
    pruned_records,
    retention_cutoff,
    unlisted_entry,
)
from tests.support.ops import cli_env, json_out, run_cli
from tests.support.search_site import app_for

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


# --- listings that carry their enrichment -----------------------------------------------

def carrying(researcher: str, at: str, status: str = "done", answered: str = T1,
             **fields: Any) -> dict[str, Any]:
    """A listing as the arXiv pipeline leaves it, its answer (``answered``) in its fields."""
    arxiv = {"id": "2601.00001", "authors": ["Ann Lee", "Bob Ray"]} if status == "done" else None
    return {**listing(researcher, **fields), "arxiv": arxiv,
            "enrichment": {"status": status, "reason": status, "updated_at": answered}}


def carried(item: dict[str, Any], at: str) -> Change:
    changes, _ = changes_from_records([item], at)
    assert len(changes) == 1 and changes[0].enriched
    return changes[0]


_ORDER = {"work": 0, "enrichment": 1, "unlist": 2}  # the writer's order within a document


def fold_batch(changes: list[Change], state: Folded) -> Folded:
    """One batch of a document's changes as the writer folds them (``BulkWriter._merge``)."""
    pending = sorted(changes, key=lambda c: _ORDER[c.kind])
    position = 0
    while position < len(pending):
        try:
            folded = fold_with_tombstone(state.doc, state.tombstone, pending[position])
        except MissingDocument:  # dead-lettered
            del pending[position]
            continue
        if folded.unapplied is not None:
            split_enrichment(pending, position)
        state = Folded(folded.doc, folded.tombstone)
        position += 1
    return state


def test_a_left_out_listing_still_brings_the_enrichment_it_carries() -> None:
    late = carried(carrying("ann", T1), T1)
    state = fold([listed("ann", T1), listed("bob", T1), unlist_change("w", "ann", T2)])
    folded = fold_with_tombstone(state.doc, state.tombstone, late)
    assert folded.ignored and folded.unapplied is None
    enrichment = carried_enrichment(late)
    assert enrichment is not None
    assert folded.doc == fold_change(state.doc, enrichment)
    assert folded.doc is not None and folded.doc["arxiv_id"] == "2601.00001"
    # No document to enrich: handed back, to be folded as a change of its own.
    gone = fold([listed("ann", T1), unlist_change("w", "ann", T2)])
    alone = fold_with_tombstone(gone.doc, gone.tombstone, late)
    assert alone.ignored and alone.doc is None and alone.unapplied == carried_enrichment(late)
    # ... and a listing of the same batch may bring the document back for it.
    assert fold_batch([late, carried(carrying("bob", T3, "pending", T3), T3)], gone).doc == \
        fold_batch([*changes_from_item(carrying("ann", T1), T1),
                    *changes_from_item(carrying("bob", T3, "pending", T3), T3)], gone).doc


_items = st.one_of(
    st.builds(lambda r, at, venue: (listing(r, venue=venue), at),
              st.sampled_from(["ann", "bob"]), st.sampled_from([T1, T2, T3, T4]),
              st.sampled_from([None, "A"])),
    st.builds(lambda r, at, status, answered: (carrying(r, at, status, answered), at),
              st.sampled_from(["ann", "bob"]), st.sampled_from([T1, T2, T3, T4]),
              st.sampled_from(["done", "none", "pending"]), st.sampled_from([T1, T2, T3, T4])),
    st.builds(lambda r, at: unlist_change("w", r, at),
              st.sampled_from(["ann", "bob"]), st.sampled_from([T1, T2, T3, T4])),
    st.builds(lambda status, at: enrichment_change("w", status=status, at=at),
              st.sampled_from(["none", "pending"]), st.sampled_from([T1, T2, T3, T4])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_items, min_size=1, max_size=5), min_size=1, max_size=3), st.randoms())
def test_listings_carrying_enrichment_fold_as_their_two_changes(
        batches: list[list[Any]], rnd: random.Random) -> None:
    """Batch after batch, with unlists and answers alone: one change a listing or two."""
    split, combined = Folded(None, None), Folded(None, None)
    for batch in batches:
        rnd.shuffle(batch)
        old = [c for e in batch for c in (changes_from_item(*e) if isinstance(e, tuple) else [e])]
        new = [changes_from_records([e[0]], e[1])[0][0] if isinstance(e, tuple) else e
               for e in batch]
        split, combined = fold_batch(old, split), fold_batch(new, combined)
        assert (combined.doc, combined.tombstone) == (split.doc, split.tombstone)


# --- the writer and `scholarindex replay` against OpenSearch ----------------------------

def profile(researcher: str, work_ids: list[str]) -> dict[str, Any]:
    return asdict(ResearcherItem(id=researcher, url=f"https://x/{researcher}",
                                 name=researcher.title(), work_ids=work_ids, complete=True))


def searched(config: OpenSearchConfig, client: OpenSearch) -> tuple[list[str], int]:
    """(work ids the search UI finds for the title, documents in the works alias)."""
    alias = alias_name(config.prefix, "works")
    client.indices.refresh(index=alias)
    body = TestClient(app_for(config)).get("/api/search", params={"q": "Title of w"}).json()
    return [hit["id"] for hit in body["hits"]], client.count(index=alias)["count"]


def test_a_tombstoned_work_stays_gone_after_replaying_an_older_dead_letter(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    writer = make_writer()
    items = [(profile("ann", ["w"]), T1), (listing("ann"), T1),
             (profile("bob", ["w"]), T1), (listing("bob"), T1)]
    first = writer.write([change_from_item(item, at) for item, at in items])
    assert first.dead_lettered == 0
    assert searched(opensearch_config, opensearch_client) == (["w"], 1)

    # A write of Ann's listing from that crawl failed (the cluster out of reach): a dead letter.
    dead = tmp_path / "older.jsonl"
    unreachable = make_writer(url="http://127.0.0.1:9", attempts=1, dead_letters=dead)
    assert unreachable.write([change_from_item(listing("ann", venue="Late"), T1)]).dead_lettered
    assert [letter.change.kind for _, letter in read_lines(dead) if letter] == ["work"]

    # Both complete pages drop the work: it leaves the index, tombstones stay.
    dropped = writer.write([change_from_item(profile(who, []), T2) for who in ("ann", "bob")])
    assert (dropped.unlisted, dropped.docs_deleted, dropped.dead_lettered) == (2, 1, 0)
    assert searched(opensearch_config, opensearch_client) == ([], 0)

    # The older dead letter, replayed: ignored (counted, not an error); the work stays gone.
    result = run_cli(["replay", str(dead), "--json"], cli_env(opensearch_config))
    assert result.exit_code == 0, result.output
    assert json_out(result) | {"path": None, "expired_path": None} == {
        "ok": True, "path": None, "read": 1, "delivered": 0, "failed_again": 0,
        "unreadable": 0, "ignored": 1, "fatal": None, "expired": 0, "expired_path": None}
    assert searched(opensearch_config, opensearch_client) == ([], 0)
    # So does a late write from the older crawl straight through a writer.
    late = writer.write([change_from_item(listing("bob"), T1)])
    assert (late.listings_ignored, late.listings_delivered, late.dead_lettered) == (1, 0, 0)
    assert late.stats()["index/listings_ignored"] == 1
    assert searched(opensearch_config, opensearch_client) == ([], 0)

    # A newer listing brings it back, with the first time Ann was ever seen listing it.
    back = writer.write([change_from_item(listing("ann"), T3)])
    assert (back.listings_delivered, back.docs_created, back.listings_ignored) == (1, 1, 0)
    assert searched(opensearch_config, opensearch_client) == (["w"], 1)
    doc = opensearch_client.get(index=alias_name(opensearch_config.prefix, "works"), id="w")
    assert [p["id"] for p in doc["_source"]["profiles"]] == ["ann"]
    assert (doc["_source"]["first_seen"], doc["_source"]["last_seen"]) == (T1, T3)


def test_the_writer_splits_a_left_out_listing_from_its_enrichment(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    """Ann's older listing comes back carrying an answer: the listing is ignored; with no
    document to enrich, the answer is dead-lettered alone, as a change of its own was."""
    dead = tmp_path / "dl.jsonl"
    writer = make_writer(dead_letters=dead)
    writer.write([change_from_item(profile("ann", ["w"]), T1),
                  change_from_item(listing("ann"), T1)])
    writer.write([change_from_item(profile("ann", []), T2)])
    late = writer.write([carried(carrying("ann", T1), T1)])
    assert (late.listings_ignored, late.listings_delivered, late.enrichments_delivered) == (1, 0, 0)
    letters = [letter for _, letter in read_lines(dead) if letter]
    assert [(x.change.kind, x.code) for x in letters] == [("enrichment", "missing_document")]
    assert letters[0].change == carried_enrichment(carried(carrying("ann", T1), T1))
    # With Bob's listing in the same batch, the document is back and takes the answer.
    both = writer.write([carried(carrying("ann", T1), T1),
                         carried(carrying("bob", T3, "pending", T3), T3)])
    assert (both.listings_ignored, both.listings_delivered, both.enrichments_delivered,
            both.enrichments_carried, both.delivered) == (1, 1, 2, 1, 2)
    doc = opensearch_client.get(index=alias_name(opensearch_config.prefix, "works"), id="w")
    assert doc["_source"]["enrichment"]["status"] == "done"  # an answer beats "pending"
    assert [p["id"] for p in doc["_source"]["profiles"]] == ["bob"]


def test_two_writers_unlisting_one_work_keep_both_tombstones(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    """Ann's and Bob's pages drop the same works at once: tombstone writes conflict, are
    re-read and re-merged; the works go, and every tombstone names both profiles."""
    work_ids = [f"w{n:02d}" for n in range(20)]
    make_writer().write([change_from_item(item, T1) for who in ("ann", "bob") for item in (
        profile(who, work_ids), *(listing(who, w) for w in work_ids))])
    reports: list[Any] = []

    def drop(who: str) -> None:
        reports.append(make_writer().write([change_from_item(profile(who, []), T2)]))

    threads = [threading.Thread(target=drop, args=(who,)) for who in ("ann", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(reports) == 2 and all(r.dead_lettered == 0 for r in reports)
    assert sum(r.unlisted for r in reports) == 2 * len(work_ids)
    assert sum(r.docs_deleted for r in reports) == len(work_ids)
    assert searched(opensearch_config, opensearch_client) == ([], 0)
    tombstones = alias_name(opensearch_config.prefix, "tombstones")
    found = opensearch_client.mget(index=tombstones, body={"ids": work_ids})["docs"]
    assert [[e["researcher_id"] for e in hit["_source"]["unlisted"]] for hit in found] \
        == [["ann", "bob"]] * len(work_ids)
    # Neither profile's older listing brings any of them back.
    late = make_writer().write([change_from_item(listing(who, w), T1)
                                for who in ("ann", "bob") for w in work_ids])
    assert late.listings_ignored == 2 * len(work_ids) and late.docs_created == 0


# --- retention: pruning records, and the listings replay no longer delivers ---------------

def _tomb(*records: tuple[str, str]) -> TombstoneDoc:
    return {"work_id": "w", "unlisted": [{"researcher_id": who, "unlisted_at": at,
                                          "first_seen": T1} for who, at in records]}


def test_retention_cutoff_is_now_minus_the_days() -> None:
    assert retention_cutoff(365, "2026-11-26T00:00:00Z") == "2025-11-26T00:00:00.000Z"
    assert retention_cutoff(0.5, "2026-01-01T12:00:00+00:00") == "2026-01-01T00:00:00.000Z"


def test_prune_drops_only_records_unlisted_before_the_cutoff() -> None:
    tomb = _tomb(("ann", T1), ("bob", T3))
    assert prune_tombstone(tomb, T2) == _tomb(("bob", T3))
    assert pruned_records(tomb, T2) == 1
    assert prune_tombstone(tomb, T1) == tomb  # unlisted exactly at the cutoff: kept
    assert pruned_records(tomb, T1) == 0
    assert prune_tombstone(tomb, T4) is None  # no record left: the tombstone goes
    assert pruned_records(tomb, T4) == 2
    assert prune_tombstone(None, T4) is None
    assert tomb == _tomb(("ann", T1), ("bob", T3))  # the input is not changed


@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "cy"]),
                          st.sampled_from([T1, T2, T3, T4])), min_size=1, max_size=3,
                unique_by=lambda r: r[0]),
       st.sampled_from([T1, T2, T3, T4]))
def test_prune_is_idempotent_and_keeps_what_a_listing_after_the_cutoff_needs(
        records: list[tuple[str, str]], cutoff: str) -> None:
    tomb = _tomb(*records)
    once = prune_tombstone(tomb, cutoff)
    assert prune_tombstone(once, cutoff) == once
    # The guarantee: for every listing replay still delivers (seen at or after the
    # cutoff), the pruned tombstone decides exactly as the full one.
    for who, _ in records:
        for seen in (T1, T2, T3, T4):
            change = change_from_item(listing(who), seen)
            if expired_listing(change, cutoff):
                continue
            assert fold_with_tombstone(None, once, change).ignored == \
                fold_with_tombstone(None, tomb, change).ignored


def test_only_listings_seen_before_the_cutoff_expire() -> None:
    assert expired_listing(change_from_item(listing("ann"), T1), T2)
    assert not expired_listing(change_from_item(listing("ann"), T2), T2)
    assert not expired_listing(unlist_change("w", "ann", T1), T2)
    assert not expired_listing(enrichment_change("w", status="none"), T4)
