"""The typed document shapes and the index mappings name the same fields."""

from __future__ import annotations

import json

import pytest

from scholarindex.indexing.indices import MAPPINGS_DIR
from scholarindex.indexing.shapes import (
    Enrichment,
    ListingEntry,
    ResearcherDoc,
    TombstoneDoc,
    UnlistRecord,
    WorkDoc,
    fields_of,
)


def _properties(index: str, *path: str) -> set[str]:
    mapping = json.loads((MAPPINGS_DIR / f"{index}.json").read_text())["mappings"]
    for name in path:
        mapping = mapping["properties"][name]
    return set(mapping["properties"])


@pytest.mark.parametrize(("shape", "index", "path"), [
    (WorkDoc, "works", ()),
    (ListingEntry, "works", ("listings",)),
    (Enrichment, "works", ("enrichment",)),
    (ResearcherDoc, "researchers", ()),
    (TombstoneDoc, "tombstones", ()),
    (UnlistRecord, "tombstones", ("unlisted",)),
])
def test_a_shape_names_its_mappings_fields(shape: type, index: str, path: tuple[str, ...]) -> None:
    assert set(fields_of(shape)) == _properties(index, *path)
