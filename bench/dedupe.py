"""Work resolution end to end: the labelled data sets crawled into the index and scored.

    python -m bench.dedupe [--data dblp-acm,cora] [--limit N] [--out bench-dedupe.json]

For each data set (``bench.er``): its profile sites are written and served from
127.0.0.1 (``bench.serve``, one server a site), a real ``scrapy crawl profiles``
reads every profile of both sites into a fresh osmem-server (arXiv off:
``ARXIV_ENABLED=false``, so no arXiv id or DOI joins works here), exporting its
items beside; then the resolution pass runs (``scholarindex works resolve``, when
the installed ``scholarindex`` has it; otherwise the index is scored as the crawl
left it, and the result says so). The works index is read back: each document's
``listings`` are records again through the listing map (``bench.er.listings``,
matched against the crawl's own items), and the documents are scored pairwise
over the full tables (``bench.er.score``), beside the exact-title baseline
computed from the same crawl's items (one work per normalised title), with the crawl's
pages/s.

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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.er.data import DATA_SETS, DataMissing, DataSet, available, load
from bench.er.evaluate import atoms_of, exact_title_clusters, exact_title_of_records
from bench.er.listings import Matched
from bench.er.score import pairwise
from bench.er.site import Site, build_sites, write_sites, write_urls
from bench.run import ROOT, SCHOLARINDEX, machine, run_crawl
from bench.serve import StaticServer

PREFIX = "er_"
DEFAULT_DATA = ("dblp-acm", "cora")
RESULTS = ROOT / "bench-dedupe.json"
RESOLVE_COMMAND = [SCHOLARINDEX, "works", "resolve"]
# osmem-server rebuilds its index on every bulk request that overwrites a document (see
# bench/sink.py): past some 20,000 documents every flush stalls the crawl for minutes, and
# DBLP-Scholar's crawl (66,879 listings) outlasted OPENSEARCH_OUTAGE_WAIT with the crawl's
# own batches. A data set that large is crawled with a few large flushes instead.
LARGE_RECORDS = 20_000
LARGE_INDEX_SETTINGS = {"INDEX_BATCH_SIZE": "20000", "INDEX_BATCH_BYTES": str(200 * 2**20),
                        "INDEX_FLUSH_INTERVAL": "3600", "INDEX_MAX_BUFFER": "40000",
                        "OPENSEARCH_TIMEOUT": "900"}


def log(message: str) -> None:
    print(f"[bench-dedupe {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def resolve_available() -> bool:
    """Does the installed ``scholarindex`` have ``works resolve``?"""
    probe = subprocess.run([*RESOLVE_COMMAND, "--help"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    return probe.returncode == 0


def run_data_set(data: DataSet, work: Path, limit: int | None) -> dict[str, Any]:
    """Write, serve and crawl ``data``'s sites; resolve; read back and score."""
    from osmem_server import OsmemServer

    started = time.perf_counter()
    sites = build_sites(data)
    folders = write_sites(sites, work / "sites")
    servers = {site.name: StaticServer(folders[site.name]) for site in sites}
    index = OsmemServer.start()
    try:
        url_file = work / "urls.txt"
        with url_file.open("w", encoding="utf-8") as urls:
            for site in sites:
                part = write_urls(site, work / f"urls-{site.folder}.txt", servers[site.name].url)
                urls.write(part.read_text("utf-8"))
        pages = sum(len(site.pages) for site in sites)
        items_path = work / "items.jsonl"
        log(f"{data.name}: crawling {pages} profiles of {len(sites)} site(s) into osmem-server")
        crawl = run_crawl(f"crawl-{data.name}", "profiles", url_file, work, {
            "INDEX_ENABLED": "true", "ARXIV_ENABLED": "false", "OPENSEARCH_URL": index.url,
            "INDEX_PREFIX": PREFIX, "STATE_DIR": str(work / "state"),
            "INDEX_DEADLETTER_PATH": str(work / "deadletter.jsonl"),
            "FEEDS": json.dumps({items_path.as_uri(): {"format": "jsonlines"}}),
            **(LARGE_INDEX_SETTINGS if len(data.records) > LARGE_RECORDS else {}),
        }, timeout=600 + pages * 0.5)
        resolved = _resolve(index.url, work)
        docs = list(_works(index.url))
    finally:
        index.close()
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
        "index_settings": LARGE_INDEX_SETTINGS if len(data.records) > LARGE_RECORDS else
        "the crawl's defaults",
        "crawl": {"cpu_seconds": crawl.cpu_seconds, "peak_mb": crawl.peak_mb,
                  "dead_lettered": crawl.stat("index/dead_lettered"),
                  "listings_delivered": crawl.stat("index/listings_delivered")},
        "seconds": round(time.perf_counter() - started, 1),
    }


def _resolve(url: str, work: Path) -> dict[str, Any]:
    """Run ``scholarindex works resolve`` on the index, when it exists."""
    if not resolve_available():
        log("scholarindex works resolve is not there yet: scoring the index as crawled")
        return {"ran": False, "reason": "scholarindex works resolve not available"}
    env = {**os.environ, "OPENSEARCH_URL": url, "INDEX_PREFIX": PREFIX}
    started = time.perf_counter()
    proc = subprocess.run([*RESOLVE_COMMAND, "--json"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3600)
    (work / "resolve.log").write_text(proc.stdout + proc.stderr, "utf-8")
    if proc.returncode != 0:
        raise RuntimeError(f"works resolve exited {proc.returncode}: {proc.stderr[-2000:]}")
    # The crawl resolved at its end already: this second pass must find nothing to do.
    return {"ran": True, "seconds": round(time.perf_counter() - started, 2),
            "groups_changed": json.loads(proc.stdout)["groups_changed"]}


def _works(url: str) -> Iterator[dict[str, Any]]:
    """Every work document of the index (its ``_source``)."""
    from scholarindex.indexing.client import build_client
    from scholarindex.indexing.connection import OpenSearchConfig
    from scholarindex.indexing.indices import alias_name
    from scholarindex.indexing.scan import scan

    client = build_client(OpenSearchConfig(url=url, prefix=PREFIX, verify_certs=True,
                                           timeout=120))
    client.indices.refresh(index=alias_name(PREFIX, "works"))
    for hit in scan(client, alias_name(PREFIX, "works"), {"query": {"match_all": {}}},
                    request_timeout=120):
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


def table(result: dict[str, Any]) -> Iterator[str]:
    for name, r in result["data_sets"].items():
        yield (f"{name}: {r['records']} records, {r['gold_pairs']} gold pairs (pairs scored: "
               f"{r['scored_pairs']}); {r['pages_parsed']} of {r['pages']} pages in "
               f"{r['crawl_seconds']} s = {r['pages_per_s']} pages/s")
        yield (f"  listings parsed {r['listings_parsed']}, records lost by the parser "
               f"{r['records_lost_by_parser']}, unmapped {r['listings_unmapped']}; atoms "
               f"{r['atoms']}, work documents {r['work_documents']}")
        pass_ = r["resolution_in_crawl"]
        yield (f"  resolution pass at the crawl's end: {pass_['documents']:.0f} documents -> "
               f"{pass_['works']:.0f} works, {pass_['groups_changed']:.0f} group(s) regrouped "
               f"in {pass_['seconds']} s; a second pass: "
               + (f"{r['resolution_pass']['groups_changed']} group(s) changed in "
                  f"{r['resolution_pass']['seconds']} s" if r["resolution_pass"]["ran"]
                  else "not available"))
        for label, key in (("exact title (items)", "exact_title"), ("index", "index"),
                           ("exact title (records)", "exact_title_unparsed")):
            s = r[key]
            yield (f"  {label:22} P {s['precision']:.4f}  R {s['recall']:.4f}  "
                   f"F1 {s['f1']:.4f}  ({s['true_positives']} of {s['predicted']} true)")
        for problem in r["checks_failed"]:
            yield f"  CHECK FAILED: {problem}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.dedupe",
        description="Crawl the labelled data sets' profile sites into osmem-server, run the "
                    "resolution pass, and score the works index pairwise (P/R/F1) beside "
                    "the exact-title baseline.")
    parser.add_argument("--data", default=",".join(DEFAULT_DATA),
                        help=f"comma-separated, of {', '.join(DATA_SETS)} (default: "
                             f"{','.join(DEFAULT_DATA)})")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N records of each table")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep sites, logs and items here (default: a temp dir, removed)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.data.split(",") if n.strip()]
    if unknown := [n for n in names if n not in DATA_SETS]:
        parser.error(f"unknown data set(s) {', '.join(unknown)}; of {', '.join(DATA_SETS)}")
    if missing := [n for n in names if not available(n)]:
        try:
            load(missing[0])
        except DataMissing as exc:
            print(exc, file=sys.stderr)
        return 2
    work = args.workdir or Path(tempfile.mkdtemp(prefix="scholar-bench-dedupe-"))
    started = time.perf_counter()
    results: dict[str, Any] = {"data_sets": {}, "arxiv": "off (ARXIV_ENABLED=false)"}
    try:
        for name in names:
            folder = work / name
            folder.mkdir(parents=True, exist_ok=True)
            results["data_sets"][name] = run_data_set(load(name, args.limit), folder, args.limit)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    results.update(machine=machine(), date=datetime.now(UTC).isoformat(timespec="seconds"),
                   bench_seconds=round(time.perf_counter() - started, 1))
    args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    print("\n".join(table(results)))
    print(f"written to {args.out}")
    return 1 if any(r["checks_failed"] for r in results["data_sets"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
