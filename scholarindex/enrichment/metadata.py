"""The arXiv metadata attached to a work: a plain, JSON-ready dict.

Its keys are the ``arxiv`` object of index_mappings/works.json, which the index
checks: ``id`` is the identifier without version ("2405.12345"), ``entry_id``
the versioned abstract URL. The work document's ``arxiv_id`` is taken from ``id``.

Both sources build it through ``build_metadata``, so a paper reads the same from
the query API (``to_metadata``) and from the OAI-PMH mirror (``scholarindex.enrichment.oaipmh``):

* every text field has its whitespace collapsed to single spaces (arXiv keeps the
  submitter's line breaks in titles, comments, journal-refs and abstracts; the
  query API's Atom feed adds its own indentation); an empty field is None;
* ``doi``: the DOIs of the field, separated by one space (a field may hold several,
  separated by spaces, ``;`` or ``,``: ``scholarindex.core.identity.split_dois``);
* ``categories`` each once, in order, the primary first; ``primary_category`` is the
  first when not given;
* ``entry_id`` and ``pdf_url`` are built from the id and the latest version
  (``http://arxiv.org/abs/<id>v<n>``, ``https://arxiv.org/pdf/<id>v<n>``), as the
  feed's own links are, whatever scheme a feed uses;
* ``published`` and ``updated``: the first and the latest version's submission time,
  ISO 8601 in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

import arxiv

from scholarindex.core.identity import split_dois

_VERSION = re.compile(r"v(\d+)$")


def split_version(short_id: str) -> tuple[str, int | None]:
    """``"2405.12345v2"`` -> ``("2405.12345", 2)``; old-style ids work the same way."""
    match = _VERSION.search(short_id)
    if not match:
        return short_id, None
    return short_id[: match.start()], int(match.group(1))


def clean_text(value: str | None) -> str | None:
    """Whitespace (line breaks, indentation) collapsed to single spaces; None when empty."""
    cleaned = " ".join((value or "").split())
    return cleaned or None


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


def build_metadata(*, arxiv_id: str, version: int | None, title: str | None,
                   authors: Iterable[str], categories: Iterable[str],
                   primary_category: str | None = None, published: datetime | None,
                   updated: datetime | None, doi: str | None, journal_ref: str | None,
                   comment: str | None, summary: str | None) -> dict:
    """The metadata dict from one paper's fields as a source gives them (rules above)."""
    listed = [c for c in (clean_text(c) for c in categories) if c]
    primary = clean_text(primary_category) or (listed[0] if listed else None)
    ordered = list(dict.fromkeys([primary, *listed] if primary else listed))
    suffix = f"v{version}" if version else ""
    return {
        "id": arxiv_id,
        "entry_id": f"http://arxiv.org/abs/{arxiv_id}{suffix}",
        "title": clean_text(title) or "",
        "authors": [a for a in (clean_text(a) for a in authors) if a],
        "primary_category": primary,
        "categories": ordered,
        "published": _iso(published),
        "updated": _iso(updated or published),
        "pdf_url": f"https://arxiv.org/pdf/{arxiv_id}{suffix}",
        "doi": " ".join(split_dois(doi)) or None,
        "journal_ref": clean_text(journal_ref),
        "comment": clean_text(comment),
        "summary": clean_text(summary),
    }


def to_metadata(result: arxiv.Result) -> dict:
    """The fields a work gets from one query-API entry; ``id`` has no version suffix."""
    arxiv_id, version = split_version(result.get_short_id())
    return build_metadata(
        arxiv_id=arxiv_id, version=version, title=result.title,
        authors=[author.name for author in result.authors],
        categories=result.categories, primary_category=result.primary_category,
        published=result.published, updated=result.updated, doi=result.doi,
        journal_ref=result.journal_ref, comment=result.comment, summary=result.summary)
