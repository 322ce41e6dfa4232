"""The pure parts of the ops CLI: rebuild, mapping diff, run drops, snapshot comparison."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from bench.search_data import fixture_changes, synthetic_works
from scholarindex.indexing.changes import Change, apply_change, enrichment_change
from scholarindex.indexing.indices import load_mapping, read_mapping
from scholarindex.ops.mappings import diff_mapping
from scholarindex.ops.rebuild import document_changes, rebuild
from scholarindex.ops.runs import flag_drops
from scholarindex.ops.verify import TOP_HITS, Snapshot, compare


def fixture_documents() -> dict[tuple[str, str], Mapping[str, Any]]:
    """The fixture pages merged in memory the way the writer merges them, some enriched."""
    docs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for change in fixture_changes():
        key = (change.index, change.doc_id)
        docs[key] = apply_change(docs.get(key), change)
    for n, key in enumerate(sorted(k for k in docs if k[0] == "works")):
        patch: Change | None = None
        if n % 3 == 0:
            patch = enrichment_change(key[1], status="done", arxiv={
                "id": f"2401.{n:05d}", "title": "T", "published": "2024-01-01T00:00:00Z"},
                reason="matched", at="2026-01-01T00:00:00Z")
        elif n % 3 == 1:
            patch = enrichment_change(key[1], status="pending", reason="queued",
                                      at="2026-01-02T00:00:00Z")
        if patch is not None:
            docs[key] = apply_change(docs[key], patch)
    return docs


def test_rebuild_gives_back_every_stored_document() -> None:
    docs = fixture_documents()
    assert {k[0] for k in docs} == {"works", "researchers"}
    for (name, doc_id), doc in docs.items():
        original = copy.deepcopy(doc)
        assert rebuild(name, doc_id, doc) == doc
        assert doc == original  # the input is not changed


def test_rebuild_of_synthetic_works_and_merged_listings_with_seen_times() -> None:
    for doc in synthetic_works(300, seed=5):
        assert rebuild("works", doc["work_id"], doc) == doc
    first = apply_change(None, Change("work", "w", {
        "kind": "work", "work_id": "w", "title": "A title", "researcher_id": "r1"},
        "2025-01-01T00:00:00.000Z"))
    later = apply_change(first, Change("work", "w", {
        "kind": "work", "work_id": "w", "title": "A title", "researcher_id": "r1"},
        "2025-06-01T00:00:00.000Z"))
    rebuilt = rebuild("works", "w", later)
    assert rebuilt["listings"][0]["first_seen"] == "2025-01-01T00:00:00.000Z"
    assert rebuilt["listings"][0]["last_seen"] == "2025-06-01T00:00:00.000Z"


def test_document_changes_of_a_work_carry_its_enrichment() -> None:
    docs = fixture_documents()
    key = next(k for k, d in docs.items() if k[0] == "works" and d.get("arxiv_id"))
    kinds = [c.kind for c in document_changes("works", key[1], docs[key])]
    assert kinds[-1] == "enrichment" and set(kinds[:-1]) == {"work"}
    with pytest.raises(ValueError):
        document_changes("nope", "x", {})


# --- mapping diff --------------------------------------------------------------------------

def live_echo(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a server answers for an index made from ``body``: strings for scalars, defaults."""
    mappings = copy.deepcopy(body["mappings"])
    sayt = mappings["properties"]["title"]["fields"]["sayt"]
    sayt.update(max_shingle_size=3, doc_values=False)  # filled in by the server
    mappings["properties"]["authors"]["ignore_above"] = "512"
    settings = {"analysis": copy.deepcopy(body["settings"]["analysis"]),
                "number_of_shards": "1", "creation_date": "1"}
    return mappings, settings


def test_a_fresh_index_matches_its_file() -> None:
    body = load_mapping("works")
    diff = diff_mapping(body, *live_echo(body))
    assert diff.same, diff


def test_differences_are_named() -> None:
    body = load_mapping("works")
    mappings, settings = live_echo(body)
    edited = copy.deepcopy(body)
    props = edited["mappings"]["properties"]
    props["venues"]["ignore_above"] = 256  # changed
    props["profiles"]["properties"]["orcid"] = {"type": "keyword"}  # added, nested
    props["title"]["fields"]["sayt"]["analyzer"] = "standard"  # changed multi-field
    del props["has_code"]  # removed
    edited["mappings"]["dynamic"] = "false"
    edited["settings"]["analysis"]["analyzer"]["folded"]["filter"].append("porter_stem")
    diff = diff_mapping(edited, mappings, settings)
    assert diff.added == ["profiles.orcid"]
    assert diff.removed == ["has_code"]
    assert diff.changed == ["title.sayt", "venues"]
    assert diff.other == ["dynamic: live strict, file false",
                          "analysis settings differ: analyzer.folded"]
    assert "added profiles.orcid" in diff.summary()


def test_read_mapping_from_another_folder(tmp_path: Any) -> None:
    (tmp_path / "works.json").write_text('{"mappings": {"_meta": {"version": 7}}}')
    assert read_mapping("works", tmp_path)["mappings"]["_meta"]["version"] == 7
    with pytest.raises(ValueError, match="no mapping file"):
        read_mapping("researchers", tmp_path)
    (tmp_path / "researchers.json").write_text("{oops")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_mapping("researchers", tmp_path)


# --- crawl runs ----------------------------------------------------------------------------

def run(job: str, when: str, listings: int, parsed: int = 50) -> dict[str, Any]:
    return {"job": job, "finished_at": when, "listings": listings, "pages": {"parsed": parsed},
            "distinct_works": listings, "indexed": listings}


def test_drops_are_flagged_against_the_same_jobs_previous_run() -> None:
    runs = [run("a", "2026-01-03", 40), run("b", "2026-01-02", 5),
            run("a", "2026-01-02", 100, parsed=9), run("b", "2026-01-01", 9),
            run("a", "2026-01-01", 100)]
    flagged = flag_drops(runs)
    assert flagged[0]["drops"] == ["listings 100 -> 40 (-60%)", "distinct works 100 -> 40 (-60%)",
                                   "documents indexed 100 -> 40 (-60%)"]
    assert flagged[1]["drops"] == []  # 9 -> 5: too small a base to judge
    assert flagged[2]["drops"] == ["pages parsed 50 -> 9 (-82%)"]
    assert flagged[4]["drops"] == []  # the first run of a job has nothing to compare with


def test_a_drop_needs_half_and_a_base_of_ten() -> None:
    assert flag_drops([run("a", "2", 50), run("a", "1", 100)])[0]["drops"] == []
    assert flag_drops([run("a", "2", 49), run("a", "1", 100)])[0]["drops"][0].startswith(
        "listings 100 -> 49")


# --- snapshot comparison -------------------------------------------------------------------

def snap(index: str, count: int = 3, facet: list[tuple[Any, int]] | None = None,
         ranked: list[str] | None = None, first: list[str] | None = None,
         total: int = 3) -> Snapshot:
    ranked = ranked if ranked is not None else ["a", "b", "c"]
    return Snapshot(index, count, {"categories": (facet or [("CV", 2), ("LG", 1)], 0)},
                    {"q": (total, first if first is not None else ["a", "b", "c"], ranked)})


def test_equal_snapshots_have_no_differences() -> None:
    assert compare(snap("old"), snap("new")).all() == []


def test_counts_facets_and_matches_are_compared() -> None:
    found = compare(snap("old"), snap("new", count=2, facet=[("CV", 1), ("LG", 1)], total=2,
                                      first=["a", "b"]))
    assert found.count == "document count: old has 3, new has 2"
    assert found.facets == ["facet categories: CV 2->1"]
    assert found.queries[0].startswith("query 'q' finds 3 on old [a, b, c], 2 on new [a, b]")
    assert found.blocking(accept_differences=True) == [found.count]
    assert len(found.blocking(accept_differences=False)) == 3


def test_relevance_order_may_shift_within_the_slack_only() -> None:
    ids = [f"d{i:02d}" for i in range(20)]
    # A near-tie at the cut: the 11th moves into the top 10, the 9th and 10th down one.
    shuffled = [*ids[:TOP_HITS - 2], ids[TOP_HITS], ids[TOP_HITS - 2], ids[TOP_HITS - 1],
                *ids[TOP_HITS + 1:]]
    assert compare(snap("o", ranked=ids), snap("n", ranked=shuffled)).all() == []
    moved_far = [ids[19], *ids[:19]]
    assert compare(snap("o", ranked=ids), snap("n", ranked=moved_far[:15])).queries
