"""The arXiv metadata attached to a work: a plain, JSON-ready dict.

Its keys are the ``arxiv`` object of index_mappings/works.json, which the index
checks: ``id`` is the identifier without version ("2405.12345"), ``entry_id``
the versioned abstract URL arXiv gives. The work document's ``arxiv_id`` is
taken from ``id``.
"""

from __future__ import annotations

import re

import arxiv

_VERSION = re.compile(r"v(\d+)$")


def split_version(short_id: str) -> tuple[str, int | None]:
    """``"2405.12345v2"`` -> ``("2405.12345", 2)``; old-style ids work the same way."""
    match = _VERSION.search(short_id)
    if not match:
        return short_id, None
    return short_id[: match.start()], int(match.group(1))


def to_metadata(result: arxiv.Result) -> dict:
    """The fields a work gets from one arXiv entry; ``id`` has no version suffix."""
    arxiv_id, _ = split_version(result.get_short_id())
    return {
        "id": arxiv_id,
        "entry_id": result.entry_id,
        "title": " ".join(result.title.split()),
        "authors": [author.name for author in result.authors],
        "primary_category": result.primary_category or None,
        "categories": list(result.categories),
        "published": result.published.isoformat() if result.published else None,
        "updated": result.updated.isoformat() if result.updated else None,
        "pdf_url": result.pdf_url,
        "doi": result.doi or None,
        "journal_ref": result.journal_ref or None,
        "comment": result.comment or None,
        "summary": " ".join((result.summary or "").split()) or None,
    }
