"""Offline: how well work resolution finds the same paper on the labelled data sets.

    python -m bench.er.evaluate --data dblp-acm [--resolver exact|full] [--limit N] [--json F]
    python -m bench.er.evaluate --data dblp-scholar --limit 5000   # its Scholar side is 64k
    python -m bench.er.evaluate --data dblp-acm --noise scholar-names  # bench.er.noise
    python -m bench.er.evaluate --data dblp-acm --why   # missed and wrong pairs by reason
    python -m bench.er.evaluate --all [--limit N]       # every set, one table (bench.er.scoreboard)
    python -m bench.er.evaluate --data cora --layout A  # every table as layout A pages
    python -m bench.er.evaluate --data cora --resolver fs   # probabilistic linkage, each threshold

No network, no index: each data set is rendered as its profile sites
(``bench.er.site``), every page is parsed with the crawler's ``parse_profile``,
the work items are folded into the index's documents by the index's own merge
(one per ``work_id``: the atoms, ``bench.er.atoms``), a resolver groups the atoms
into works, and each work's records (``bench.er.listings``) are scored pairwise
over the full tables (``bench.er.score``) against the gold pairs, beside the
exact-title baseline (listings grouped by their normalised title alone).
How well the parser reads the pages is counted first: records it lost (no listing
stands for them), listings that match no record, and, of the listings matched, the
card author lines it did not read and the layout A venues it read wrong.

Resolvers: ``exact`` (the baseline alone), ``full`` (``scholarindex.core.resolution.resolve``,
once that package is on the branch), ``fs`` (probabilistic linkage,
``bench.er.probabilistic``: m and u fitted on the set without labels,
then scored at each match-probability threshold of ``--threshold``, default 0.9, 0.99 and
0.999) and ``hybrid`` (the rule, with that model deciding the pairs the rule leaves apart
without a conflict; the same thresholds). When ``scholarindex.core.resolution.candidate_pairs``
exists, blocking's pair completeness and reduction ratio are printed too, and the
completeness with the posting cap scaled down as a 70,000-atom crawl of the same
vocabulary would fill the postings (``scaled_cap``): how blocking holds at scale.
``--distractors N`` measures that at the real cap instead, among N more atoms whose
titles are drawn word by word from the data set's own (``distractors``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.er.atoms import documents
from bench.er.data import DATA_SETS, DataMissing, DataSet, load
from bench.er.listings import Matched
from bench.er.noise import CHOICES, with_noise
from bench.er.score import PairScore, blocking, pairwise, predicted_pairs
from bench.er.site import Site, build_sites, placed
from bench.er.why import explain
from bench.generate import CRAWL_DATE, LAYOUT_A, LAYOUT_B
from crawler.extract import parse_profile
from scholarindex.core.identity import work_id
from scholarindex.core.resolution import Atom
from scholarindex.indexing.resolution import atoms_of as document_atoms

RESOLVERS = ("exact", "full", "fs", "hybrid")
PROBABILISTIC = ("fs", "hybrid")


def site_url(site: Site) -> str:
    """Where the offline pages are said to be (only their URLs' identity matters)."""
    return f"http://{site.folder}.er.invalid"


@dataclass
class Crawled:
    """What parsing every page of a data set's sites gave."""

    items: list[Any] = field(default_factory=list)  # the work items, as dicts
    matched: Matched = field(default_factory=Matched)
    pages: int = 0
    pages_unparsed: int = 0  # in neither layout, or no researcher read
    authors_printed: int = 0  # card listings (matched to a record) whose record has authors
    authors_unread: int = 0  # ... of which the parser read no author
    venues_shown: int = 0  # layout A listings matched to a record
    venues_misread: int = 0  # ... whose venue is not the record's as the page shows it
    seconds: float = 0.0


def crawl_offline(data: DataSet, layout: str | None = None) -> Crawled:
    """Render and parse every page of ``data``'s sites (all in ``layout``, if given)."""
    started = time.perf_counter()
    out = Crawled()
    for site in build_sites(data, layout):
        base = site_url(site)
        for page in site.pages:
            url = base + page.path
            parsed = parse_profile(url, site.render(page).encode("utf-8"),
                                   "text/html; charset=utf-8", CRAWL_DATE)
            out.pages += 1
            if parsed.researcher is None:
                out.pages_unparsed += 1
            works = [vars(w) for w in parsed.works]
            out.items += works
            shown = [(r.key, r.title, r.year) for r in page.records]
            keys = out.matched.add_page(url, shown, works)
            by_key = {r.key: r for r in page.records}
            if site.layout == LAYOUT_B:
                for work, key in zip(works, keys, strict=True):
                    if key is not None and by_key[key].authors:
                        out.authors_printed += 1
                        out.authors_unread += not work.get("authors")
            else:
                for work, key in zip(works, keys, strict=True):
                    if key is not None:
                        shown_venue = " ".join(by_key[key].venue.split()) or None
                        out.venues_shown += 1
                        out.venues_misread += work.get("venue") != shown_venue
    out.seconds = time.perf_counter() - started
    return out


@dataclass
class Atoms:
    atoms: list[Atom]
    records: list[list[str]]  # per atom: its record keys
    atom_of: dict[str, int]  # record key -> atom index


def atoms_of(items: Sequence[Any], record_keys: Callable[[str, str], list[str]]) -> Atoms:
    """One atom per work_id, in work_id order, with the records its listings stand for."""
    docs = documents(items)
    atoms = document_atoms(docs[wid] for wid in sorted(docs))
    index = {a.work_id: i for i, a in enumerate(atoms)}
    records: list[list[str]] = [[] for _ in atoms]
    for item in items:
        for key in record_keys(item["researcher_url"], item["work_id"]):
            records[index[item["work_id"]]].append(key)
    records = [sorted(set(keys)) for keys in records]
    atom_of = {key: i for i, keys in enumerate(records) for key in keys}
    return Atoms(atoms, records, atom_of)


SCALE_ATOMS = 70_000  # the size of crawl blocking is stressed for (DBLP-Scholar's tables)


def scaled_cap(atoms: int) -> int:
    """The posting cap that, on ``atoms`` atoms, cuts as deep into the vocabulary as
    the real cap would on ``SCALE_ATOMS`` atoms of the same vocabulary: postings
    grow with the crawl, so a word under the cap here would be over it there."""
    from scholarindex.core.resolution.blocking import MAX_POSTING
    return max(2, round(MAX_POSTING * atoms / SCALE_ATOMS))


def distractors(atoms: Sequence[Atom], count: int, seed: int = 1) -> list[Atom]:
    """``count`` atoms of other papers in the same vocabulary: each title's words drawn
    one by one from the data set's own printed titles (as often as they are printed;
    not the words printed once: a crawl has typos of its own, not these),
    its length from theirs; one person each, no one the data set names. They fill the
    postings as a crawl of that size would (word by word; pairs of words co-occur less
    than in real titles)."""
    rng = random.Random(seed)
    printed = [w for atom in atoms for title in atom.titles for w in title.split()]
    seen = Counter(printed)
    words = [w for w in printed if seen[w] > 1] or printed  # once: often a typo
    lengths = [len(title.split()) for atom in atoms for title in atom.titles]
    return [Atom(f"distractor{n:07d}", (" ".join(rng.choices(words, k=rng.choice(lengths))),),
                 (), False, (f"Distractor {n}",), (2000,)) for n in range(count)]


def resolution() -> Any | None:
    """``scholarindex.core.resolution`` if it is on this branch."""
    try:
        import scholarindex.core.resolution as module
    except ImportError:
        return None
    return module


def record_clusters(built: Atoms, atom_clusters: Sequence[Sequence[str]]) -> list[list[str]]:
    """Atom clusters (work_ids) as clusters of record keys."""
    index = {a.work_id: i for i, a in enumerate(built.atoms)}
    return [[key for wid in cluster for key in built.records[index[wid]]]
            for cluster in atom_clusters]


def evaluate(data: DataSet, resolver: str = "full", why: bool = False, distract: int = 0,
             blocking_figures: bool = True, layout: str | None = None,
             thresholds: Sequence[float] | None = None) -> dict[str, Any]:
    """``blocking_figures``: also blocking's completeness at the real and the scaled cap;
    ``layout``: every table shown in that layout (``bench.er.site``); ``thresholds``: the
    match probabilities ``fs`` and ``hybrid`` are scored at (their module's
    ``THRESHOLDS`` by default; ``result[resolver]`` is the first of them)."""
    crawled = crawl_offline(data, layout)
    built = atoms_of(crawled.items, crawled.matched.record_keys)
    baseline = pairwise(exact_title_clusters(crawled.items, crawled.matched.record_keys),
                        data.gold, data.cross_source)
    result: dict[str, Any] = {
        "data": data.name, "records": len(data.records),
        "tables": {name: len(rows) for name, rows in data.tables.items()},
        "gold_pairs": len(data.gold), "scored_pairs": "across tables" if data.cross_source
        else "all",
        "pages": crawled.pages, "pages_unparsed": crawled.pages_unparsed,
        "listings_shown": crawled.matched.records_shown,
        "listings_parsed": crawled.matched.listings_parsed,
        "records_mapped": crawled.matched.mapped,
        "records_lost_by_parser": len(crawled.matched.lost),
        "listings_unmapped": len(crawled.matched.unmapped),
        "card_author_lines_unread": [crawled.authors_unread, crawled.authors_printed],
        "venues_misread": [crawled.venues_misread, crawled.venues_shown],
        "atoms": len(built.atoms),
        "parse_seconds": round(crawled.seconds, 2),
        "exact_title": baseline.as_dict(),
        # The same rule on the records' own titles: what a parser that lost nothing would give.
        "exact_title_unparsed": exact_title_of_records(data).as_dict(),
    }
    module = resolution()
    candidates: list[tuple[int, int]] = []
    if (blocking_figures or why) and module is not None and hasattr(module, "candidate_pairs"):
        started = time.perf_counter()
        candidates = list(module.candidate_pairs(built.atoms))
        result["blocking"] = {**blocking(candidates, built.atom_of, len(built.atoms),
                                         data.gold).as_dict(),
                              "seconds": round(time.perf_counter() - started, 2)}
        cap = scaled_cap(len(built.atoms))
        scaled = list(module.candidate_pairs(built.atoms, max_posting=cap))
        result["blocking_at_scale"] = {
            **blocking(scaled, built.atom_of, len(built.atoms), data.gold).as_dict(),
            "max_posting": cap, "as_if_atoms": SCALE_ATOMS}
        if distract:
            crowd = [*built.atoms, *distractors(built.atoms, distract)]
            started = time.perf_counter()
            crowded = list(module.candidate_pairs(crowd))
            result["blocking_with_distractors"] = {
                **blocking(crowded, built.atom_of, len(crowd), data.gold).as_dict(),
                "distractors": distract, "seconds": round(time.perf_counter() - started, 2)}
    if resolver == "full":
        if module is None or not hasattr(module, "resolve"):
            raise SystemExit("--resolver full: core.resolution.resolve is not on this branch")
        started = time.perf_counter()
        resolved = module.resolve(built.atoms)
        seconds = time.perf_counter() - started
        clusters = record_clusters(built, resolved.clusters)
        score = pairwise(clusters, data.gold, data.cross_source)
        result["full"] = {**score.as_dict(), "works": len(resolved.clusters),
                          "seconds": round(seconds, 2)}
        if why:
            predicted = predicted_pairs(clusters, data.cross_source)
            reasons = explain(built.atoms, built.atom_of, candidates,
                              sorted(data.gold - predicted), sorted(predicted - data.gold))
            result["why"] = {kind: dict(counts.most_common()) for kind, counts in reasons.items()}
    if resolver in PROBABILISTIC:
        result.update(probabilistic_scores(data, built, resolver, thresholds))
    return result


def probabilistic_scores(data: DataSet, built: Atoms, resolver: str,
                         thresholds: Sequence[float] | None) -> dict[str, Any]:
    """``fs`` or ``hybrid``: the model fitted once on the atoms, the works at each threshold.
    A threshold's ``seconds`` are the fit's and its own clustering's."""
    from bench.er import probabilistic
    started = time.perf_counter()
    linkage = probabilistic.link(built.atoms)
    fitted = time.perf_counter() - started
    by_threshold = {}
    for threshold in thresholds or probabilistic.THRESHOLDS:
        started = time.perf_counter()
        resolved = (linkage.resolve(threshold) if resolver == "fs"
                    else linkage.hybrid(threshold))
        seconds = fitted + time.perf_counter() - started
        score = pairwise(record_clusters(built, resolved.clusters), data.gold,
                         data.cross_source)
        by_threshold[f"{threshold:g}"] = {**score.as_dict(), "works": len(resolved.clusters),
                                          "threshold": threshold, "seconds": round(seconds, 2)}
    model = linkage.model
    return {resolver: next(iter(by_threshold.values())),
            f"{resolver}_by_threshold": by_threshold,
            f"{resolver}_model": {"weights": model.weights(), "prior": model.prior,
                                  "candidate_share": round(model.candidate_share, 4),
                                  "em_iterations": list(model.iterations),
                                  "candidate_pairs": len(linkage.weights),
                                  "fit_seconds": round(fitted, 2)}}


def exact_title_clusters(items: Sequence[Any], record_keys: Callable[[str, str], list[str]]
                         ) -> list[list[str]]:
    """The parsed listings' records grouped by their title alone (``work_id(title)``):
    the exact normalised title rule, with nothing else read."""
    groups: dict[str, set[str]] = {}
    for item in items:
        keys = record_keys(item["researcher_url"], item["work_id"])
        groups.setdefault(work_id(item["title"]), set()).update(keys)
    return [sorted(keys) for keys in groups.values()]


def exact_title_of_records(data: DataSet) -> PairScore:
    """Records grouped by ``work_id`` of their own title, with no page in between (a record
    without a title alone: an empty title says nothing)."""
    groups: dict[str, list[str]] = {}
    for record in data.records:
        groups.setdefault(work_id(record.title) if placed(record) else record.key,
                          []).append(record.key)
    return pairwise(list(groups.values()), data.gold, data.cross_source)


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['data']}: {result['records']} records "
        f"({', '.join(f'{k} {v}' for k, v in result['tables'].items())}), "
        f"{result['gold_pairs']} gold pairs, pairs scored: {result['scored_pairs']}",
        f"  pages {result['pages']} (unparsed {result['pages_unparsed']}), listings shown "
        f"{result['listings_shown']}, parsed {result['listings_parsed']}, records lost by the "
        f"parser {result['records_lost_by_parser']}, unmapped listings "
        f"{result['listings_unmapped']}; card author lines unread "
        f"{result['card_author_lines_unread'][0]} of {result['card_author_lines_unread'][1]}; "
        f"layout A venues misread {result['venues_misread'][0]} of {result['venues_misread'][1]}",
        f"  atoms (work_ids) {result['atoms']}; parse {result['parse_seconds']} s",
        f"  exact title   {_line(result['exact_title'])}",
        f"  (the same on the records, nothing lost: {_line(result['exact_title_unparsed'])})",
    ]
    if "full" in result:
        lines.append(f"  resolution    {_line(result['full'])}  "
                     f"[{result['full']['works']} works, {result['full']['seconds']} s]")
    for resolver in PROBABILISTIC:
        if f"{resolver}_by_threshold" not in result:
            continue
        model = result[f"{resolver}_model"]
        lines.append(f"  {resolver} model: prior {model['prior']:.3g}, share of matches among "
                     f"{model['candidate_pairs']} candidates {model['candidate_share']}, EM "
                     f"iterations {model['em_iterations']}, fit {model['fit_seconds']} s")
        lines += [f"    {name}: " + ", ".join(f"{level} {w:+.1f}" for level, w in levels.items())
                  for name, levels in model["weights"].items()]
        for threshold, score in result[f"{resolver}_by_threshold"].items():
            lines.append(f"  {resolver} >= {threshold:<5} {_line(score)}  "
                         f"[{score['works']} works, {score['seconds']} s]")
    if "why" in result:
        for kind, counts in result["why"].items():
            lines.append(f"  {kind} pairs, {sum(counts.values())}, by reason:")
            lines += [f"    {n:6d}  {reason}" for reason, n in list(counts.items())[:12]]
    if "blocking" in result:
        b = result["blocking"]
        lines.append(f"  blocking      pair completeness {b['pair_completeness']:.4f}, reduction "
                     f"ratio {b['reduction_ratio']:.6f} ({b['candidate_pairs']} candidate pairs "
                     f"of {b['atom_pairs']}, {b['seconds']} s)")
    if "blocking_at_scale" in result:
        b = result["blocking_at_scale"]
        lines.append(f"  blocking as if {b['as_if_atoms']:,} atoms (postings capped at "
                     f"{b['max_posting']}): pair completeness {b['pair_completeness']:.4f} "
                     f"({b['candidate_pairs']} candidate pairs)")
    if "blocking_with_distractors" in result:
        b = result["blocking_with_distractors"]
        lines.append(f"  blocking among {b['distractors']:,} distractors ({b['atom_pairs']:,} "
                     f"atom pairs): pair completeness {b['pair_completeness']:.4f} "
                     f"({b['candidate_pairs']} candidate pairs, {b['seconds']} s)")
    return "\n".join(lines)


def _line(score: dict[str, Any]) -> str:
    return PairScore(score["precision"], score["recall"], score["f1"], score["predicted"],
                     score["true_positives"], score["gold"]).line()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.er.evaluate",
        description="Score work resolution offline on a labelled data set (pairwise P/R/F1 "
                    "beside the exact-title baseline).")
    parser.add_argument("--data", choices=DATA_SETS, default="dblp-acm")
    parser.add_argument("--all", action="store_true",
                        help="every data set, one table (bench.er.scoreboard; with --limit "
                             "and --json only)")
    parser.add_argument("--resolver", choices=RESOLVERS, default=None,
                        help="exact: the baseline alone; full: core.resolution.resolve "
                             "(default: full when it exists)")
    parser.add_argument("--threshold", type=float, action="append", default=None,
                        help="fs and hybrid: a match probability to score at (repeatable; "
                             "default 0.9, 0.99 and 0.999)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N records of each table")
    parser.add_argument("--noise", choices=CHOICES, action="append", default=[],
                        help="print the second table as another site would (bench.er.noise); "
                             "repeatable")
    parser.add_argument("--why", action="store_true",
                        help="count the missed and wrong pairs by what decided them "
                             "(bench.er.why)")
    parser.add_argument("--distractors", type=int, default=0, metavar="N",
                        help="also block among N atoms of other papers in the data set's "
                             "vocabulary (blocking at the real cap in a crawl that large)")
    parser.add_argument("--layout", choices=("A", "B"), default=None,
                        help="show every table in this layout (default: each source in its "
                             "own, bench.er.site.LAYOUTS); A prints each record's venue in its "
                             "meta line")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.all:
        if (args.noise or args.why or args.distractors or args.layout
                or args.resolver == "exact"):
            parser.error("--all prints the scoreboard: only --limit, --json, --resolver and "
                         "--threshold go with it")
        from bench.er.scoreboard import report as scoreboard  # it imports this module
        return scoreboard(DATA_SETS, args.limit, args.json, args.resolver or "full",
                          args.threshold)
    if args.why and args.resolver in PROBABILISTIC:
        parser.error("--why explains decide's verdicts: --resolver full only")
    module = resolution()
    resolver = args.resolver or ("full" if module and hasattr(module, "resolve") else "exact")
    try:
        data = load(args.data, args.limit)
    except DataMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.noise and not data.cross_source:
        parser.error(f"--noise rewrites the second of two tables; {args.data} has one")
    for noise in args.noise:
        data = with_noise(data, noise)
    layout = {"A": LAYOUT_A, "B": LAYOUT_B}.get(args.layout or "")
    result = evaluate(data, resolver, why=args.why, distract=args.distractors, layout=layout,
                      thresholds=args.threshold)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
