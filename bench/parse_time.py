"""Parse cost per page of this tree against a git revision, on the same pages.

    python -m bench.generate --profiles 1000 --out /tmp/site
    python -m bench.parse_time /tmp/site [--ref main] [--rounds 5]

Times ``parse_profile`` on every profile page of a generated site (CPU time of
the parsing process, best of a few passes, per layout) for ``ref``
(``git archive``d into a temporary directory) and for this working tree, each in a
child process of this interpreter, alternating ``rounds`` times so that load from
other processes falls on both alike. Prints each round and the median of the
rounds, microseconds per page by layout. Without ``--ref`` only this tree is timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

CRAWL_DATE = date(2026, 11, 22)  # bench.generate's pages assume it


def _time_here(site: Path, repeats: int) -> dict[str, dict[str, float]]:
    """CPU microseconds per page (best of ``repeats``), per layout: the process's own
    CPU time, which other processes on a shared machine disturb less than wall time."""
    from crawler.extract import parse_profile

    layouts: dict[str, list[tuple[str, bytes]]] = {}
    for path in sorted(site.rglob("*.html")):
        relative = path.relative_to(site)
        layouts.setdefault(relative.parts[0], []).append(
            ("http://127.0.0.1/" + relative.as_posix(), path.read_bytes()))
    figures: dict[str, dict[str, float]] = {}
    for layout, pages in layouts.items():
        best, listings = float("inf"), 0
        for _ in range(repeats):
            started = time.process_time()
            parsed = [parse_profile(url, body, "text/html; charset=utf-8", CRAWL_DATE)
                      for url, body in pages]
            best = min(best, time.process_time() - started)
            listings = sum(len(p.works) for p in parsed)
        figures[layout] = {"us_per_page": round(best / len(pages) * 1e6, 1),
                           "pages": len(pages),
                           "listings_per_page": round(listings / len(pages), 1)}
    return figures


def _time_in(tree: Path, site: Path, repeats: int) -> dict[str, dict[str, float]]:
    from bench.fixture_feeds import run_in

    return json.loads(run_in(tree, Path(__file__).resolve(),
                             [str(site), "--here", "--repeats", str(repeats)], timeout=1800))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a site written by bench.generate")
    parser.add_argument("--ref", default=None, help="git revision to time beside this tree")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="passes per round (best kept)")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    site = opts.site.resolve()
    if opts.here:
        print(json.dumps(_time_here(site, opts.repeats)))
        return 0
    # Imported here: the child that times ``ref`` runs this file against ref's modules.
    from bench.fixture_feeds import ROOT, _archive

    with tempfile.TemporaryDirectory(prefix="parse-time-") as tmp:
        trees = {"this tree": ROOT}
        if opts.ref:
            _archive(opts.ref, Path(tmp))
            trees = {opts.ref: Path(tmp), **trees}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for round_number in range(1, opts.rounds + 1):
            for name, tree in trees.items():
                figures = _time_in(tree, site, opts.repeats)
                runs[name].append(figures)
                print(f"round {round_number} {name}: " + ", ".join(
                    f"{layout} {f['us_per_page']} us/page ({f['pages']} pages, "
                    f"{f['listings_per_page']} listings/page)" for layout, f in figures.items()))
    for name, rounds in runs.items():
        medians = {layout: statistics.median(r[layout]["us_per_page"] for r in rounds)
                   for layout in rounds[0]}
        print(f"median of {opts.rounds} rounds, {name}: "
              + ", ".join(f"{layout} {us:.1f} us/page" for layout, us in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
