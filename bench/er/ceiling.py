"""What the pages let any matcher reach: record pairs no rule reading them can tell apart.

    python -m bench.er.ceiling                      # every development set, offline
    python -m bench.er.ceiling --data cora,bib-respiratory

Each set is rendered and parsed as the scoreboard does (``bench.er.evaluate``), and
its record pairs are counted in two kinds of class, gold pairs beside the others:

* **one `work_id`**: pairs whose listings share a `work_id`. A listing's `work_id` comes
  from its page alone and is the same for every listing of one paper, so every
  listing of one title gets it (a generic title aside), and each `work_id` leads to
  one document: resolution joins these pairs whatever it decides. With every other
  pair right, precision is at most gold / (gold + these others).
* **one title and a shared surname, by years**: pairs whose listings print one title
  (cleaned; letters and digits alone) and a surname in common, split by what their years say (the
  same year; one undated; one apart; further). Nothing else on a card of layout B
  (no venue) tells such a pair apart, so a rule joins or parts a class nearly whole,
  and where one set's class is mostly gold and another's mostly not, no rule serves
  both.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench.er.data import DATA_SETS, DataSet, load
from bench.er.evaluate import crawl_offline
from bench.er.score import source_of
from bench.er.scoreboard import missing_data, parse_names
from scholarindex.core.identity import title_key
from scholarindex.core.names import parse_name
from scholarindex.core.resolution.clean import clean_title

YEAR_CLASSES = ("same year", "undated", "one apart", "further")
LARGEST_TITLE_GROUP = 300  # a title printed more often is a generic one: its pairs say nothing

Items = Mapping[str, Mapping[str, Any]]  # record key -> the work item read for it


def record_items(data: DataSet) -> dict[str, Mapping[str, Any]]:
    """Each record the parser read, with the work item that stands for it."""
    crawled = crawl_offline(data)
    return {key: item for item in crawled.items
            for key in crawled.matched.record_keys(item["researcher_url"], item["work_id"])}


def _scored(keys: Iterable[str], cross_source: bool) -> Iterable[tuple[str, str]]:
    for a, b in itertools.combinations(sorted(keys), 2):
        if not cross_source or source_of(a) != source_of(b):
            yield a, b


def one_work_id(items: Items, gold: set[tuple[str, str]], cross_source: bool) -> Counter[bool]:
    """Pairs of records whose listings share a `work_id`: {in gold: count}."""
    groups: dict[str, list[str]] = defaultdict(list)
    for key, item in items.items():
        groups[item["work_id"]].append(key)
    return Counter(pair in gold for keys in groups.values()
                   for pair in _scored(keys, cross_source))


def surnames(item: Mapping[str, Any]) -> set[str]:
    """The surnames a listing prints: its author line's and its profile owner's."""
    names = [*(item.get("authors") or ()), item.get("researcher_name") or ""]
    return {parsed.surname for name in names if (parsed := parse_name(name))}


def year_class(a: int | None, b: int | None) -> str:
    if not (a and b):
        return "undated"
    return "same year" if a == b else "one apart" if abs(a - b) == 1 else "further"


def title_classes(items: Items, gold: set[tuple[str, str]], cross_source: bool
                  ) -> Counter[tuple[str, bool]]:
    """Pairs printing one title and a shared surname: {(year class, in gold): count}."""
    groups: dict[str, list[str]] = defaultdict(list)
    for key, item in items.items():
        groups[title_key(clean_title(item["title"]))].append(key)
    counts: Counter[tuple[str, bool]] = Counter()
    for keys in groups.values():
        if len(keys) > LARGEST_TITLE_GROUP:
            continue
        for a, b in _scored(keys, cross_source):
            if surnames(items[a]) & surnames(items[b]):
                counts[year_class(items[a].get("year"), items[b].get("year")),
                       (a, b) in gold] += 1
    return counts


def report(data: DataSet) -> str:
    items = record_items(data)
    gold = data.gold
    forced = one_work_id(items, gold, data.cross_source)
    ceiling = len(gold) / (len(gold) + forced[False])
    lines = [f"{data.name}: {len(gold)} gold pairs",
             f"  one work_id: gold {forced[True]}, other {forced[False]}: precision at most "
             f"{ceiling:.4f} (at recall 1)",
             "  one title and a shared surname, by years:"]
    classes = title_classes(items, gold, data.cross_source)
    for name in YEAR_CLASSES:
        true, other = classes[name, True], classes[name, False]
        share = f"{true / (true + other):.3f}" if true + other else "-"
        lines.append(f"    {name:10} gold {true:6}  other {other:5}  gold share {share}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.er.ceiling",
        description="Record pairs the pages do not tell apart, a development set at a time.")
    parser.add_argument("--data", default=",".join(DATA_SETS),
                        help=f"comma-separated, of {', '.join(DATA_SETS)} (default: all)")
    args = parser.parse_args(argv)
    names = parse_names(args.data, parser)
    if (message := missing_data(names)) is not None:
        print(message, file=sys.stderr)
        return 2
    for name in names:
        print(report(load(name)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
