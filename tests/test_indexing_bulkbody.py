"""indexing.bulkbody: bulk request bodies built as bytes, against opensearch-py's helper.

The writer used ``helpers.streaming_bulk``; its requests must not change: the same
cuts by count and bytes, and the same bytes in each body.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from opensearchpy.helpers.actions import _chunk_actions, expand_action

from scholarindex.indexing.bulkbody import BulkAction, requests
from scholarindex.indexing.client import _OrjsonSerializer

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20)
_seq = st.tuples(st.integers(0, 10**6), st.integers(1, 5))


@st.composite
def _actions(draw: Any) -> BulkAction:
    op = draw(st.sampled_from(["create", "index", "delete"]))
    seq = draw(_seq) if op != "create" else None
    source = None if op == "delete" else draw(st.dictionaries(_text, _json, max_size=6))
    return BulkAction(op, draw(st.sampled_from(["works-v1", "tombstones"])), draw(_text),
                      source, seq)


def _helper_form(action: BulkAction) -> dict[str, Any]:
    """The action as the writer gave it to ``streaming_bulk``."""
    form: dict[str, Any] = {"_op_type": action.op, "_index": action.index, "_id": action.doc_id}
    if action.source is not None:
        form["_source"] = action.source
    if action.seq is not None:
        form["if_seq_no"], form["if_primary_term"] = action.seq
    return form


@settings(max_examples=200, deadline=None)
@given(st.lists(_actions(), max_size=25), st.integers(1, 8), st.integers(1, 2000))
def test_requests_are_the_bulk_helpers_requests_byte_for_byte(
        actions: list[BulkAction], max_docs: int, max_bytes: int) -> None:
    ours = list(requests(enumerate(actions), max_docs, max_bytes))
    theirs = list(_chunk_actions(map(expand_action, map(_helper_form, actions)),
                                 max_docs, max_bytes, _OrjsonSerializer()))
    assert [body for _, body in ours] == [
        ("\n".join(lines) + "\n").encode() for _, lines in theirs]
    assert [len(keys) for keys, _ in ours] == [len(data) for data, _ in theirs]
    assert [key for keys, _ in ours for key in keys] == list(range(len(actions)))


def test_an_action_larger_than_the_byte_limit_goes_alone() -> None:
    big = BulkAction("create", "works", "big", {"title": "x" * 500})
    small = [BulkAction("create", "works", f"s{i}", {"title": "y"}) for i in range(3)]
    cut = [keys for keys, _ in requests(
        [("a", small[0]), ("big", big), ("b", small[1]), ("c", small[2])], 10, 200)]
    assert cut == [["a"], ["big"], ["b", "c"]]


def test_a_conditional_write_carries_what_it_was_read_at() -> None:
    (_, body), = requests([(0, BulkAction("index", "works-v1", "w1", {"a": 1}, (7, 2))),
                           (1, BulkAction("delete", "works-v1", "w2", seq=(3, 1)))], 10, 10**6)
    lines = [orjson.loads(line) for line in body.splitlines()]
    assert lines == [
        {"index": {"_id": "w1", "_index": "works-v1", "if_seq_no": 7, "if_primary_term": 2}},
        {"a": 1},
        {"delete": {"_id": "w2", "_index": "works-v1", "if_seq_no": 3, "if_primary_term": 1}}]
