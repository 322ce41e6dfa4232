"""A listing's ``work_id``: where its work starts before resolution (``core.identity``)."""

from __future__ import annotations

import hashlib

from scholarindex.core.identity import title_key, work_id
from scholarindex.core.resolution.generic import is_generic_title


def listing_work_id(title: str, researcher_id: str, year: int | None = None,
                    venue: str | None = None) -> str:
    """``work_id(title)``; for a generic title, an id that also holds the listing's
    profile, year and venue, so that different people's "Preface" start apart."""
    if not is_generic_title(title):
        return work_id(title)
    key = "|".join((title_key(title) or title.strip(), researcher_id, str(year or ""),
                    title_key(venue or "")))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
