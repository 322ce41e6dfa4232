"""The crawl side's CPU per page, alone and repeatably: no OpenSearch, a few minutes.

    python -m bench.crawl_cpu [--profiles 1500] [--repeats 3] [--workdir DIR] [--dump OUT] [--sink]
                              [--set NAME=VALUE ...]

The ``warm_noindex`` crawl of ``make bench`` (``bench.run``) on the first ``--profiles``
pages of its site (seed 8): parsing and enrichment from a warm arXiv cache, indexing
off. The site and the cache are made once in ``--workdir`` (a cold crawl against the
arXiv stand-in fills the cache) and reused by later runs, so runs compare the code,
not their inputs. Each repeat is a raw crawl (Scrapy fetching, the ``fetch`` figure)
then the warm crawl; each prints ``bench.run.cpu_ms_per_page``'s stages, and the
median of each stage is printed at the end. ``--sink`` indexes into a fresh
``bench.sink`` instead (``make bench``'s ``pipeline_sink`` crawl): the index writer's
child is then a stage too, and each repeat prints its pages/s.

``--dump OUT`` crawls once more, one page at a time, with a feed export and writes every
record (researcher and listings, every field, enrichment included) sorted by page and
position, as JSON lines: two dumps from two versions of the code compare with ``cmp``
(the pages are served on one fixed port, ``--port``, since researcher ids are derived
from URLs; one at a time, since a work listed on several pages is verified against
the evidence of the pages read before it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.arxiv import IndexedArxivStandIn
from bench.generate import build_site, load_entries, write_site, write_url_list
from bench.run import STAGES, Crawl, cpu_ms_per_page, log, run_crawl
from bench.serve import StaticServer
from bench.sink import SinkServer

COLUMNS = (*STAGES, "other_threads", "total")
# The dump's pages are served from one port: a researcher's id is derived from its URL.
DUMP_PORT = 8765


def _site(work: Path, profiles: int, seed: int) -> list[str]:
    """The site's page paths (written on first use)."""
    root = work / "site"
    base = "http://127.0.0.1:8000"
    if not (root / "urls.txt").exists():
        log(f"generating {profiles} profiles in {root}")
        write_site(build_site(profiles, seed), root, base, seed)
    paths = [url.removeprefix(base) for url in (root / "urls.txt").read_text("utf-8").split()]
    if len(paths) < profiles:
        raise SystemExit(f"{root} holds {len(paths)} profiles; use another --workdir")
    return paths[:profiles]


def _crawl(label: str, spider: str, work: Path, paths: list[str], settings: dict[str, str],
           port: int = 0) -> Crawl:
    with StaticServer(work / "site", port=port) as server:
        urls = write_url_list(work / f"urls-{label}.txt", server.url, paths)
        state = work / f"state-{label}"
        expect = ("raw/pages", len(paths)) if spider == "raw" else None
        return run_crawl(label, spider, urls, work, {
            "STATE_DIR": str(state), "INDEX_ENABLED": "false", **settings},
            900 + len(paths), expect)


def _sink_settings(stack: contextlib.ExitStack) -> dict[str, str]:
    """Indexing on, into a fresh ``bench.sink`` (closed with ``stack``), as bench.run's
    pipeline_sink crawl: the index writer child's CPU is then a stage of its own."""
    sink = stack.enter_context(SinkServer())
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": sink.url, "INDEX_PREFIX": "bench_",
            "WORKS_RESOLVE": "false"}


def _dump(crawl_log: Path, out: Path) -> int:
    """The feed's records in a stable order (pages come in any order); how many."""
    records: list[dict[str, Any]] = [json.loads(line) for line in
                                     crawl_log.read_text("utf-8").splitlines() if line]

    def key(record: dict[str, Any]) -> tuple[str, int]:
        if record["kind"] == "researcher":
            return record["id"], 0
        return record["researcher_id"], record["position"]

    records.sort(key=key)
    out.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                           for r in records), "utf-8")
    return len(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crawl_cpu", description=__doc__)
    parser.add_argument("--profiles", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/scholar-crawl-cpu"))
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a Scrapy setting for the warm crawls (PARSE_PROCESSES=0, ...)")
    parser.add_argument("--sink", action="store_true",
                        help="index into a fresh bench.sink (the pipeline_sink crawl of make "
                             "bench) instead of indexing off")
    parser.add_argument("--dump", type=Path, default=None,
                        help="write the crawl's records here, sorted, and measure nothing")
    parser.add_argument("--port", type=int, default=DUMP_PORT,
                        help=f"the port the dump's pages are served on (default {DUMP_PORT})")
    args = parser.parse_args(argv)
    work = args.workdir
    extra = dict(item.split("=", 1) for item in args.set)
    work.mkdir(parents=True, exist_ok=True)
    paths = _site(work, args.profiles, args.seed)
    with IndexedArxivStandIn(load_entries(work / "site")) as arxiv_api:
        cache = work / "arxiv-cache"
        arxiv = {"ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv_api.api_url,
                 "ARXIV_DELAY_SECONDS": "0", "ARXIV_CACHE_DIR": str(cache)}
        if not cache.exists():
            log("cold crawl: filling the arXiv cache")
            _crawl("cold", "profiles", work, paths, arxiv)
        arxiv_api.reset()
        if args.dump is not None:
            feed = work / "feed.jsonl"
            # One page at a time: a work listed on several pages is verified against the
            # evidence of the pages read before it, so the records depend on their order.
            _crawl("dump", "profiles", work, paths, {**arxiv, **extra, "CONCURRENT_REQUESTS": "1",
                                                     "FEEDS": json.dumps(
                {str(feed): {"format": "jsonlines", "overwrite": True}})}, args.port)
            log(f"{_dump(feed, args.dump)} records written to {args.dump}")
            return 0
        rows = []
        for attempt in range(1, args.repeats + 1):
            raw = _crawl(f"raw-{attempt}", "raw", work, paths, {
                "SPIDER_MODULES": "crawler.spiders,bench.spiders", "ARXIV_ENABLED": "false"})
            with contextlib.ExitStack() as stack:
                index = _sink_settings(stack) if args.sink else {}
                warm = _crawl(f"warm-{attempt}", "profiles", work, paths,
                              {**arxiv, **index, **extra})
            if warm.stat("profiles/parsed") != len(paths) or arxiv_api.request_count:
                raise SystemExit(f"warm crawl: {warm.stat('profiles/parsed')} pages parsed, "
                                 f"{arxiv_api.request_count} arXiv requests")
            fetch = raw.stat("cpu/main_thread_seconds") * 1000 / len(paths)
            rows.append(cpu_ms_per_page(warm, fetch))
            print(f"{attempt}: " + "  ".join(f"{c} {rows[-1][c]:.3f}" for c in COLUMNS)
                  + f"  pages/s {len(paths) / warm.seconds:.1f}", flush=True)
    print(f"median of {len(rows)}, {len(paths)} profiles: " + "  ".join(
        f"{c} {statistics.median(r[c] for r in rows):.3f}" for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
