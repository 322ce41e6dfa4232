"""Real records as paper cards: how many come back, and is every miss reported?

    python -m bench.scholar_cards [--records N] [--markup spans]

Reads the Google Scholar table of the DBLP-Scholar benchmark (``Scholar.csv`` in
``ER_DATA_DIR``, default ``../shared/data/er`` beside the repository, under
``dblp-scholar/``), more than half of whose records have no year, and shows its
records as paper-card pages (``fixtures.cards``): 10 to 30 cards a page in file
order; a record with a year gets the date ``Jan 1, <year>`` (the data gives a
year only), one without has no date and, cycling, a bare category tag or no meta
line at all; title and author line as the data has them, no abstract (it has
none). Each page is parsed with ``parse_profile`` and its titles compared with the
records'. Prints: pages, cards (undated; with no meta line), titles read back,
pages read exactly, pages reported (ambiguous or truncated) and pages read wrong
without a report.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from fixtures.cards import TODAY, Card, card_page, rendered

ROOT = Path(__file__).resolve().parent.parent
_TAGS = ("AI", None, "LG", None, None, "DB", None)  # undated cards' tags, cycling


def scholar_csv() -> Path:
    base = Path(os.environ.get("ER_DATA_DIR") or ROOT.parent / "shared" / "data" / "er")
    return base / "dblp-scholar" / "Scholar.csv"


def card_pages(path: Path, records: int | None = None) -> Iterator[list[Card]]:
    """The records of ``path`` as pages of cards (see the module doc)."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))[:records]
    at = 0
    for number in range(len(rows)):
        if at >= len(rows):
            return
        size = 10 + number % 21
        cards = []
        for n, row in enumerate(rows[at:at + size]):
            title, authors = " ".join(row["title"].split()), " ".join(row["authors"].split())
            if not title or not authors:  # nothing a card could show: not a listing
                continue
            year = row["year"].strip()
            cards.append(Card(title, authors, date=f"Jan 1, {year}" if year else None,
                              category=None if year else _TAGS[(number + n) % len(_TAGS)]))
        at += size
        yield cards


def measure(path: Path, records: int | None = None, markup: str = "spans") -> Counter:
    from crawler.extract import parse_profile

    counts: Counter = Counter()
    for number, cards in enumerate(card_pages(path, records)):
        body, content_type = rendered(card_page(cards), markup)
        page = parse_profile(f"https://papercards.example/p{number}", body, content_type, TODAY)
        want, got = [c.title for c in cards], [w.title for w in page.works]
        counts["pages"] += 1
        counts["cards"] += len(cards)
        counts["undated"] += sum(not c.date for c in cards)
        counts["undated_no_meta_line"] += sum(not c.meta_pieces for c in cards)
        counts["titles_read_back"] += len(set(want) & set(got))
        counts["pages_exact"] += want == got
        reported = page.ambiguous or page.truncated
        counts["pages_reported"] += reported
        counts["pages_wrong_unreported"] += want != got and not reported
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=None, help="the first N records only")
    parser.add_argument("--markup", default="spans", choices=("txt", "lines", "spans", "table",
                                                              "jsonld"))
    opts = parser.parse_args(argv)
    path = scholar_csv()
    if not path.exists():
        print(f"{path} not found: set ER_DATA_DIR to the folder holding dblp-scholar/")
        return 2
    started = time.perf_counter()
    counts = measure(path, opts.records, opts.markup)
    print(f"{path} as paper cards ({opts.markup}), {time.perf_counter() - started:.1f} s:")
    for key, value in counts.items():
        share = f" ({value / counts['cards']:.2%} of cards)" if key == "titles_read_back" else ""
        print(f"  {key}: {value}{share}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
