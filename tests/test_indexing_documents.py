"""The pure document functions: idempotent, order independent, never mutating."""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from itertools import permutations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scholarindex.core.items import RESEARCHER_FIELDS, WORK_FIELDS, ResearcherItem, WorkItem
from scholarindex.core.names import name_key, nicest
from scholarindex.indexing.changes import (
    Change,
    apply_change,
    carried_enrichment,
    change_from_item,
    changes_from_item,
    changes_from_records,
    enrichment_change,
)
from scholarindex.indexing.documents import (
    ARXIV_FIELDS,
    LISTING_FIELDS,
    RESEARCHER_DOC_FIELDS,
    apply_enrichment,
    merge_listing,
    merge_researcher,
    merge_works,
    resolution_link,
    timestamp,
    work_doc_from_listing,
)
from scholarindex.indexing.errors import InvalidItem
from scholarindex.indexing.indices import load_mapping
from scholarindex.indexing.shapes import WorkDoc, work_of

T1, T2, T3 = "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z"


def listing(researcher: str, **fields: object) -> dict:
    base = asdict(WorkItem(work_id="relibra", title="ReLibra: Serving LLMs",
                           researcher_id=researcher, researcher_name=researcher.title()))
    base.update(fields)
    return base


CHAO = listing("chao-jin", researcher_name="Chao Jin", authors=["Chao Jin", "Yinmin Zhong"],
               year=2026, type="preprint", venue="arXiv", abstract="Short.")
YINMIN = listing("yinmin-zhong", researcher_name="Yinmin Zhong", title="RELIBRA: SERVING LLMS",
                 authors=["CHAO JIN", "Yinmin Zhong", "Xin Jin"], authors_truncated=True,
                 year=2025, date="2025-12-01", category="DC", score=68.9, code=True,
                 abstract="A longer abstract of the paper.")
THIRD = listing("xin-jin", researcher_name="Xin Jin", authors=["Chao Jin", "Yinmin Zhong"],
                title="ReLibra — serving LLMs, fast", venue="NSDI")


def fold(listings: list[tuple[dict, str]]) -> WorkDoc:
    doc: WorkDoc | None = None
    for item, seen in listings:
        doc = merge_listing(doc, item, seen)
    assert doc is not None
    return doc


def without_times(doc: Mapping[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(dict(doc))
    for entry in [copied, *copied.get("listings", [])]:
        entry.pop("first_seen", None)
        entry.pop("last_seen", None)
    return copied


def test_new_document_has_the_contract_fields() -> None:
    doc = work_doc_from_listing(CHAO, T1)
    for name in ("title", "abstract", "year", "authors", "profiles", "categories", "arxiv_id"):
        assert name in doc
    assert doc["profiles"] == [{"id": "chao-jin", "name": "Chao Jin", "url": None,
                                "source": None}]
    assert doc["arxiv_id"] is None
    assert doc["first_seen"] == doc["last_seen"] == T1


def test_two_profiles_merge_into_one_document() -> None:
    doc = fold([(CHAO, T1), (YINMIN, T2)])
    assert [p["id"] for p in doc["profiles"]] == ["chao-jin", "yinmin-zhong"]
    assert doc["authors"] == ["Chao Jin", "Yinmin Zhong", "Xin Jin"]
    assert doc["title"] == "ReLibra: Serving LLMs"  # mixed case beats ALL CAPS
    assert doc["abstract"] == "A longer abstract of the paper."
    assert doc["year"] == 2025 and doc["date"] == "2025-12-01"
    assert doc["has_code"] is True and doc["score"] == 68.9
    assert doc["categories"] == ["DC"] and doc["venues"] == ["arXiv"]
    assert doc["profile_count"] == 2
    assert (doc["first_seen"], doc["last_seen"]) == (T1, T2)


@pytest.mark.parametrize("order", list(permutations(range(3))))
def test_merge_order_does_not_matter(order: tuple[int, ...]) -> None:
    stamped = [(CHAO, T1), (YINMIN, T2), (THIRD, T3)]
    expected = fold(stamped)
    assert fold([stamped[i] for i in order]) == expected


def test_merging_the_same_listing_again_moves_only_last_seen() -> None:
    once = fold([(CHAO, T1), (YINMIN, T1)])
    twice = fold([(CHAO, T1), (YINMIN, T1), (CHAO, T2), (YINMIN, T3)])
    assert without_times(twice) == without_times(once)
    assert twice["first_seen"] == T1 and twice["last_seen"] == T3
    assert merge_listing(once, CHAO, T1) == once  # same listing, same time: no change at all


def test_later_listing_replaces_what_its_profile_said_but_older_cannot() -> None:
    fixed = {**CHAO, "title": "ReLibra: Serving LLMs Efficiently"}
    doc = fold([(CHAO, T1), (fixed, T2)])
    assert [e["title"] for e in doc["listings"]] == ["ReLibra: Serving LLMs Efficiently"]
    assert fold([(fixed, T2), (CHAO, T1)]) == doc  # a late replay of the old one loses


def test_functions_never_mutate_their_inputs() -> None:
    item, doc = copy.deepcopy(YINMIN), work_doc_from_listing(CHAO, T1)
    item_before, doc_before = copy.deepcopy(item), copy.deepcopy(doc)
    merged = merge_listing(doc, item, T2)
    assert item == item_before and doc == doc_before
    authors = merged["listings"][0]["authors"]
    assert authors is not None
    authors.append("Mallory")  # the result shares nothing either
    assert doc == doc_before and item == item_before
    patch = {"status": "done", "arxiv": {"id": "2601.00001", "authors": ["A"]}, "reason": None}
    patch_before = copy.deepcopy(patch)
    enriched = apply_enrichment(doc, patch, T2)
    assert enriched["arxiv"] is not None
    enriched["arxiv"]["authors"].append("B")
    assert patch == patch_before and doc == doc_before


@pytest.mark.parametrize("spellings", [
    ["José Luis Peñalver", "JOSE LUIS PENALVER", "jose luis penalver"],
    ["Jose-Luis Peñalver", "José Luis Peñalver"],
    ["Søren Ørsted", "Soren Orsted"],
])
def test_authors_deduplicate_across_case_accents_and_punctuation(spellings: list[str]) -> None:
    assert len({name_key(s) for s in spellings}) == 1
    items = [listing(f"r{i}", researcher_name=f"Owner {i}", authors=[s, "Ann Lee"])
             for i, s in enumerate(spellings)]
    doc = fold([(item, T1) for item in items])
    assert doc["authors"][0] == nicest(spellings)
    assert any(ord(ch) > 127 for ch in doc["authors"][0])  # the accented spelling wins
    assert doc["authors"].count("Ann Lee") == 1


def test_profile_owner_joins_the_authors_once() -> None:
    doc = work_doc_from_listing(listing("r1", researcher_name="CHAO JIN",
                                        authors=["Chao Jin", "et al."]), T1)
    assert doc["authors"] == ["Chao Jin"]
    lone = work_doc_from_listing(listing("r2", researcher_name="Yinmin Zhong", authors=None), T1)
    assert lone["authors"] == ["Yinmin Zhong"]


def test_researcher_merge_is_idempotent_and_keeps_the_newest() -> None:
    item = asdict(ResearcherItem(id="chao-jin", url="https://x/chao", name="Chao Jin",
                                 followers=3))
    newer = {**item, "followers": 5}
    doc = merge_researcher(merge_researcher(None, item, T1), newer, T2)
    assert doc["followers"] == 5 and (doc["first_seen"], doc["last_seen"]) == (T1, T2)
    assert merge_researcher(merge_researcher(None, newer, T2), item, T1) == doc
    assert merge_researcher(doc, newer, T2) == doc


def test_enrichment_newest_wins_and_sets_arxiv_id() -> None:
    doc = work_doc_from_listing(CHAO, T1)
    done = {"status": "done", "arxiv": {"id": "2601.00001", "title": "ReLibra",
                                        "published": datetime(2026, 1, 1, tzinfo=UTC)},
            "reason": None}
    none = {"status": "none", "arxiv": None, "reason": "no candidate"}
    a = apply_enrichment(apply_enrichment(doc, done, T3), none, T2)
    b = apply_enrichment(apply_enrichment(doc, none, T2), done, T3)
    assert a == b and a["arxiv_id"] == "2601.00001" and a["arxiv"] is not None
    assert a["arxiv"]["published"] == "2026-01-01T00:00:00.000Z"
    assert a["enrichment"] == {"status": "done", "reason": None, "updated_at": T3}
    # Listings merged afterwards keep the enrichment.
    assert merge_listing(a, YINMIN, T3)["arxiv_id"] == "2601.00001"


def test_bad_input_raises_invalid_item() -> None:
    with pytest.raises(InvalidItem):
        merge_listing(None, {**CHAO, "work_id": ""}, T1)
    with pytest.raises(InvalidItem):
        merge_listing(work_doc_from_listing(CHAO, T1), {**CHAO, "work_id": "other"}, T1)
    with pytest.raises(InvalidItem):
        apply_enrichment(work_of({}), {"status": "done", "arxiv": {"bogus": 1}}, T1)
    with pytest.raises(InvalidItem):
        apply_enrichment(work_of({}), {"status": "maybe"}, T1)
    with pytest.raises(InvalidItem):
        change_from_item({"kind": "work", "title": "no id"})


def test_changes_accept_dataclasses_and_dicts_alike() -> None:
    item = WorkItem(work_id="w", title="T", researcher_id="r", researcher_name="R")
    a, b = change_from_item(item, T1), change_from_item(asdict(item), T1)
    assert a == b and a.index == "works"
    assert Change.from_json(json.loads(json.dumps(a.to_json()))) == a
    patch = enrichment_change("w", status="none", at=T2)
    assert apply_change(apply_change(None, a), patch)["enrichment"]["status"] == "none"


def test_enrichment_attached_by_the_arxiv_pipeline_becomes_a_change() -> None:
    item = WorkItem(work_id="w", title="T", researcher_id="r", researcher_name="R")
    assert changes_from_item(item, T1) == [change_from_item(item, T1)]
    # The arXiv pipeline sets the item's enrichment and arxiv fields.
    item.enrichment = {"status": "done", "reason": None}
    item.arxiv = {"id": "2601.00001"}
    listing_change, patch = changes_from_item(item, T1)
    assert patch.kind == "enrichment" and patch.data["arxiv"] == {"id": "2601.00001"}
    as_dict = {**asdict(item), "enrichment": {"status": "done", "reason": None},
               "arxiv": {"id": "2601.00001"}}
    assert changes_from_item(as_dict, T1) == [change_from_item(as_dict, T1), patch]
    doc = apply_change(apply_change(None, listing_change), patch)
    assert doc["arxiv_id"] == "2601.00001"


def test_pending_never_erases_an_answer() -> None:
    doc = work_doc_from_listing(CHAO, T1)
    done = {"status": "done", "arxiv": {"id": "2601.00001"}, "reason": None}
    pending = {"status": "pending", "arxiv": None, "reason": "queued"}
    later_pending = apply_enrichment(apply_enrichment(doc, done, T1), pending, T3)
    assert later_pending == apply_enrichment(apply_enrichment(doc, pending, T3), done, T1)
    assert later_pending["arxiv_id"] == "2601.00001"
    none = {"status": "none", "arxiv": None, "reason": "no match"}
    assert apply_enrichment(later_pending, none, T2)["arxiv_id"] is None  # a newer answer wins


def test_timestamps_are_canonical() -> None:
    assert timestamp("2026-01-01T01:00:00+01:00") == "2026-01-01T00:00:00.000Z"
    assert timestamp(datetime(2026, 1, 1)) == "2026-01-01T00:00:00.000Z"


def test_document_fields_match_the_mappings() -> None:
    """A field the code writes but the strict mapping lacks would reject every document."""
    works = load_mapping("works")["mappings"]["properties"]
    doc = apply_enrichment(fold([(CHAO, T1), (YINMIN, T2)]),
                           {"status": "done", "arxiv": dict.fromkeys(ARXIV_FIELDS)}, T2)
    # only a joined document has resolution; only a new work judged another's, hidden_by
    assert set(doc) == set(works) - {"resolution", "hidden_by"}
    other = work_doc_from_listing(listing("ada", work_id="zzzz", title="ReLibra: Serving"), T1)
    joined = merge_works([doc, other], [resolution_link("zzzz", "relibra", "match", 0.9)])
    assert set(joined) == set(works) - {"hidden_by"}
    assert {**doc, "hidden_by": "x"}.keys() <= works.keys()  # the writer's (indexing.unresolved)
    assert set(doc["listings"][0]) == set(works["listings"]["properties"])
    assert set(doc["profiles"][0]) == set(works["profiles"]["properties"])
    assert set(doc["arxiv"] or ()) == set(works["arxiv"]["properties"])
    assert set(LISTING_FIELDS) <= set(WORK_FIELDS)
    researchers = load_mapping("researchers")["mappings"]["properties"]
    assert set(RESEARCHER_DOC_FIELDS) == set(RESEARCHER_FIELDS)
    assert set(researchers) == {*RESEARCHER_DOC_FIELDS, "first_seen", "last_seen"}


_names = st.sampled_from(["Chao Jin", "CHAO JIN", "Cháo Jin", "Yinmin Zhong", "Xin Jin",
                          "yinmin zhong", "Ann Lee", "et al."])
_listings = st.builds(
    lambda r, title, authors, year, abstract, code: listing(
        r, title=title, authors=authors, year=year, abstract=abstract, code=code),
    st.sampled_from(["a", "b", "c", "d"]),
    st.sampled_from(["ReLibra", "RELIBRA", "ReLibra: Serving", "relibra: serving"]),
    st.none() | st.lists(_names, max_size=4),
    st.none() | st.integers(2020, 2026),
    st.none() | st.sampled_from(["", "x", "longer abstract", "yy"]),
    st.none() | st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_listings, st.sampled_from([T1, T2, T3])), min_size=1, max_size=6),
       st.randoms())
def test_any_order_any_repeats_same_document(stamped: list, rnd: random.Random) -> None:
    shuffled = list(stamped)
    rnd.shuffle(shuffled)
    assert fold(shuffled) == fold(stamped)
    assert fold(stamped + stamped[:2]) == fold(stamped)


# --- arXiv's authors and categories in the document's own fields -------------------------

RELIBRA_ARXIV = {"id": "2603.08127", "title": "ReLibra: Serving LLMs",
                 "authors": ["Chao Jin", "Yinmin Zhong", "Xin Jin", "Ziyi Zhang", "Cháo Jin"],
                 "categories": ["cs.DC", "cs.LG"], "primary_category": "cs.DC"}
MATCHED = {"status": "done", "arxiv": RELIBRA_ARXIV, "reason": "matched"}
NO_MATCH = {"status": "none", "arxiv": None, "reason": "no candidate"}
STILL_PENDING = {"status": "pending", "arxiv": None, "reason": "queued"}
INITIALS = listing("yz", researcher_name="Yinmin Zhong", authors=["C. Jin", "Y. Zhong"],
                   category="DC")


def test_a_verified_match_merges_arxiv_authors_and_categories() -> None:
    doc = apply_enrichment(fold([(CHAO, T1), (YINMIN, T1), (INITIALS, T1)]), MATCHED, T2)
    # arXiv's byline leads; "C. Jin", "CHAO JIN" and "Cháo Jin" are one person, shown
    # in the fullest, nicest spelling; "Y. Zhong" is Yinmin Zhong.
    assert doc["authors"] == ["Cháo Jin", "Yinmin Zhong", "Xin Jin", "Ziyi Zhang"]
    assert doc["categories"] == ["DC", "cs.DC", "cs.LG"]
    # The profiles' spellings stay in the listings as provenance.
    assert ["C. Jin", "Y. Zhong"] in [e["authors"] for e in doc["listings"]]
    # Without a match, only the listings speak (and "C. Jin" cannot be told apart).
    plain = fold([(CHAO, T1), (YINMIN, T1), (INITIALS, T1)])
    assert "C. Jin" in plain["authors"] and plain["categories"] == ["DC"]


def test_an_initial_naming_two_arxiv_authors_stays_apart() -> None:
    two_jins = {**RELIBRA_ARXIV, "authors": ["Chao Jin", "Cheng Jin", "Yinmin Zhong"]}
    doc = apply_enrichment(work_doc_from_listing(INITIALS, T1),
                           {"status": "done", "arxiv": two_jins}, T2)
    assert doc["authors"] == ["Chao Jin", "Cheng Jin", "Yinmin Zhong", "C. Jin"]


def test_only_a_verified_match_contributes() -> None:
    doc = fold([(CHAO, T1)])
    unverified = {"status": "none", "arxiv": RELIBRA_ARXIV, "reason": "rejected"}
    assert apply_enrichment(doc, unverified, T2)["authors"] == doc["authors"]
    matched = apply_enrichment(doc, MATCHED, T2)
    assert "cs.LG" in matched["categories"]
    # A newer answer without a match takes arXiv's names and codes out again.
    undone = apply_enrichment(matched, NO_MATCH, T3)
    assert (undone["authors"], undone["categories"]) == (doc["authors"], doc["categories"])


_arxiv_authors = st.lists(st.sampled_from(["Chao Jin", "C. Jin", "Cheng Jin", "Yinmin Zhong",
                                           "Y. Zhong", "Ann Lee", "CHAO JIN", "Zhong, Yinmin"]),
                          min_size=1, max_size=4)
_patches = st.builds(
    lambda status, authors, categories: {
        "status": status, "reason": status,
        "arxiv": ({"id": "2603.08127", "authors": authors, "categories": categories}
                  if status == "done" else None)},
    st.sampled_from(["done", "none", "pending"]), _arxiv_authors,
    st.lists(st.sampled_from(["cs.LG", "cs.DC", "stat.ML"]), max_size=2),
)
_initial_listings = st.builds(
    lambda r, authors, category: listing(r, authors=authors, category=category,
                                         researcher_name=r),
    st.sampled_from(["C. Jin", "Chao Jin", "Yinmin Zhong", "Ann Lee"]),
    st.none() | _arxiv_authors, st.none() | st.sampled_from(["DC", "LG"]),
)


def _replay(first: tuple[dict, str], events: list[tuple[str, dict, str]]) -> WorkDoc:
    doc: WorkDoc = merge_listing(None, *first)
    for kind, data, at in events:
        doc = merge_listing(doc, data, at) if kind == "listing" else apply_enrichment(doc, data, at)
    return doc


_times = st.sampled_from([T1, T2, T3])
# A work's first listing with its time, then listings and enrichment patches with theirs.
_first_listing = st.tuples(_initial_listings | _listings, _times)


def _events(max_size: int) -> st.SearchStrategy:
    return st.lists(st.tuples(st.just("listing"), _initial_listings | _listings, _times)
                    | st.tuples(st.just("patch"), _patches, _times), max_size=max_size)


@settings(max_examples=150, deadline=None)
@given(_first_listing, _events(6),
       st.randoms())
def test_enrichment_and_recrawls_in_any_order_give_one_document(
        first: tuple, events: list, rnd: random.Random) -> None:
    """Listings and enrichment answers arriving in any order, any number of times."""
    shuffled = list(events)
    rnd.shuffle(shuffled)
    doc = _replay(first, events)
    assert _replay(first, shuffled) == doc
    assert _replay(first, events + events) == doc  # re-enrichment and re-crawls: idempotent
    # The derived fields are exactly what the listings and the winning answer give.
    again = apply_enrichment(doc, {"status": doc["enrichment"]["status"] if doc["enrichment"]
                                   else "pending", "arxiv": doc["arxiv"]}, T1)
    assert (again["authors"], again["categories"]) == (doc["authors"], doc["categories"])
    assert len({name_key(a) for a in doc["authors"]}) == len(doc["authors"])


# --- a listing that carries its enrichment: one change, the same document -----------------

def carrying(item: dict, patch: dict, at: str | None) -> dict:
    """A work item as the arXiv pipeline leaves it: the answer in its own fields."""
    enrichment = {"status": patch["status"], "reason": patch.get("reason")}
    if at is not None:  # a pending lookup has no answer time: the crawl's is used
        enrichment["updated_at"] = at
    return {**item, "arxiv": patch.get("arxiv"), "enrichment": enrichment}


def one_change(item: dict, seen: str) -> Change:
    changes, refused = changes_from_records([item], seen)
    assert not refused and len(changes) == 1
    return changes[0]


_KIND_ORDER = {"work": 0, "researcher": 0, "enrichment": 1}  # as the writer orders a document's


def fold_changes(changes: list[Change]) -> WorkDoc:
    doc: Mapping[str, Any] | None = None
    for change in sorted(changes, key=lambda c: _KIND_ORDER[c.kind]):
        doc = apply_change(doc, change)
    assert doc is not None
    return work_of(doc)


def test_a_listing_carries_its_enrichment_in_one_change() -> None:
    item = carrying(CHAO, MATCHED, T2)
    change = one_change(item, T1)
    assert change.kind == "work" and change.enriched and change.data == item
    listing_change, patch = changes_from_item(item, T1)  # the separate form, as before
    assert not listing_change.enriched and carried_enrichment(change) == patch
    assert carried_enrichment(listing_change) is None
    assert apply_change(None, change) == apply_change(apply_change(None, listing_change), patch)
    # Stored in a dead letter and read back, or pickled to the writer: the same change.
    assert Change.from_json(json.loads(json.dumps(change.to_json()))) == change
    assert pickle.loads(pickle.dumps(change)) == change
    # A line written without the mark (older versions) is a listing alone.
    assert "enriched" not in listing_change.to_json()
    assert Change.from_json(listing_change.to_json()) == listing_change


def test_an_enrichment_that_cannot_apply_stays_a_change_of_its_own() -> None:
    for patch in ({"status": "maybe"}, {"status": "done", "arxiv": {"bogus": 1}}):
        item = carrying(CHAO, patch, T2)
        changes, _ = changes_from_records([item], T1)
        assert changes == changes_from_item(item, T1) and len(changes) == 2
        with pytest.raises(InvalidItem):  # the patch fails alone, the listing is merged
            apply_change(apply_change(None, changes[0]), changes[1])
    without = carrying(CHAO, {"status": None}, T2)
    assert changes_from_records([without], T1)[0] == [change_from_item(without, T1)]


def test_enrichment_held_as_attributes_stays_a_change_of_its_own() -> None:
    @dataclass
    class Listing:  # an item class without the arxiv/enrichment fields
        work_id: str
        title: str
        researcher_id: str
        kind: str = "work"

    item = Listing("w", "T", "r")
    item.enrichment = {"status": "none", "reason": None}  # type: ignore[attr-defined]
    item.arxiv = None  # type: ignore[attr-defined]
    changes, _ = changes_from_records([item], T1)
    assert [c.kind for c in changes] == ["work", "enrichment"] and not changes[0].enriched


@settings(max_examples=150, deadline=None)
@given(_first_listing, _events(4),
       _initial_listings | _listings, _patches, _times,
       _times, st.none() | _times)
def test_merging_with_an_enrichment_is_merging_then_enriching(
        first: tuple, events: list, item: dict, patch: dict, seen: str, at: str,
        first_seen: str | None) -> None:
    doc = _replay(first, events)
    expected = apply_enrichment(merge_listing(doc, item, seen, first_seen), patch, at)
    assert merge_listing(doc, item, seen, first_seen, enrichment=patch, enriched_at=at) == expected
    new = apply_enrichment(merge_listing(None, item, seen), patch, at)
    assert merge_listing(None, item, seen, enrichment=patch, enriched_at=at) == new


_carried = st.tuples(_initial_listings | _listings, _patches, st.sampled_from([T1, T2, T3]),
                     st.none() | st.sampled_from([T1, T2, T3]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_carried, min_size=1, max_size=6),
       st.lists(st.tuples(_patches, st.sampled_from([T1, T2, T3])), max_size=3),
       st.randoms())
def test_one_change_per_listing_folds_as_the_two_changes_in_any_order(
        listings: list, answers: list, rnd: random.Random) -> None:
    """Listings with their enrichment, and answers that came alone (``work_enriched``)."""
    items = [(carrying(item, patch, at), seen) for item, patch, seen, at in listings]
    alone = [enrichment_change("relibra", status=p["status"], arxiv=p["arxiv"],
                               reason=p["reason"], at=at) for p, at in answers]
    split = [c for item, seen in items for c in changes_from_item(item, seen)] + alone
    combined = [one_change(item, seen) for item, seen in items] + alone
    assert all(c.enriched for c in combined[:len(items)])
    expected = fold_changes(split)
    rnd.shuffle(split)
    rnd.shuffle(combined)
    assert fold_changes(split) == expected
    assert fold_changes(combined) == expected
    # A dead-letter file from before, replayed with the new changes: still the same.
    assert fold_changes(split[:2] + combined) == expected


def test_joining_a_matched_document_keeps_its_match_whatever_answered_last() -> None:
    """Two listings of one paper: one verified on arXiv, the other (a journal's year,
    other authors) found no entry, earlier or later. The joined work is that entry."""
    other = listing("ada", work_id="zzzz", title="ReLibra: Serving LLMs, the journal version")
    for first, second in ((T1, T3), (T3, T1)):
        matched = apply_enrichment(work_doc_from_listing(CHAO, T1), MATCHED, first)
        unmatched = apply_enrichment(work_doc_from_listing(other, T1), NO_MATCH, second)
        for docs in permutations([matched, unmatched]):
            joined = merge_works(docs)
            assert joined["arxiv_id"] == matched["arxiv_id"] is not None
            enrichment = joined["enrichment"]
            assert enrichment is not None and enrichment["status"] == "done"
