"""The writer's faster derivations give what the ones they replaced gave.

Each ``_before`` function below is the code as it was before the change, kept only to
compare: the same inputs must give equal values (and the same JSON bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from scholarindex.core.names import nicest
from scholarindex.indexing import documents
from scholarindex.indexing.documents import LISTING_FIELDS, _clone, merged_authors


def merged_authors_before(entries: Iterable[Mapping[str, Any]],
                          arxiv_authors: Iterable[str] = ()) -> list[str]:
    spellings: dict[str, set[str]] = {}
    bylines: list[list[str]] = []

    def byline_of(names: Iterable[Any]) -> list[str]:
        keys: list[str] = []
        for name in names:
            key = documents._author_key(name) if isinstance(name, str) else ""
            if key:
                spellings.setdefault(key, set()).add(name)
                if key not in keys:
                    keys.append(key)
        return keys

    anchors = byline_of(arxiv_authors)
    if anchors:
        bylines.append(anchors)
    for entry in entries:
        bylines.append(byline_of(entry.get("authors") or ()))
        byline_of([entry.get("researcher_name")])
    alias = documents._aliases(spellings, anchors)
    for key, target in alias.items():
        spellings[target] |= spellings.pop(key)
    bylines = [list(dict.fromkeys(alias.get(k, k) for k in keys)) for keys in bylines]
    lead = max(bylines, key=lambda keys: (len(keys), keys), default=[])
    order = lead + sorted(k for k in spellings if k not in lead)
    joined = set(alias.values())
    return [documents._fullest(spellings[k]) if k in joined else nicest(frozenset(spellings[k]))
            for k in order]


def jsonable_before(value: Any) -> Any:
    if isinstance(value, datetime):
        return documents.timestamp(value)
    if isinstance(value, list | tuple):
        return [jsonable_before(v) for v in value]
    return _clone(value)


# Names that fold together, initials that name one or two people, blanks, "et al.",
# padding, and values that are not names at all.
_names = st.sampled_from([
    "Chao Jin", "CHAO JIN", "Cháo Jin", "chao  jin", " C. Jin", "C. Jin", "Cheng Jin",
    "Yinmin Zhong", "Y. Zhong", "yinmin zhong", "Xin Jin", "X Jin", "Ann Lee", "A. Lee",
    "Lee, Ann", "José Peñalver", "JOSE PENALVER", "et al.", "", "  ", "O'Neil", "ONeil",
])
_junk = st.sampled_from([None, 3, 2.5, True, ["Chao Jin"]])
_entries = st.lists(st.fixed_dictionaries({
    "authors": st.none() | st.lists(_names | _junk, max_size=6),
    "researcher_name": st.none() | _names,
}), max_size=5)


@settings(max_examples=500, deadline=None)
@given(_entries, st.lists(_names, max_size=6))
def test_authors_are_merged_as_before(entries: list[dict[str, Any]],
                                      arxiv: list[str]) -> None:
    for anchors in ([], arxiv):
        now = merged_authors(entries, anchors)
        assert now == merged_authors_before(entries, anchors)
        assert orjson.dumps(now) == orjson.dumps(merged_authors_before(entries, anchors))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
    | st.datetimes(timezones=st.just(UTC)),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_arxiv_values_are_converted_as_before(value: Any) -> None:
    assert repr(documents._jsonable(value)) == repr(jsonable_before(value))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*LISTING_FIELDS, "other"]), _json, max_size=8))
def test_listing_fields_are_copied_as_before(item: dict[str, Any]) -> None:
    copied = documents._copy_fields(item, LISTING_FIELDS)
    assert repr(copied) == repr({name: _clone(item.get(name)) for name in LISTING_FIELDS})
    for name, value in copied.items():  # a copy: nothing mutable is shared with the item
        assert not isinstance(value, dict | list) or value is not item.get(name)
