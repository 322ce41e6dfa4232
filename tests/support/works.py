"""Listings of a few papers for the work resolution tests (no tests here).

One paper printed three ways (as published, with a typo, cut short with the authors
printed), a different paper sharing most of its words, and two people's "Preface".
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from scholarindex.core.items import WorkItem
from scholarindex.core.resolution.listing import listing_work_id
from scholarindex.core.retry import RetryPolicy

T1, T2, T3 = "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"
POLICY = RetryPolicy(attempts=4, initial_wait=0.05, max_wait=0.3, jitter=0.05)


def listing(title: str, researcher: str, year: int | None = 2019, venue: str = "VLDB",
            authors: tuple[str, ...] = (), **fields: Any) -> dict[str, Any]:
    rid = researcher.lower().replace(" ", "-")
    return asdict(WorkItem(work_id=listing_work_id(title, rid, year, venue), title=title,
                           researcher_id=rid, researcher_name=researcher, year=year,
                           venue=venue, authors=list(authors), **fields))


PAPER = "Efficient Processing of Window Queries over Streaming Sensor Data"
TYPO = listing("Efficient Procesing of Window Queries over Streaming Sensor Data", "Bob Stone",
               authors=("Ann Lee", "Bob Stone"))
CUT = listing("Efficient Processing of Window Queries over Streaming Sensor", "Cid Moor",
              authors=("Ann Lee", "Bob Stone", "Cid Moor"))
ORIGINAL = listing(PAPER, "Ann Lee")
OTHER = listing("Efficient Processing of Range Queries over Spatial Sensor Networks", "Dan Ray")
PREFACE_1 = listing("Preface", "Eve Holt", year=2001, venue="SIGMOD Record")
PREFACE_2 = listing("Preface", "Finn Shaw", year=2001, venue="SIGMOD Record")
LISTINGS = [ORIGINAL, TYPO, CUT, OTHER, PREFACE_1, PREFACE_2]


# --- profile pages with titles printed otherwise --------------------------------------

SEED = Path(__file__).resolve().parents[2] / "fixtures" / "seeds" / "bzpeer_chao_jin.txt"
RELIBRA = ("ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement "
           "Learning")


def profile_page(path: Path, name: str, retitle: dict[str, str]) -> str:
    """Chao Jin's seed page as another person's, with some titles printed otherwise."""
    text = SEED.read_text(encoding="utf-8").replace("Chao Jin", name)
    for old, new in retitle.items():
        text = text.replace(f"\n{old}\n", f"\n{new}\n")
    path.write_text(text, encoding="utf-8")
    return path.as_uri()
