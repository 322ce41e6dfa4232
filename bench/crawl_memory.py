"""Peak memory of the pipeline crawl at two sizes: ``python -m bench.crawl_memory``.

``make bench``'s ``rss_growth_mb_1k_to_10k`` without the rest of ``make bench``: the
same site (``bench.generate``, seed 8), the same ``scrapy crawl`` through
``bench.launch`` (the crawl and its children's peak proportional set size), into a
local node (or with ``--use-env`` the cluster ``OPENSEARCH_URL`` names), first on the
first ``--small`` profiles, then on all of them. Unlike ``make bench``, arXiv
enrichment is off (no stand-in, no cache to warm), so the crawl's process holds no
arXiv state: the figures are the parse, the index stage and the index writer's child.
Prints each crawl's peak, its largest process and the writer child's CPU a page.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from bench.cluster import add_cluster_option, opensearch_process
from bench.generate import build_site, write_site, write_url_list
from bench.run import run_crawl, target
from bench.serve import StaticServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crawl_memory", description=__doc__)
    parser.add_argument("--profiles", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=8)
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-crawl-memory-"))
    try:
        root = work / "site"
        summary = write_site(build_site(args.profiles, args.seed), root,
                             "http://127.0.0.1:8000", args.seed)
        with opensearch_process(args.use_env) as (cluster, pid), StaticServer(root) as server:
            for label, count in (("small", args.small), ("large", args.profiles)):
                urls = write_url_list(work / f"urls-{label}.txt", server.url,
                                      summary.paths[:count])
                with target("node", cluster, pid, label) as index:
                    crawl = run_crawl(label, "profiles", urls, work, {
                        "STATE_DIR": str(work / f"state-{label}"),
                        "INDEX_DEADLETTER_PATH": str(work / f"deadletter-{label}.jsonl"),
                        "INDEX_ENABLED": "true", "OPENSEARCH_URL": index.config.url,
                        "INDEX_PREFIX": index.config.prefix, "WORKS_RESOLVE": "false",
                        "ARXIV_ENABLED": "false"}, 900 + count * 0.5)
                pages = crawl.stat("profiles/parsed") or 1
                writer_ms = crawl.stat("cpu/stage_seconds/index_writer") * 1000 / pages
                print(f"{label}_profiles {count}", flush=True)
                print(f"{label}_peak_mb {crawl.peak_mb:.1f}", flush=True)
                print(f"{label}_largest_process_mb {crawl.maxrss_mb:.1f}", flush=True)
                print(f"{label}_writer_cpu_ms_per_page {writer_ms:.2f}", flush=True)
                print(f"{label}_seconds {crawl.seconds:.1f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
