"""The noise table: DBLP-ACM printed as other sites print it, a row per kind of damage.

    python -m bench.er.noise_table [--limit N] [--row LABEL ...] [--json F]

Each row rewrites DBLP-ACM's second table with one kind of damage (``bench.er.noise``),
or with several at once in the order given (a real site prints them together: a typo
in a title cut short), and prints ``bench.er.evaluate``'s exact-title baseline and
resolution, P / R / F1, as a Markdown table. The whole table takes a few minutes;
``docs/resolution.md`` shows it. Development data only: the rules may be fitted here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.er.data import DataMissing, load
from bench.er.evaluate import evaluate
from bench.er.noise import NOISES, with_noise

SCHOLAR_PRINT = ("scholar-names", "mojibake", "no-year", "cut-titles", "glued-authors",
                 "glued-venue")
ROWS: dict[str, tuple[str, ...]] = {
    "nothing changed": (),
    **{noise: (noise,) for noise in NOISES},
    "duplicates": ("duplicates",),
    "the six of Scholar's print": SCHOLAR_PRINT,
    "as Scholar lists it": ("scholar-names", "no-year", "year-off", "duplicates"),
    "all nine at once": (*SCHOLAR_PRINT[:3], "year-off", *SCHOLAR_PRINT[3:], "typos",
                         "duplicates"),
    "typos, cut-titles": ("typos", "cut-titles"),
    "no-year, cut-titles": ("no-year", "cut-titles"),
    "no-year, duplicates": ("no-year", "duplicates"),
    "typos, year-off": ("typos", "year-off"),
}


def _figures(score: dict[str, Any]) -> str:
    return f"{score['precision']:.4f} / {score['recall']:.4f} / {score['f1']:.4f}"


def measure(rows: dict[str, tuple[str, ...]], limit: int | None = None) -> list[dict[str, Any]]:
    """Each row's data set name, noises and ``evaluate`` figures (baseline and resolution)."""
    clean = load("dblp-acm", limit)
    out = []
    for label, noises in rows.items():
        started = time.perf_counter()
        data = clean
        for noise in noises:
            data = with_noise(data, noise)
        result = evaluate(data)
        out.append({"row": label, "noises": list(noises), "exact_title": result["exact_title"],
                    "resolution": result["full"],
                    "records_lost_by_parser": result["records_lost_by_parser"]})
        print(f"[noise table] {label}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return out


def table(measured: list[dict[str, Any]]) -> str:
    lines = ["| DBLP-ACM, second table printed with | exact title | resolution "
             "(true of predicted pairs) | records lost by the parser |", "|---|---|---|---|"]
    for row in measured:
        full = row["resolution"]
        lines.append(f"| {row['row']} | {_figures(row['exact_title'])} | {_figures(full)} "
                     f"({full['true_positives']} of {full['predicted']}) | "
                     f"{row['records_lost_by_parser']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.er.noise_table",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N records of each table")
    parser.add_argument("--row", choices=ROWS, action="append", default=None,
                        help="only this row (repeatable; default: every row)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    rows = {label: ROWS[label] for label in args.row} if args.row else ROWS
    try:
        measured = measure(rows, args.limit)
    except DataMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    print(table(measured))
    if args.json:
        args.json.write_text(json.dumps(measured, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
