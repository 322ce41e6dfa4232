"""One table for every development set: what a change to matching or parsing did, in minutes.

    python -m bench.er.scoreboard                      # every set, full size, offline
    python -m bench.er.scoreboard --data cora,bib-cytology --limit 300 --json board.json
    python -m bench.er.evaluate --all                  # the same
    python -m bench.er.scoreboard --resolver fs        # probabilistic linkage: a table a threshold
    python -m bench.er.scoreboard --resolver hybrid --threshold 0.99

Offline, as ``bench.er.evaluate`` (every page rendered and parsed by the crawler's
parser, the index's own merge, ``resolve``; no network, no index); ``make
bench-dedupe`` prints the same table from a real crawl into OpenSearch. A row:

* ``records``: the data set's records (with ``--limit``, of each table), and its gold pairs;
* ``P`` / ``R`` / ``F1``: resolution, pairwise over all records (two tables: across them);
  ``--resolver fs`` or ``hybrid`` (``bench.er.evaluate``): one table per match-probability
  threshold, the model fitted once a set; ``s`` then counts the fit and that threshold's
  clustering once, beside the parse;
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


def scoreboard(names: Sequence[str], limit: int | None = None, resolver: str = "full",
               thresholds: Sequence[float] | None = None) -> list[tuple[Row, dict]]:
    """Each set evaluated offline with ``resolver`` (full, fs or hybrid): (row, the
    evaluator's result); for fs and hybrid the row of the first threshold."""
    out = []
    for name in names:
        started = time.perf_counter()
        # Blocking's own figures cost a second pass over the candidates: not on the board.
        result = evaluate(load(name, limit), resolver, blocking_figures=False,
                          thresholds=thresholds)
        out.append((row(result, resolver, time.perf_counter() - started), result))
    return out


def threshold_rows(board: Sequence[tuple[Row, dict]], resolver: str) -> dict[str, list[Row]]:
    """fs and hybrid: the board's rows at each threshold (seconds: the parse, the fit and
    that threshold's clustering)."""
    tables: dict[str, list[Row]] = {}
    for first, result in board:
        scores = result[f"{resolver}_by_threshold"]
        parse = first.seconds - next(iter(scores.values()))["seconds"]
        for threshold, score in scores.items():
            tables.setdefault(threshold, []).append(
                row({**result, resolver: score}, resolver, parse + score["seconds"]))
    return tables


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


def report(names: Sequence[str], limit: int | None, json_path: Path | None,
           resolver: str = "full", thresholds: Sequence[float] | None = None) -> int:
    """Print the board of ``names`` (and write it to ``json_path``); 2 when data is missing."""
    if (message := missing_data(names)) is not None:
        print(message, file=sys.stderr)
        return 2
    started = time.perf_counter()
    board = scoreboard(names, limit, resolver, thresholds)
    seconds = time.perf_counter() - started
    rows: dict[str, list[Row]] = {resolver: [r for r, _ in board]}
    if resolver != "full":
        rows = {f"{resolver}, match probability >= {t}": rs
                for t, rs in threshold_rows(board, resolver).items()}
    for title, these in rows.items():
        if resolver != "full":
            print(f"\n{title}")
        print(table(these))
    print(f"offline, {'full sets' if limit is None else f'--limit {limit}'}; {seconds:.0f} s")
    if json_path:
        json_path.write_text(json.dumps({
            "limit": limit, "seconds": round(seconds, 1), "resolver": resolver,
            "rows": {title: [r.as_dict() for r in these] for title, these in rows.items()}
            if resolver != "full" else [r.as_dict() for r, _ in board],
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
    parser.add_argument("--resolver", choices=("full", "fs", "hybrid"), default="full",
                        help="full: the rule (core.resolution.resolve); fs: probabilistic "
                             "linkage; hybrid: the rule with FS deciding what it leaves apart")
    parser.add_argument("--threshold", type=float, action="append", default=None,
                        help="fs and hybrid: a match probability (repeatable; default 0.9, "
                             "0.99 and 0.999)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    return report(parse_names(args.data, parser), args.limit, args.json, args.resolver,
                  args.threshold)


if __name__ == "__main__":
    sys.exit(main())
