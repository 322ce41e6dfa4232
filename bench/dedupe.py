"""Work resolution end to end: every development set crawled into the index and scored.

    python -m bench.dedupe [--data dblp-acm,cora] [--limit N] [--out bench-dedupe.json]
                           [--use-env]

For each data set (``bench.er``; by default all of them): its profile sites are
written and served from 127.0.0.1 (``bench.serve``, one server a site), a real
``scrapy crawl profiles`` reads every profile into the cluster
``bench.cluster.opensearch_process`` gives (a local one, or with ``--use-env`` the
one ``OPENSEARCH_URL``, ``OPENSEARCH_USER``, ... name), each data set under its own
``INDEX_PREFIX`` (``<INDEX_PREFIX>er_<set>_``) whose indices are deleted after it
(arXiv off: ``ARXIV_ENABLED=false``, so no arXiv id or DOI joins works here),
exporting its items beside; then the resolution pass runs (``scholarindex works resolve``, when
the installed ``scholarindex`` has it; otherwise the index is scored as the crawl
left it, and the result says so). The works index is read back: each document's
``listings`` are records again through the listing map (``bench.er.listings``,
matched against the crawl's own items), and the documents are scored pairwise
over the full tables (``bench.er.score``), beside the exact-title baseline
computed from the same crawl's items (one work per normalised title), with the crawl's
pages/s. The output is the scoreboard (``bench.er.scoreboard``): one row a set, the
records placed on pages and how many of them the crawl read back; the rest of the
figures go to the JSON file.

Checks (``checks_failed`` in the result): every parsed listing is in exactly one
document, no document holds a listing no item gave, nothing was dead-lettered.

DBLP-Scholar's Scholar side is 64,263 records on about 45,000 profiles: ``--limit``
keeps a run short.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.cluster import add_cluster_option, delete_indices, describe, opensearch_process
from bench.er.data import DATA_SETS, DataSet, load
from bench.er.evaluate import atoms_of, exact_title_clusters, exact_title_of_records
from bench.er.listings import Matched
from bench.er.score import pairwise
from bench.er.scoreboard import missing_data, parse_names, row, table
from bench.er.site import Site, build_sites, write_sites, write_urls
from bench.run import ROOT, SCHOLARINDEX, machine, run_crawl
from bench.serve import StaticServer
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig

PREFIX = "er_"  # after the cluster's own INDEX_PREFIX, before the data set's name
RESULTS = ROOT / "bench-dedupe.json"
RESOLVE_COMMAND = [SCHOLARINDEX, "works", "resolve"]


def log(message: str) -> None:
    print(f"[bench-dedupe {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def resolve_available() -> bool:
    """Does the installed ``scholarindex`` have ``works resolve``?"""
    probe = subprocess.run([*RESOLVE_COMMAND, "--help"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    return probe.returncode == 0


def data_set_index(cluster: OpenSearchConfig, name: str) -> OpenSearchConfig:
    """The cluster under a prefix of ``name``'s own, so sets never meet in one cluster."""
    return replace(cluster, prefix=f"{cluster.prefix}{PREFIX}{name.replace('-', '_')}_")


def run_data_set(data: DataSet, work: Path, limit: int | None, index: OpenSearchConfig
                 ) -> dict[str, Any]:
    """Write, serve and crawl ``data``'s sites into ``index``; resolve; read back and score.

    The crawl and ``works resolve`` are given the URL and prefix; credentials and TLS
    settings reach them through the environment, as ``--use-env`` read them."""
    started = time.perf_counter()
    sites = build_sites(data)
    folders = write_sites(sites, work / "sites")
    servers = {site.name: StaticServer(folders[site.name]) for site in sites}
    try:
        url_file = work / "urls.txt"
        with url_file.open("w", encoding="utf-8") as urls:
            for site in sites:
                part = write_urls(site, work / f"urls-{site.folder}.txt", servers[site.name].url)
                urls.write(part.read_text("utf-8"))
        pages = sum(len(site.pages) for site in sites)
        items_path = work / "items.jsonl"
        log(f"{data.name}: crawling {pages} profiles of {len(sites)} site(s) into "
            f"{index.safe_url} under {index.prefix}")
        crawl = run_crawl(f"crawl-{data.name}", "profiles", url_file, work, {
            "INDEX_ENABLED": "true", "ARXIV_ENABLED": "false", "OPENSEARCH_URL": index.url,
            "INDEX_PREFIX": index.prefix, "STATE_DIR": str(work / "state"),
            "INDEX_DEADLETTER_PATH": str(work / "deadletter.jsonl"),
            "FEEDS": json.dumps({items_path.as_uri(): {"format": "jsonlines"}}),
        }, timeout=600 + pages * 0.5)
        resolved = _resolve(index, work)
        docs = list(_works(index))
    finally:
        for server in servers.values():
            server.close()
    items = [json.loads(line) for line in items_path.read_text("utf-8").splitlines()]
    matched = _match(sites, servers_urls={s.name: servers[s.name].url for s in sites},
                     items=items)
    works = [i for i in items if i.get("kind") == "work"]
    atoms = atoms_of(works, matched.record_keys).atoms
    clusters = [[key for listing in doc.get("listings") or []
                 for key in matched.record_keys(listing["researcher_url"], listing["work_id"])]
                for doc in docs]
    score = pairwise(clusters, data.gold, data.cross_source)
    seconds = crawl.seconds
    return {
        "data": data.name, "limit": limit, "records": len(data.records),
        "tables": {name: len(rows) for name, rows in data.tables.items()},
        "gold_pairs": len(data.gold),
        "scored_pairs": "across tables" if data.cross_source else "all",
        "pages": pages, "pages_parsed": crawl.stat("profiles/parsed"),
        "listings_shown": matched.records_shown,
        "crawl_seconds": round(seconds, 2),
        "pages_per_s": round(crawl.stat("profiles/parsed") / seconds, 1) if seconds else 0.0,
        "listings_parsed": len(works), "records_mapped": matched.mapped,
        "records_lost_by_parser": len(matched.lost), "listings_unmapped": len(matched.unmapped),
        "atoms": len(atoms), "work_documents": len(docs),
        "resolution_pass": resolved,
        # The pass the crawl ran when it finished (WORKS_RESOLVE), from its stats.
        "resolution_in_crawl": {key: crawl.stat(f"resolution/{key}") for key in
                                ("seconds", "documents", "atoms", "works", "groups_changed",
                                 "conflicts")},
        "exact_title": pairwise(exact_title_clusters(works, matched.record_keys), data.gold,
                                data.cross_source).as_dict(),
        "exact_title_unparsed": exact_title_of_records(data).as_dict(),
        "index": score.as_dict(),
        "checks_failed": _checks(docs, works, crawl.stat("index/dead_lettered"))
        + ([f"a second resolution pass changed {resolved['groups_changed']} group(s)"]
           if resolved.get("groups_changed") else []),
        "index_settings": "the crawl's defaults",
        "crawl": {"cpu_seconds": crawl.cpu_seconds, "peak_mb": crawl.peak_mb,
                  "dead_lettered": crawl.stat("index/dead_lettered"),
                  "listings_delivered": crawl.stat("index/listings_delivered")},
        "seconds": round(time.perf_counter() - started, 1),
    }


def _resolve(index: OpenSearchConfig, work: Path) -> dict[str, Any]:
    """Run ``scholarindex works resolve`` on the index, when it exists."""
    if not resolve_available():
        log("scholarindex works resolve is not there yet: scoring the index as crawled")
        return {"ran": False, "reason": "scholarindex works resolve not available"}
    env = {**os.environ, "OPENSEARCH_URL": index.url, "INDEX_PREFIX": index.prefix}
    started = time.perf_counter()
    proc = subprocess.run([*RESOLVE_COMMAND, "--json"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3600)
    (work / "resolve.log").write_text(proc.stdout + proc.stderr, "utf-8")
    if proc.returncode != 0:
        raise RuntimeError(f"works resolve exited {proc.returncode}: {proc.stderr[-2000:]}")
    # The crawl resolved at its end already: this second pass must find nothing to do.
    return {"ran": True, "seconds": round(time.perf_counter() - started, 2),
            "groups_changed": json.loads(proc.stdout)["groups_changed"]}


def _works(index: OpenSearchConfig) -> Iterator[dict[str, Any]]:
    """Every work document of the index (its ``_source``)."""
    from scholarindex.indexing.indices import alias_name
    from scholarindex.indexing.scan import scan

    client = build_client(replace(index, timeout=max(index.timeout, 120)))
    alias = alias_name(index.prefix, "works")
    client.indices.refresh(index=alias)
    for hit in scan(client, alias, {"query": {"match_all": {}}}, request_timeout=120):
        yield hit["_source"]


def _match(sites: list[Site], servers_urls: dict[str, str], items: list[dict]) -> Matched:
    """The crawl's work items matched to records, page by page (see bench.er.listings)."""
    by_url: dict[str, list[dict]] = {}
    for item in items:
        if item.get("kind") == "work":
            by_url.setdefault(item["researcher_url"], []).append(item)
    matched = Matched()
    for site in sites:
        base = servers_urls[site.name]
        for page in site.pages:
            url = base + page.path
            listings = sorted(by_url.get(url, []), key=lambda i: i.get("position") or 0)
            matched.add_page(url, [(r.key, r.title, r.year) for r in page.records], listings)
    return matched


def _checks(docs: list[dict], works: list[dict], dead_lettered: float) -> list[str]:
    """Every parsed listing in exactly one document; no document listing from nowhere."""
    problems = []
    wanted = {(i["researcher_url"], i["work_id"]) for i in works}
    held: dict[tuple[str, str], int] = {}
    for doc in docs:
        for listing in doc.get("listings") or []:
            key = (listing["researcher_url"], listing["work_id"])
            held[key] = held.get(key, 0) + 1
    if missing := wanted - held.keys():
        problems.append(f"{len(missing)} parsed listings in no document")
    if extra := held.keys() - wanted:
        problems.append(f"{len(extra)} document listings no item gave")
    if twice := [k for k, n in held.items() if n > 1]:
        problems.append(f"{len(twice)} listings in more than one document")
    if dead_lettered:
        problems.append(f"{int(dead_lettered)} changes dead-lettered")
    return problems


def details(name: str, r: dict[str, Any]) -> str:
    """One log line of what the scoreboard leaves out: speed, parser, resolution pass."""
    pass_ = r["resolution_in_crawl"]
    second = (f"{r['resolution_pass']['groups_changed']} group(s) changed by a second pass"
              if r["resolution_pass"]["ran"] else "no second pass")
    return (f"{name}: {r['pages_parsed']:.0f} of {r['pages']} pages in {r['crawl_seconds']} s "
            f"({r['pages_per_s']} pages/s); {r['listings_parsed']} listings parsed, "
            f"{r['records_lost_by_parser']} records lost, {r['listings_unmapped']} unmapped; "
            f"{r['atoms']} atoms -> {r['work_documents']} work documents; the crawl's pass "
            f"{pass_['seconds']} s, {second}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.dedupe",
        description="Crawl every development set's profile sites into OpenSearch, run the "
                    "resolution pass, and score the works index pairwise (P/R/F1) beside "
                    "the exact-title baseline: one table, a row a set.")
    parser.add_argument("--data", default=",".join(DATA_SETS),
                        help=f"comma-separated, of {', '.join(DATA_SETS)} (default: all)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N records of each table")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep sites, logs and items here (default: a temp dir, removed)")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    names = parse_names(args.data, parser)
    if (message := missing_data(names)) is not None:
        print(message, file=sys.stderr)
        return 2
    work = args.workdir or Path(tempfile.mkdtemp(prefix="scholar-bench-dedupe-"))
    started = time.perf_counter()
    results: dict[str, Any] = {"data_sets": {}, "arxiv": "off (ARXIV_ENABLED=false)",
                               "cluster": "OPENSEARCH_URL (--use-env)" if args.use_env
                               else "bench.cluster's local OpenSearch node"}
    try:
        with opensearch_process(args.use_env) as (cluster, _):
            results["engine"] = describe(cluster)
            log(f"OpenSearch: {results['engine']} at {cluster.safe_url}")
            for name in names:
                folder = work / name
                folder.mkdir(parents=True, exist_ok=True)
                index = data_set_index(cluster, name)
                try:
                    result = run_data_set(load(name, args.limit), folder, args.limit, index)
                finally:
                    delete_indices(index)
                results["data_sets"][name] = result
                log(details(name, result))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    results.update(machine=machine(), date=datetime.now(UTC).isoformat(timespec="seconds"),
                   bench_seconds=round(time.perf_counter() - started, 1))
    rows = [row(r, "index", r["seconds"]) for r in results["data_sets"].values()]
    results["scoreboard"] = [r.as_dict() for r in rows]
    args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    print(table(rows))
    print(f"crawled end to end into {results['engine']}, "
          f"{'full sets' if args.limit is None else f'--limit {args.limit}'}"
          f"; {results['bench_seconds']:.0f} s")
    for name, r in results["data_sets"].items():
        for problem in r["checks_failed"]:
            print(f"CHECK FAILED ({name}): {problem}")
    print(f"written to {args.out}")
    return 1 if any(r["checks_failed"] for r in results["data_sets"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
