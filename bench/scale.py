"""``make bench-scale``: the resolution pass and search at scale, on the real engine.

    python -m bench.scale [--works 1000000] [--recrawl 0.01] [--passes both|incremental|full|none]
                          [--days 1] [--shards 1] [--replicas 0] [--use-env]
                          [--out bench-scale.json]

1. **Build** an index of about ``--works`` works from the bench site's generator
   (``bench.generate``) through the bulk path: every profile page is rendered, parsed
   by the crawler's ``parse_profile`` and turned into the changes a crawl makes
   (``changes_from_records``), which the product's ``BulkWriter`` merges and writes in
   large batches. So the documents are exactly what a crawl writes (the resolution pass
   runs on them), without a page-by-page crawl. Its researcher ids are those of the
   pages served in step 2 (the static server starts first, so its URL is known).
2. **Re-crawl** ``--recrawl`` of the profiles (1%) with ``scrapy crawl profiles`` from
   ``bench.serve`` on 127.0.0.1 (arXiv off, the crawl's own pass off). The pages have
   changed as real ones do: on each, a listing of a paper also listed elsewhere is
   printed with a typo (a new ``work_id`` the pass should join to that paper), and on
   about half a new paper appears. With ``--days N``, steps 2-4 run N times on one node,
   each day on another share of the profiles, as a daily crawl meets them: each day's
   pass finds the segments and documents the days before it left.
3. **Resolve**: the incremental pass (``ResolutionPass.run(full=False)``, what a crawl
   runs when it ends), then the full one (``run(full=True)``, ops'
   ``works resolve --full``). Each runs in a child process of its own
   (``python -m bench.scale_pass``, through ``bench.launch``): its time, CPU and peak
   memory are its own. A full pass after the incremental one must change nothing: the
   same clusters.
4. **Search** in a thread from the re-crawl's start to the last pass's end: titles of
   the papers the re-crawl touched and of random others, through the product's
   ``SearchService``; latency p50/p95 per phase, and *papers shown twice*: two hits of
   one result page that the generator says are one paper (it knows each listing's
   paper).
5. **Size**: the works index's store on disk (``_stats``) per work.

The figures (with the load average beside every timing) go to ``--out`` and a table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.cluster import (
    add_cluster_option,
    delete_indices,
    describe,
    opensearch_process,
    writer_retry,
)
from bench.generate import (
    CRAWL_DATE,
    LAYOUT_B,
    Listing,
    Profile,
    Site,
    _title,
    build_site,
    render,
    write_url_list,
)
from bench.run import ROOT, machine, process_cpu_seconds, run_crawl
from bench.search import nearest_rank
from bench.serve import StaticServer
from crawler.extract import parse_profile
from scholarindex.core.identity import work_id
from scholarindex.core.items import PageItem, records
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import changes_from_records
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import IndexLayout, OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.scan import refresh
from scholarindex.search.params import SearchRequest
from scholarindex.webui.service import SearchService

RESULTS = ROOT / "bench-scale.json"
PREFIX = "bench_scale_"
WORKS_PER_PROFILE = 14.2  # the generator's distinct works per profile (20 listings, 1.4 each)
BUILD_PAGES = 400  # pages a bulk batch (about 8,000 listings; the writer cuts requests)
BUILT_AT = "2026-11-21T00:00:00Z"  # when the synthetic "first crawl" saw every listing
PASS_TIMEOUT = 4 * 3600.0
SEARCH_PAUSE = 0.05  # between two searches of the loop: a steady reader, not a load test


def log(message: str) -> None:
    print(f"[bench-scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- the site and its re-crawl ---------------------------------------------------------------


@dataclass
class Recrawl:
    """The profiles the re-crawl fetches and what changed on their pages."""

    profiles: list[Profile]
    typos: list[tuple[str, int]] = field(default_factory=list)  # (typo'd work_id, paper)
    new_works: int = 0


def profiles_for(works: int) -> int:
    return max(2, math.ceil(works / WORKS_PER_PROFILE))


def truth_of(site: Site) -> dict[str, int]:
    """work_id -> the paper (generator's work index) every listing under it is."""
    return {work_id(listing.title): listing.work
            for person in site.profiles for listing in person.listings}


def typo(rnd: random.Random, title: str) -> str:
    """The title with one letter of its longest word dropped (a new ``work_id``)."""
    words = title.split(" ")
    at = max(range(len(words)), key=lambda i: (len(words[i]), -i))
    word = words[at]
    if len(word) < 4:
        return title + "s"
    cut = rnd.randrange(1, len(word) - 1)
    words[at] = word[:cut] + word[cut + 1:]
    return " ".join(words)


def change_pages(site: Site, share: float, seed: int) -> Recrawl:
    """Pick ``share`` of the profiles and change their pages (in ``site``)."""
    rnd = random.Random(seed)
    count = max(1, round(share * len(site.profiles)))
    recrawl = Recrawl(sorted(rnd.sample(site.profiles, count), key=lambda p: p.index))
    taken = {work_id(li.title) for p in site.profiles for li in p.listings}
    for person in recrawl.profiles:
        shared = [li for li in person.listings if len(site.works[li.work].owners) > 1]
        if shared:
            listing = rnd.choice(shared)
            listing.title = typo(rnd, listing.title)
            recrawl.typos.append((work_id(listing.title), listing.work))
        if rnd.random() < 0.5:
            model = site.works[rnd.randrange(len(site.works))]
            title = _title(rnd)
            while work_id(title) in taken:
                title = _title(rnd)
            taken.add(work_id(title))
            work = replace(model, index=len(site.works), title=title, owners=[person.index],
                           authors=[person.name, *model.authors[:2]])
            site.works.append(work)
            listing = Listing(work.index, title)
            if person.layout == LAYOUT_B:
                listing.authors = list(work.authors)
            person.listings.append(listing)
            recrawl.new_works += 1
    return recrawl


# --- the bulk build --------------------------------------------------------------------------


def build_index(site: Site, base: str, client: Any, config: OpenSearchConfig, work: Path
                ) -> dict[str, Any]:
    """Every profile parsed and written through ``BulkWriter``, as a crawl would write it,
    but for the judgment of new works: whichever way the build is settled (a full pass,
    its marks cleared), nothing it wrote stays hidden."""
    prefix = config.prefix
    ensure_aliases(client, prefix, layout=config.layout)
    dead = work / "build-deadletter.jsonl"
    writer = BulkWriter(client, prefix, DeadLetterFile(dead), writer_retry(),
                        layout=config.layout, hide_unresolved=False)
    started, cpu, load_before = time.perf_counter(), cpu_self(), load()
    listings = requests = 0
    for first in range(0, len(site.profiles), BUILD_PAGES):
        changes = []
        for person in site.profiles[first:first + BUILD_PAGES]:
            body = render(person, site.works).encode("utf-8")
            page = parse_profile(base + person.path, body, "text/html; charset=utf-8",
                                 CRAWL_DATE)
            if page.researcher is None:
                raise RuntimeError(f"{person.path}: not read as a profile page")
            # What the spider yields and the index stage turns into changes.
            made, refused = changes_from_records(records(PageItem(page.researcher, page.works)),
                                                 BUILT_AT)
            if refused or len(page.works) != len(person.listings):
                raise RuntimeError(f"{person.path}: the page did not parse as generated")
            changes += made
            listings += len(page.works)
        report = writer.write(changes)
        requests += report.bulk_requests
        if report.dead_lettered or report.fatal:
            raise RuntimeError(f"the build lost documents (see {dead}): {report}")
        done = min(first + BUILD_PAGES, len(site.profiles))
        if done % (BUILD_PAGES * 5) == 0 or done == len(site.profiles):
            log(f"built {done} of {len(site.profiles)} profiles "
                f"({time.perf_counter() - started:.0f} s, load {load()})")
    refresh(client, alias_name(prefix, "works"))
    seconds = time.perf_counter() - started
    return {"profiles": len(site.profiles), "listings": listings,
            "seconds": round(seconds, 1), "cpu_seconds_harness": round(cpu_self() - cpu, 1),
            "listings_per_s": round(listings / seconds, 1), "bulk_requests": requests,
            "load": (load_before, load())}


# --- the search loop -------------------------------------------------------------------------


class SearchLoop(threading.Thread):
    """Searches titles until stopped; latency and papers shown twice, per phase."""

    def __init__(self, config: OpenSearchConfig, titles: list[str], truth: dict[str, int],
                 seed: int = 5):
        super().__init__(name="search-loop", daemon=True)
        self.service = SearchService(build_client(config), config.prefix)
        self.titles = titles
        self.truth = truth
        self.rnd = random.Random(seed)
        self.phase = "crawl"
        self.samples: dict[str, list[float]] = {}
        self.twice: dict[str, list[dict[str, Any]]] = {}
        self.searches_twice: dict[str, int] = {}
        self.errors: list[str] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            if not self.search(self.rnd.choice(self.titles), self.phase):
                self.stopping.wait(1.0)
                continue
            self.stopping.wait(SEARCH_PAUSE)

    def sweep(self, titles: list[str], phase: str) -> None:
        """Each title searched once (the loop stopped): what is left shown twice at the end,
        where the random loop samples only a few titles."""
        for title in titles:
            self.search(title, phase)

    def search(self, title: str, phase: str) -> bool:
        started = time.perf_counter()
        try:
            found = self.service.search(SearchRequest(q=title))
        except Exception as exc:  # counted and reported: a failed search is a figure
            self.errors.append(f"{phase}: {type(exc).__name__}: {exc}"[:300])
            return False
        self.samples.setdefault(phase, []).append(time.perf_counter() - started)
        papers: dict[int, list[str]] = {}
        for hit in found.hits:
            paper = self.truth.get(hit.id)
            if paper is not None:
                papers.setdefault(paper, []).append(hit.id)
        twice = [{"query": title, "paper": paper, "documents": ids}
                 for paper, ids in papers.items() if len(ids) > 1]
        if twice:
            self.twice.setdefault(phase, []).extend(twice)
            self.searches_twice[phase] = self.searches_twice.get(phase, 0) + 1
        return True

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for phase, samples in self.samples.items():
            ordered = sorted(samples)
            twice = self.twice.get(phase, [])
            out[phase] = {"searches": len(ordered),
                          "p50_ms": round(nearest_rank(ordered, 0.5) * 1000, 1),
                          "p95_ms": round(nearest_rank(ordered, 0.95) * 1000, 1),
                          "papers_shown_twice": len({t["paper"] for t in twice}),
                          "searches_showing_a_paper_twice": self.searches_twice.get(phase, 0),
                          "examples": twice[:3]}
        out["errors"] = self.errors[:10]
        return out


# --- the pass, in a child of its own ---------------------------------------------------------


def run_pass(config: OpenSearchConfig, mode: str, work: Path, suffix: str = "") -> dict[str, Any]:
    """One pass (``incremental`` or ``full``) in a child process; its report and usage
    (its files named with ``suffix``)."""
    usage_path = work / f"pass-{mode}{suffix}.rusage.json"
    env = {**os.environ, "OPENSEARCH_URL": config.url, "INDEX_PREFIX": config.prefix,
           "INDEX_SHARDS": str(config.layout.shards),
           "INDEX_REPLICAS": str(config.layout.replicas),
           "BENCH_LAUNCH_TIMEOUT": str(PASS_TIMEOUT),
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "bench.launch", str(usage_path), "--",
               sys.executable, "-m", "bench.scale_pass", *(["--full"] if mode == "full" else [])]
    started, load_before = time.perf_counter(), load()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=PASS_TIMEOUT + 120)
    wall = time.perf_counter() - started
    (work / f"pass-{mode}{suffix}.log").write_text(proc.stdout + proc.stderr, "utf-8")
    usage = json.loads(usage_path.read_text("utf-8"))
    if usage["returncode"] != 0:
        raise RuntimeError(f"the {mode} pass exited {usage['returncode']}: {proc.stderr[-2000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    figures = {"mode": mode, "wall_seconds": round(wall, 1),
               "cpu_seconds": usage["cpu_seconds"],
               "peak_memory_mb": round(usage["maxrss_kb"] / 1024, 1),
               "load": (load_before, load()), "report": report}
    log(f"{mode} pass: {wall:.1f} s, cpu {usage['cpu_seconds']:.1f} s, peak memory "
        f"{figures['peak_memory_mb']:.0f} MB, {report.get('documents')} documents read, "
        f"{report.get('groups_changed')} group(s) changed; load {figures['load']}")
    return figures


# --- the whole run ---------------------------------------------------------------------------


def store_size(client: Any, prefix: str) -> dict[str, Any]:
    """The works index's size on disk, per work (primaries; every copy)."""
    alias = alias_name(prefix, "works")
    refresh(client, alias)
    stats = client.indices.stats(index=alias, metric="store,docs")
    works = int(client.count(index=alias)["count"])
    primaries = sum(e["primaries"]["store"]["size_in_bytes"] for e in stats["indices"].values())
    total = sum(e["total"]["store"]["size_in_bytes"] for e in stats["indices"].values())
    return {"works": works, "primaries_bytes": primaries, "all_copies_bytes": total,
            "bytes_per_work": round(primaries / works, 1) if works else None,
            "all_copies_bytes_per_work": round(total / works, 1) if works else None}


def joined_typos(client: Any, prefix: str, typos: list[tuple[str, int]],
                 truth: dict[str, int]) -> int:
    """How many typo'd listings share a document with another listing of their paper."""
    if not typos:
        return 0
    alias = alias_name(prefix, "works")
    joined = 0
    for first in range(0, len(typos), 500):
        chunk = typos[first:first + 500]
        found = client.search(index=alias, body={
            "size": len(chunk) * 2, "_source": ["work_ids"],
            "query": {"terms": {"work_ids": [wid for wid, _ in chunk]}}})
        for hit in found["hits"]["hits"]:
            ids = hit["_source"].get("work_ids") or [hit["_id"]]
            for wid, paper in chunk:
                if wid in ids and any(truth.get(o) == paper for o in ids if o != wid):
                    joined += 1
    return joined


def settle_marks(client: Any, prefix: str) -> dict[str, Any]:
    """The build taken as resolved without a pass: every mark and hiding cleared in place.
    Each generated paper is one document already (its printings share a work_id), so
    this is the state its crawls' passes would have left, but for the few joins a full
    pass still makes (one at 5,000 works); for builds whose full pass would not end."""
    started = time.perf_counter()
    # Run as a task and polled: waited for in one request, a million documents' update
    # answered with more headers than Python's HTTP client accepts (its limit is 100).
    task = client.update_by_query(
        index=alias_name(prefix, "works"), conflicts="abort", refresh=True,
        slices="auto", wait_for_completion=False,
        body={"query": {"bool": {"should": [{"exists": {"field": "resolve_pending"}},
                                            {"exists": {"field": "hidden_by"}}]}},
              "script": {"lang": "painless",
                         "source": "ctx._source.remove('resolve_pending'); "
                                   "ctx._source.remove('hidden_by')"}})["task"]
    while not (state := client.tasks.get(task_id=task))["completed"]:
        time.sleep(5)
    if state.get("error") or state["response"].get("failures"):
        raise RuntimeError(f"settling the build's marks failed: "
                           f"{state.get('error') or state['response']['failures'][:3]}")
    return {"updated": state["response"]["updated"],
            "seconds": round(time.perf_counter() - started, 1)}


def build(site: Site, base: str, client: Any, config: OpenSearchConfig, work: Path,
          settle: str) -> dict[str, Any]:
    """The build, settled: it stands for crawls that each ended in a pass, so the
    re-crawl's pass sees only its own change."""
    results: dict[str, Any] = {"build": build_index(site, base, client, config, work),
                               "size_after_build": store_size(client, config.prefix)}
    if settle == "pass":
        results["build_pass"] = run_pass(config, "full", work)
    else:
        results["build_settled"] = settle_marks(client, config.prefix)
        log(f"build settled without a pass: {results['build_settled']}")
    return results


def recrawl_day(site: Site, root: Path, base: str, config: OpenSearchConfig, client: Any,
                work: Path, share: float, passes: str, seed: int, suffix: str) -> dict[str, Any]:
    """One day of a site in production: ``share`` of its profiles changed (``seed``) and
    re-crawled, then the passes, with searches running throughout; the day's figures.
    ``suffix`` names the day's logs (the first day's carry none)."""
    recrawl = change_pages(site, share, seed)
    truth = truth_of(site)
    for person in recrawl.profiles:
        path = root / person.path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(person, site.works).encode("utf-8"))
    url_file = write_url_list(work / f"recrawl-urls{suffix}.txt", base,
                              [p.path for p in recrawl.profiles])
    touched = [site.works[paper].title for _, paper in recrawl.typos]
    others = [site.works[random.Random(seed).randrange(len(site.works))].title
              for _ in range(max(50, len(touched)))]
    shutil.rmtree(work / "state", ignore_errors=True)  # a run before: pages seen
    loop = SearchLoop(config, touched + others, truth)
    loop.start()
    figures: dict[str, Any] = {}
    try:
        crawl = run_crawl(f"recrawl{suffix}", "profiles", url_file, work, {
            "INDEX_ENABLED": "true", "ARXIV_ENABLED": "false", "WORKS_RESOLVE": "false",
            "OPENSEARCH_URL": config.url, "INDEX_PREFIX": config.prefix,
            "INDEX_SHARDS": str(config.layout.shards),
            "INDEX_REPLICAS": str(config.layout.replicas),
            "STATE_DIR": str(work / "state"),
            "INDEX_DEADLETTER_PATH": str(work / f"recrawl{suffix}-deadletter.jsonl")},
            timeout=600 + len(recrawl.profiles) * 2)
        figures["recrawl"] = {
            "profiles": len(recrawl.profiles), "typo_listings": len(recrawl.typos),
            "new_papers": recrawl.new_works, "seconds": crawl.seconds,
            "cpu_seconds": crawl.cpu_seconds, "peak_mb": crawl.peak_mb,
            "pages_parsed": crawl.stat("profiles/parsed"),
            "dead_lettered": crawl.stat("index/dead_lettered"), "load": crawl.load}
        modes = {"both": ["incremental", "full"], "incremental": ["incremental"],
                 "full": ["full"], "none": []}
        figures["passes"] = {}
        for mode in modes[passes]:
            loop.phase = f"{mode} pass"
            figures["passes"][mode] = run_pass(config, mode, work, suffix)
    finally:
        loop.stopping.set()
        loop.join(30)
    loop.sweep(touched, "after, every re-crawled paper")
    figures["search"] = loop.figures()
    figures["typos_joined"] = joined_typos(client, config.prefix, recrawl.typos, truth)
    if "full" in figures["passes"] and "incremental" in figures["passes"]:
        figures["same_clusters"] = figures["passes"]["full"]["report"]["groups_changed"] == 0
    return figures


def run_scale(config: OpenSearchConfig, works: int, share: float, passes: str, work: Path,
              seed: int = 8, node_pid: int | None = None, settle: str = "pass",
              stage: str = "all", days: int = 1) -> dict[str, Any]:
    """Build, re-crawl, resolve and search under ``config.prefix``; the figures.
    ``days``: re-crawls, each of another ``share`` of the profiles and followed by the
    passes, as a node serving a daily crawl sees them; each day's figures under
    ``days``, the last day's at the top.
    ``settle``: how the build is brought to a resolved state before the re-crawl, a full
    ``pass`` or its ``marks`` cleared (``settle_marks``). ``stage``: ``all``; ``build``, the
    build alone (settled, left for a copy of the cluster's data); ``recrawl``, the rest on
    indices that hold that build already (researcher ids are the pages' host and path,
    whatever port serves them)."""
    client = build_client(replace(config, timeout=max(config.timeout, 120)))
    results: dict[str, Any] = {"works_asked": works, "recrawl_share": share,
                               "shards": config.layout.shards,
                               "replicas": config.layout.replicas}
    node_cpu = process_cpu_seconds(node_pid) if node_pid else None
    started = time.perf_counter()
    site = build_site(profiles_for(works), seed)
    results["site"] = {"profiles": len(site.profiles), "papers": len(site.works),
                       "seconds": round(time.perf_counter() - started, 1)}
    log(f"site: {len(site.profiles)} profiles, {len(site.works)} papers "
        f"({results['site']['seconds']} s, load {load()})")
    root = work / "site"
    root.mkdir(parents=True, exist_ok=True)
    with StaticServer(root) as server:
        if stage != "recrawl":
            results.update(build(site, server.url, client, config, work, settle))
            if node_pid:
                results["build"]["cpu_seconds_opensearch"] = round(
                    process_cpu_seconds(node_pid) - (node_cpu or 0), 1)
            if stage == "build":
                return results
        for day in range(1, days + 1):
            figures = recrawl_day(site, root, server.url, config, client, work, share, passes,
                                  seed + day, "" if day == 1 else f"-day{day}")
            if days > 1:
                results.setdefault("days", []).append(figures)
                log(f"day {day} of {days}: {summary_of_day(figures)}")
        results.update(figures)  # the last day's figures (the only day's, by default)
    results["size"] = store_size(client, config.prefix)
    if node_pid:
        results["cpu_seconds_opensearch_total"] = round(
            process_cpu_seconds(node_pid) - (node_cpu or 0), 1)
    results["seconds"] = round(time.perf_counter() - started, 1)
    return results


def summary(r: dict[str, Any]) -> str:
    """The table printed at the end."""
    built = (f"build {r['build']['seconds']} s ({r['build']['listings_per_s']} listings/s, "
             f"load {r['build']['load']})" if "build" in r else "built before (--built)")
    lines = [f"works: {r['size']['works']:,} ({r['site']['profiles']:,} profiles, "
             f"{r['shards']} shard(s), {r['replicas']} replica(s)); {built}",
             f"index on disk: {r['size']['bytes_per_work']} bytes per work (primaries), "
             f"{r['size']['all_copies_bytes_per_work']} with every copy"]
    if "build_pass" in r:
        lines.append(_pass_line("settling the build", r["build_pass"]))
    for number, day in enumerate(r.get("days") or [r], start=1):
        if "days" in r:
            lines.append(f"day {number}:")
        lines.append(summary_of_day(day))
    return "\n".join(lines)


def summary_of_day(r: dict[str, Any]) -> str:
    """One re-crawl's lines: the crawl, its passes, the searches beside them."""
    lines = [f"re-crawl: {r['recrawl']['profiles']} profiles in {r['recrawl']['seconds']} s "
             f"({r['recrawl']['typo_listings']} typo'd listings, {r['recrawl']['new_papers']} "
             f"new papers); typo'd listings joined by the passes: {r['typos_joined']}"]
    lines += [_pass_line(mode, p) for mode, p in r["passes"].items()]
    if "same_clusters" in r:
        lines.append(f"a full pass after the incremental one changed nothing: {r['same_clusters']}")
    for phase, s in r["search"].items():
        if phase != "errors":
            lines.append(f"search during the {phase}: {s['searches']} searches, p50 "
                         f"{s['p50_ms']} ms, p95 {s['p95_ms']} ms, papers shown twice "
                         f"{s['papers_shown_twice']}")
    if r["search"]["errors"]:
        lines.append(f"search errors: {r['search']['errors']}")
    return "\n".join(lines)


def _pass_line(mode: str, p: dict[str, Any]) -> str:
    return (f"{mode} pass: {p['wall_seconds']} s, cpu {p['cpu_seconds']} s, peak memory "
            f"{p['peak_memory_mb']} MB, {p['report'].get('documents')} documents read, "
            f"{p['report'].get('groups_changed')} group(s) changed; load {p['load']}")


def scale_prefix(cluster: OpenSearchConfig) -> OpenSearchConfig:
    return replace(cluster, prefix=f"{cluster.prefix}{PREFIX}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale",
        description="Build a synthetic works index through the bulk path, re-crawl a share "
                    "of its profiles, run the resolution pass (incremental and full), and "
                    "measure pass time and memory, search latency and papers shown twice "
                    "during the re-crawl, and index size per work.")
    parser.add_argument("--works", type=int, default=1_000_000)
    parser.add_argument("--recrawl", type=float, default=0.01,
                        help="share of the profiles the re-crawl fetches (default 0.01)")
    parser.add_argument("--passes", choices=("both", "incremental", "full", "none"),
                        default="both",
                        help="which passes to run after the re-crawl: the incremental one, "
                             "the full one, both (incremental then full), or none (with "
                             "--keep: the re-crawled index left for a pass run by hand, "
                             "`python -m bench.scale_pass --dry-run` under a profiler)")
    parser.add_argument("--days", type=int, default=1,
                        help="re-crawls in a row, each of another --recrawl share followed by "
                             "the passes, as a node serving a daily crawl sees them (default 1)")
    parser.add_argument("--shards", type=int, default=None,
                        help="primary shards of the works and researchers indices "
                             "(default: INDEX_SHARDS with --use-env, else 1)")
    parser.add_argument("--replicas", type=int, default=None)
    parser.add_argument("--settle", choices=("pass", "marks"), default="pass",
                        help="bring the build to a resolved state with a full pass (default), "
                             "or by clearing its marks in place, for builds whose full pass "
                             "would not end (either way the build skips judging new works)")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the pages, logs and usage files here (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="leave the indices in the cluster")
    stage = parser.add_mutually_exclusive_group()
    stage.add_argument("--build-only", action="store_true",
                       help="build and settle, then stop and keep the indices (a copy of the "
                            "cluster's data then serves several --built runs)")
    stage.add_argument("--built", action="store_true",
                       help="the indices hold a --build-only build of the same --works "
                            "and --seed: re-crawl, resolve and search on them")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error("--days: one day at least")
    stage_name = "build" if args.build_only else "recrawl" if args.built else "all"
    work = args.workdir or Path(tempfile.mkdtemp(prefix="scholar-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    try:
        with opensearch_process(args.use_env) as (cluster, node_pid):
            layout = IndexLayout(
                shards=cluster.layout.shards if args.shards is None else args.shards,
                replicas=cluster.layout.replicas if args.replicas is None else args.replicas)
            config = replace(scale_prefix(cluster), layout=layout)
            if not args.built:
                delete_indices(config)
            results["engine"] = describe(config)
            log(f"OpenSearch: {results['engine']} at {config.safe_url} under {config.prefix}")
            try:
                results.update(run_scale(config, args.works, args.recrawl, args.passes, work,
                                         args.seed, node_pid, args.settle, stage_name,
                                         args.days))
            finally:
                if not (args.keep or args.build_only):
                    delete_indices(config)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    results.update(machine=machine(), date=datetime.now(UTC).isoformat(timespec="seconds"))
    args.out.write_text(json.dumps(results, indent=2, default=_plain) + "\n", "utf-8")
    if args.build_only:
        print(f"built {results['size_after_build']['works']:,} works; written to {args.out}")
        return 0
    print(summary(results))
    for problem in checks(results):
        print(f"CHECK FAILED: {problem}")
    print(f"written to {args.out}")
    return 1 if checks(results) else 0


def checks(r: dict[str, Any]) -> list[str]:
    """What the acceptance asks of a run: no paper twice, the same clusters, no errors."""
    problems = []
    for number, day in enumerate(r.get("days") or [r], start=1):
        when = f" (day {number})" if "days" in r else ""
        for phase, s in day["search"].items():
            if phase != "errors" and s["papers_shown_twice"]:
                problems.append(f"{s['papers_shown_twice']} paper(s) shown twice during the "
                                f"{phase}{when}")
        if day.get("same_clusters") is False:
            problems.append(f"the full pass changed what the incremental pass left{when}")
        if day["search"]["errors"]:
            problems.append(f"{len(day['search']['errors'])} search(es) failed{when}")
        if day["recrawl"]["dead_lettered"]:
            problems.append(f"the re-crawl dead-lettered {day['recrawl']['dead_lettered']:.0f}"
                            f"{when}")
    return problems


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


if __name__ == "__main__":
    sys.exit(main())
