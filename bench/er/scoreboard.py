"""One table for every development set: what a change to matching or parsing did, in minutes.

    python -m bench.er.scoreboard                      # every set, full size, offline
    python -m bench.er.scoreboard --data cora,bib-cytology --limit 300 --json board.json
    python -m bench.er.evaluate --all                  # the same

Offline, as ``bench.er.evaluate`` (every page rendered and parsed by the crawler's
parser, the index's own merge, ``resolve``; no network, no index); ``make
bench-dedupe`` prints the same table from a real crawl into OpenSearch. A row:

* ``records``: the data set's records (with ``--limit``, of each table), and its gold pairs;
* ``P`` / ``R`` / ``F1``: resolution, pairwise over all records (two tables: across them);
* ``exact F1``: the baseline, the parsed listings grouped by normalised title alone;
* ``placed``: records put on a profile page (a record without a title is not,
  ``bench.er.site``); ``read``: placed records the parser read back; ``lost``: the
  rest, whose pairs no matcher can find; ``read/placed``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.er.data import DATA_SETS, DataMissing, available, load
from bench.er.evaluate import evaluate


@dataclass(frozen=True)
class Row:
    data: str
    records: int
    gold: int
    precision: float
    recall: float
    f1: float
    exact_f1: float
    placed: int
    read: int
    seconds: float

    @property
    def lost(self) -> int:
        return self.placed - self.read

    @property
    def read_share(self) -> float:
        return self.read / self.placed if self.placed else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "lost": self.lost, "read_share": round(self.read_share, 4)}


def row(result: Mapping[str, Any], score: str, seconds: float) -> Row:
    """A row from an evaluator's result (``score="full"``) or bench.dedupe's (``"index"``):
    both name the counts alike."""
    s = result[score]
    return Row(result["data"], result["records"], result["gold_pairs"], s["precision"],
               s["recall"], s["f1"], result["exact_title"]["f1"], result["listings_shown"],
               result["records_mapped"], round(seconds, 1))


HEADER = ("| set | records (gold pairs) | P | R | F1 | exact-title F1 | placed | read | lost "
          "| read/placed | s |")


def table(rows: Iterable[Row]) -> str:
    """The rows as one Markdown table."""
    lines = [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    for r in rows:
        lines.append(f"| {r.data} | {r.records:,} ({r.gold:,}) | {r.precision:.4f} | "
                     f"{r.recall:.4f} | {r.f1:.4f} | {r.exact_f1:.4f} | {r.placed:,} | "
                     f"{r.read:,} | {r.lost:,} | {r.read_share:.4f} | {r.seconds:g} |")
    return "\n".join(lines)


def scoreboard(names: Sequence[str], limit: int | None = None) -> list[tuple[Row, dict]]:
    """Each set evaluated offline with the full resolver: (row, the evaluator's result)."""
    out = []
    for name in names:
        started = time.perf_counter()
        # Blocking's own figures cost a second pass over the candidates: not on the board.
        result = evaluate(load(name, limit), "full", blocking_figures=False)
        out.append((row(result, "full", time.perf_counter() - started), result))
    return out


def parse_names(text: str, parser: argparse.ArgumentParser) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if unknown := [n for n in names if n not in DATA_SETS]:
        parser.error(f"unknown data set(s) {', '.join(unknown)}; of {', '.join(DATA_SETS)}")
    return names


def missing_data(names: Sequence[str]) -> str | None:
    """The loader's message for the first set whose files are absent, else None."""
    for name in names:
        if not available(name):
            try:
                load(name)
            except DataMissing as exc:
                return str(exc)
    return None


def report(names: Sequence[str], limit: int | None, json_path: Path | None) -> int:
    """Print the board of ``names`` (and write it to ``json_path``); 2 when data is missing."""
    if (message := missing_data(names)) is not None:
        print(message, file=sys.stderr)
        return 2
    started = time.perf_counter()
    board = scoreboard(names, limit)
    seconds = time.perf_counter() - started
    print(table(r for r, _ in board))
    print(f"offline, {'full sets' if limit is None else f'--limit {limit}'}; {seconds:.0f} s")
    if json_path:
        json_path.write_text(json.dumps({
            "limit": limit, "seconds": round(seconds, 1),
            "rows": [r.as_dict() for r, _ in board],
            "results": {r.data: result for r, result in board}}, indent=2) + "\n", "utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.er.scoreboard",
        description="Every development set offline, one table: records, pairwise P/R/F1 of "
                    "resolution, the exact-title baseline's F1, records placed on pages and "
                    "read back by the parser.")
    parser.add_argument("--data", default=",".join(DATA_SETS),
                        help=f"comma-separated, of {', '.join(DATA_SETS)} (default: all)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N records of each table")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    return report(parse_names(args.data, parser), args.limit, args.json)


if __name__ == "__main__":
    sys.exit(main())
