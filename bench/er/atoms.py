"""Work items to the index's work documents, and documents to resolution atoms.

``documents(items)`` folds the work items with the index's own pure merge
(``indexing.changes.change_from_item`` + ``fold_change``), so the documents are
the ones a crawl into an empty index would hold before any resolution: one per
``work_id``. ``atom_from_document`` reads one document's listings as an ``Atom``
(the evidence of one work_id; see ``core.resolution``).

``Atom`` is ``core.resolution.Atom`` when that package exists; until then the
same dataclass is defined here, field for field, so the evaluator runs either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from indexing.changes import change_from_item, fold_change

try:  # the resolution package, once it is on this branch
    from core.resolution import Atom
except ImportError:  # pragma: no cover - depends on which branch this runs on

    @dataclass(frozen=True)
    class Atom:  # type: ignore[no-redef]
        """The evidence of one work_id, aggregated over its listings."""

        work_id: str
        titles: tuple[str, ...]
        authors: tuple[str, ...]
        authors_truncated: bool
        owners: tuple[str, ...]
        years: tuple[int, ...]
        venues: tuple[str, ...]
        types: tuple[str, ...]
        strong_keys: tuple[str, ...] = ()

SEEN_AT = "2026-11-22T00:00:00Z"  # one crawl: every listing seen at the same time


def documents(items: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The work documents of ``items`` (work items; anything else is skipped), by _id."""
    docs: dict[str, dict[str, Any]] = {}
    for item in items:
        kind = item.get("kind") if isinstance(item, Mapping) else getattr(item, "kind", None)
        if kind != "work":
            continue
        change = change_from_item(item, SEEN_AT)
        doc = fold_change(docs.get(change.doc_id), change)
        assert doc is not None  # a listing never deletes its document
        docs[change.doc_id] = doc
    return docs


def atom_from_document(doc: Mapping[str, Any]) -> Atom:
    """The atom of a work document: its listings' printed evidence, each value once, in
    the document's listing order; ``strong_keys`` from a verified arXiv id or DOI."""
    listings = doc.get("listings") or []

    def values(name: str) -> tuple:
        return tuple(dict.fromkeys(v for entry in listings
                                   if (v := entry.get(name)) not in (None, "")))

    authors = tuple(dict.fromkeys(name for entry in listings
                                  for name in entry.get("authors") or ()))
    strong = []
    if doc.get("arxiv_id"):
        strong.append(f"arxiv:{doc['arxiv_id']}")
    if doi := (doc.get("arxiv") or {}).get("doi"):
        strong.append(f"doi:{str(doi).lower()}")
    return Atom(work_id=str(doc["work_id"]), titles=values("title"), authors=authors,
                authors_truncated=any(e.get("authors_truncated") for e in listings),
                owners=values("researcher_name"), years=tuple(sorted(values("year"))),
                venues=values("venue"), types=values("type"), strong_keys=tuple(strong))
