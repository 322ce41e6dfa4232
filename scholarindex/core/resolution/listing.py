"""A listing's ``work_id``: where its work starts before resolution (``core.identity``).

Two rules salt the title's id with the listing's own evidence (profile, year,
venue), so that listings which the title alone would pool start apart:

* a **generic title** ("Preface", "Editor's Notes"): different people print one
  for different papers;
* a title **one profile lists more than once** with a different year or venue
  (``listing_work_ids``): the owner is telling us they are two works, typically a
  conference paper and its journal version under one title. The index keeps one
  listing per (profile, work_id), so under one id the two would collapse into one
  atom that resolution can never split. Salted, each is its own atom; the
  resolver (``decide``: one profile's two listings of one title are two works)
  decides by year which other listings join which. The same title twice with the
  same year and venue is one work listed twice: one id.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from scholarindex.core.identity import key_work_id, title_key, work_id
from scholarindex.core.resolution.generic import is_generic_title


def salted_work_id(title: str, researcher_id: str, year: int | None = None,
                   venue: str | None = None, ordinal: int = 1) -> str:
    """An id of the title that also holds the listing's profile, year and venue (and,
    from the second entry of a generic title with those on one page, its ordinal)."""
    parts = [title_key(title) or title.strip(), researcher_id, str(year or ""),
             title_key(venue or "")]
    key = "|".join(parts if ordinal == 1 else [*parts, f"#{ordinal}"])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def listing_work_id(title: str, researcher_id: str, year: int | None = None,
                    venue: str | None = None) -> str:
    """``work_id(title)``; for a generic title, an id that also holds the listing's
    profile, year and venue, so that different people's "Preface" start apart."""
    if not is_generic_title(title):
        return work_id(title)
    return salted_work_id(title, researcher_id, year, venue)


def _edition(listing: Mapping[str, Any]) -> tuple[str, str]:
    return str(listing.get("year") or ""), title_key(str(listing.get("venue") or ""))


def listing_work_ids(listings: Sequence[Mapping[str, Any]], researcher_id: str) -> list[str]:
    """The ``work_id`` of each of one profile's listings (mappings with ``title`` and
    optionally ``year``, ``venue``), in order: ``listing_work_id``, salted also when
    the profile lists the title more than once with different years or venues
    (module doc)."""
    # Each listing's title key and edition are worked out once: this runs for every
    # listing the crawl parses, and folding a title is most of its cost.
    keyed = [(title_key(listing["title"]) or listing["title"].strip(), _edition(listing))
             for listing in listings]
    editions: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for key, edition in keyed:
        editions[key].add(edition)
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    out = []
    for listing, (key, edition) in zip(listings, keyed, strict=True):
        title = listing["title"]
        if is_generic_title(title):
            seen[(key, *edition)] += 1
            out.append(salted_work_id(title, researcher_id, listing.get("year"),
                                      listing.get("venue"), seen[(key, *edition)]))
        elif len(editions[key]) > 1:
            out.append(salted_work_id(title, researcher_id, listing.get("year"),
                                      listing.get("venue")))
        else:  # listing_work_id of a title that is not generic: work_id(title)
            out.append(key_work_id(key))
    return out
