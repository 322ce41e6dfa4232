"""Work items to the index's work documents, and documents to resolution atoms.

``documents(items)`` folds the work items with the index's own pure merge
(``scholarindex.indexing.changes.change_from_item`` + ``fold_change``), so the documents are
the ones a crawl into an empty index would hold before any resolution: one per
``work_id``. The resolution pass's own ``scholarindex.indexing.resolution.atoms_of`` reads them as
atoms, so the evaluator and the index see the same evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scholarindex.indexing.changes import change_from_item, fold_change

SEEN_AT = "2026-11-22T00:00:00Z"  # one crawl: every listing seen at the same time


def documents(items: Iterable[Any]) -> dict[str, Mapping[str, Any]]:
    """The work documents of ``items`` (work items; anything else is skipped), by _id."""
    docs: dict[str, Mapping[str, Any]] = {}
    for item in items:
        kind = item.get("kind") if isinstance(item, Mapping) else getattr(item, "kind", None)
        if kind != "work":
            continue
        change = change_from_item(item, SEEN_AT)
        doc = fold_change(docs.get(change.doc_id), change)
        assert doc is not None  # a listing never deletes its document
        docs[change.doc_id] = doc
    return docs

