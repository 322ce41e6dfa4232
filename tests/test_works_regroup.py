"""Regrouping work documents (the resolution pass's joins and splits), pure.

``documents.regroup_works`` rebuilds documents so that each group of work_ids is one,
and ``resolution.plan`` finds which documents need it; both must not depend on order.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scholarindex.core.items import WorkItem
from scholarindex.core.resolution import Atom, resolve
from scholarindex.indexing.changes import apply_change, change_from_item, enrichment_change
from scholarindex.indexing.documents import (
    doc_work_ids,
    merge_works,
    regroup_works,
    resolution_link,
)
from scholarindex.indexing.resolution import atoms_of, plan
from scholarindex.indexing.resolution import why_joined as why
from scholarindex.indexing.shapes import WorkDoc, work_of

T1, T2 = "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"


def listing(wid: str, title: str, researcher: str, **fields: Any) -> dict[str, Any]:
    return asdict(WorkItem(work_id=wid, title=title, researcher_id=researcher,
                           researcher_name=researcher.title(), **{"year": 2020, **fields}))


def doc(*items: dict[str, Any], enriched: str | None = None) -> WorkDoc:
    result: Mapping[str, Any] | None = None
    for item in items:
        result = apply_change(result, change_from_item(item, T1))
    if enriched:
        result = apply_change(result, enrichment_change(
            items[0]["work_id"], status="done", at=T2,
            arxiv={"id": enriched, "title": items[0]["title"], "authors": ["Ann Author"]}))
    assert result is not None
    return work_of(result)


A = listing("aaaa", "Fast joins for skewed data", "ann")
B = listing("bbbb", "Fast joins for skewd data", "bob")  # the same paper, a typo
C = listing("cccc", "Slow joins for skewed data", "cid")  # another paper


def test_a_join_is_one_document_under_the_smallest_id_with_why() -> None:
    why = resolution_link("bbbb", "aaaa", "match", 0.93456, ["title 0.93", "year"])
    [joined] = regroup_works([doc(A), doc(B)], [["aaaa", "bbbb"]], [why])
    assert joined["work_id"] == "aaaa"
    assert doc_work_ids(joined) == ["aaaa", "bbbb"]
    assert {e["researcher_id"] for e in joined["listings"]} == {"ann", "bob"}
    assert joined["resolution"] == [{"work_id": "bbbb", "joined_to": "aaaa", "by": "match",
                                     "score": 0.9346, "evidence": ["title 0.93", "year"]}]


def test_a_split_gives_each_group_its_listings_and_keeps_the_enrichment_with_its_own_id() -> None:
    wrong = merge_works([doc(A, enriched="2001.00001"), doc(C)],
                        [resolution_link("cccc", "aaaa", "match", 0.8)])
    parts = {d["work_id"]: d for d in regroup_works([wrong], [["aaaa"], ["cccc"]])}
    assert set(parts) == {"aaaa", "cccc"}
    assert [e["researcher_id"] for e in parts["cccc"]["listings"]] == ["cid"]
    assert parts["aaaa"]["arxiv_id"] == "2001.00001"
    assert parts["cccc"]["arxiv_id"] is None
    enrichment = parts["cccc"]["enrichment"]  # looked up again, alone
    assert enrichment is not None and enrichment["status"] == "pending"
    assert "resolution" not in parts["aaaa"] and "resolution" not in parts["cccc"]


def test_a_split_off_listing_merged_again_later_keeps_its_document() -> None:
    parts = {d["work_id"]: d for d in regroup_works([merge_works([doc(A), doc(C)])],
                                                     [["aaaa"], ["cccc"]])}
    again = apply_change(parts["cccc"], change_from_item(C, T2))
    assert again["work_id"] == "cccc" and len(again["listings"]) == 1


def test_ids_no_group_names_stay_with_their_document() -> None:
    merged = merge_works([doc(A), doc(B)])
    [same] = regroup_works([merged], [["aaaa"]])
    assert doc_work_ids(same) == ["aaaa", "bbbb"]


@settings(max_examples=60, deadline=None)
@given(st.permutations([doc(A), doc(B), doc(C)]), st.booleans())
def test_regrouping_does_not_depend_on_order(docs: list[WorkDoc], flip: bool) -> None:
    groups = [["aaaa", "bbbb"], ["cccc"]]
    if flip:
        groups = [list(reversed(g)) for g in reversed(groups)]
    reference = regroup_works([doc(A), doc(B), doc(C)], [["aaaa", "bbbb"], ["cccc"]])
    assert regroup_works(docs, groups) == reference
    # Regrouping the result again changes nothing (idempotent).
    assert regroup_works(reference, groups) == reference


def test_atoms_hold_each_work_ids_listings() -> None:
    atoms = {a.work_id: a for a in atoms_of([merge_works([doc(A), doc(B)])])}
    assert set(atoms) == {"aaaa", "bbbb"}
    assert atoms["bbbb"].titles == ("Fast joins for skewd data",)
    assert atoms["bbbb"].owners == ("Bob",)
    assert atoms["aaaa"].years == (2020,)


def test_an_atom_without_a_printed_year_takes_the_year_its_citation_prints() -> None:
    cited = listing("dddd", "Lin, K.-I.(1995). FastMap: A Fast Algorithm", "dan", year=None)
    dated = listing("eeee", "Lin, K.-I.(1995). FastMap: A Fast Algorithm", "eve", year=1996)
    bare = listing("ffff", "FastMap: A Fast Algorithm. 1995", "fay", year=None)
    atoms = {a.work_id: a for a in atoms_of([doc(cited), doc(dated), doc(bare)])}
    assert atoms["dddd"].years == (1995,)
    assert atoms["eeee"].years == (1996,)  # a listing's own year comes first
    assert atoms["ffff"].years == ()  # a year not in brackets is no citation's


def test_plan_leaves_settled_documents_alone_and_finds_joins_and_splits() -> None:
    held = {"aaaa": {"aaaa"}, "bbbb": {"bbbb"}, "cccc": {"cccc", "dddd"}, "eeee": {"eeee"}}
    clusters = [["aaaa", "bbbb"], ["cccc"], ["dddd"], ["eeee"]]
    changes = plan(held, clusters)
    assert changes == [({"aaaa": {"aaaa"}, "bbbb": {"bbbb"}}, [["aaaa", "bbbb"]]),
                       ({"cccc": {"cccc", "dddd"}}, [["cccc"], ["dddd"]])]
    for order in itertools.permutations(clusters):
        assert plan(held, order) == changes
    assert plan({"aaaa": {"aaaa", "bbbb"}}, [["aaaa", "bbbb"]]) == []


def test_ids_joined_as_one_arxiv_paper_stay_joined_and_say_so() -> None:
    """A preprint title and arXiv's later one share no rare words; the verified id keeps
    them one work (the pass must not split what the identity join made)."""
    first = Atom("aaaa", ("Elastic Expert Placement for Sparse Training",),
                 owners=("Lena Hofmann",), years=(2024,), strong_keys=("arxiv:2405.01234",))
    later = Atom("bbbb", ("ElasticMoE: Adaptive Routing at Scale",), owners=("Ada Arxivson",),
                 years=(2024,), strong_keys=("arxiv:2405.01234",))
    prefaces = [Atom("cccc", ("Preface",), owners=("Eve Holt",)),
                Atom("dddd", ("Preface",), owners=("Finn Shaw",))]
    resolution = resolve([first, later, *prefaces], must_link=[("cccc", "dddd")])
    assert resolution.clusters == [("aaaa", "bbbb"), ("cccc", "dddd")]
    assert why("bbbb", ["aaaa", "bbbb"], resolution)["by"] == "identity"
    assert why("dddd", ["cccc", "dddd"], resolution)["by"] == "manual"
