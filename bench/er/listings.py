"""Which record each parsed listing is: the listing map read against what the parser returned.

A page's records are known in page order (``bench.er.site``). The parser returns
the listings it could read, in page order; when it cannot read one (a card
without a date today) it loses that listing and folds its text into its
neighbour's, so positions shift. So listings are matched to records by walking
both in order: a parsed listing is the next record whose title it prints
(compared with whitespace collapsed) and whose year it read, or failing a year,
the next with that title (one profile may list a title several times, and a
record whose card the parser lost must not take the place of the next one with
the same title); the records skipped on the way are *lost*,
and a parsed listing that matches no later record is *unmapped*.

What the index keeps of a listing is its profile and its ``work_id`` (one entry
per pair: a profile listing one title twice holds one entry), so the map used to
score index documents is ``(researcher_url, work_id) -> record keys``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Matched:
    """The listings of a set of pages matched to their records."""

    by_listing: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    records_shown: int = 0
    listings_parsed: int = 0
    lost: list[str] = field(default_factory=list)  # record keys no parsed listing stands for
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # (url, title) of no record

    @property
    def mapped(self) -> int:
        return sum(len(keys) for keys in self.by_listing.values())

    def record_keys(self, url: str, work_id: str) -> list[str]:
        return self.by_listing.get((url, work_id), [])

    def add_page(self, url: str, records: Sequence[tuple[str, str, int | None]],
                 listings: Sequence[Mapping[str, Any]]) -> list[str | None]:
        """``records``: (key, printed title, year) in page order; ``listings``: the parsed work
        items of the page (mappings with ``title`` and ``work_id``), in page order.

        Returns each listing's record key (None: unmapped)."""
        self.records_shown += len(records)
        self.listings_parsed += len(listings)
        at = 0
        keys: list[str | None] = []
        for listing in listings:
            title, year = _same(listing["title"]), listing.get("year")
            same = [k for k in range(at, len(records)) if _same(records[k][1]) == title]
            hit = next((k for k in same if records[k][2] == year), same[0] if same else None)
            if hit is None:
                self.unmapped.append((url, listing["title"]))
                keys.append(None)
                continue
            self.lost += [key for key, _, _ in records[at:hit]]
            self.by_listing.setdefault((url, listing["work_id"]), []).append(records[hit][0])
            keys.append(records[hit][0])
            at = hit + 1
        self.lost += [key for key, _, _ in records[at:]]
        return keys


def _same(title: str) -> str:
    return " ".join(title.split())
