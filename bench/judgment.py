"""What the index writer's judgment of new works costs: ``python -m bench.judgment``.

Writes the listings of a bench site (``bench.generate.build_site``) through
``BulkWriter`` with the judgment on (``HIDE_UNRESOLVED_WORKS``), as a first crawl does,
in batches like the crawl's, into a local OpenSearch node (or with ``--use-env`` the
cluster ``OPENSEARCH_URL`` names), and prints the writer's CPU seconds (this process's:
the writer runs here), the wall time and the work documents written and hidden. With
``--no-judgment`` the same without it: the difference is the judgment.

``--memory-every N`` prints, every ``N`` profiles' listings, this process's resident
size (after ``malloc_trim``, as the writer's child after each batch), the entries of the
product's memo caches and the documents ``Neighbours`` keeps, and at the end each
cache's hits and misses (``--tracemalloc`` adds the lines that hold the most memory).
The listings themselves are made before the first figure and do not change.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict, replace
from pathlib import Path
from types import FrameType
from typing import Any

from bench.cluster import add_cluster_option, delete_indices, describe, opensearch_process
from bench.generate import build_site
from bench.run import process_cpu_seconds
from scholarindex.core.items import WorkItem
from scholarindex.core.resolution.listing import listing_work_id
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.scan import scan
from scholarindex.indexing.unresolved import HIDDEN
from scholarindex.runtime.heapwatch import pymalloc
from scholarindex.runtime.memory import release_free_memory

SEEN_AT = "2026-01-01T00:00:00.000Z"
RETRY = RetryPolicy(attempts=4, initial_wait=0.05, max_wait=0.3, jitter=0.05)


def listings(profiles: int, seed: int) -> list[dict[str, Any]]:
    """Every listing of the site's profiles, as the crawl's work items."""
    site = build_site(profiles, seed=seed)
    items = []
    for person in site.profiles:
        rid = f"p{person.index}"
        for entry in person.listings:
            work = site.works[entry.work]
            items.append(asdict(WorkItem(
                work_id=listing_work_id(entry.title, rid, work.year, work.venue),
                title=entry.title, researcher_id=rid, researcher_name=person.name,
                year=work.year, venue=work.venue, authors=list(entry.authors or []))))
    return items


def listing_ends(profiles: int, seed: int) -> list[int]:
    """How many listings the first 1, 2, ... profiles of the site hold."""
    ends, total = [], 0
    for person in build_site(profiles, seed=seed).profiles:
        total += len(person.listings)
        ends.append(total)
    return ends


def memo_caches() -> dict[str, Any]:
    """Every memo cache (``functools.lru_cache`` or ``cache``) of the product's modules
    loaded now, by ``module.function``."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("scholarindex") or module is None:
            continue
        for attr, value in vars(module).items():
            if callable(getattr(value, "cache_info", None)) \
                    and getattr(value, "__module__", None) == name:
                found[f"{name.removeprefix('scholarindex.')}.{attr}"] = value
    return found


def resident_mb() -> tuple[float, float]:
    """This process's resident size and its peak (VmRSS, VmHWM), MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                  .splitlines() if ":" in line)
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def memory_line(profiles: int, writer: BulkWriter, cpu: float) -> str:
    rss, peak = resident_mb()
    entries = sum(f.cache_info().currsize for f in memo_caches().values())
    arenas = pymalloc()
    return (f"memory profiles {profiles} rss_mb {rss:.0f} peak_mb {peak:.0f} "
            f"pymalloc_live_mb {arenas.get('live_mb', 0):.0f} "
            f"pymalloc_free_mb {arenas.get('free_mb', 0):.0f} "
            f"pymalloc_arenas {arenas.get('arenas', 0):.0f} "
            f"cache_entries {entries} neighbours {len(writer._neighbours._kept)} "
            f"neighbours_hits {writer._neighbours.hits} "
            f"neighbours_misses {writer._neighbours.misses} "
            f"cpu_s {cpu:.1f}")


def cache_table() -> list[str]:
    rows = []
    for name, function in sorted(memo_caches().items(),
                                 key=lambda kv: -kv[1].cache_info().currsize):
        info = function.cache_info()
        asked = info.hits + info.misses
        if not asked:
            continue
        rows.append(f"cache {name} size {info.currsize}/{info.maxsize} hits {info.hits} "
                    f"misses {info.misses} hit_rate {info.hits / asked:.3f}")
    return rows


def time_requests(client: Any) -> dict[str, list[float]]:
    """Count the client's requests by endpoint (``_mget``, ``_msearch``, ...) and the
    product's function that asked, with the seconds the caller waited on each (the
    answer's parsing included): "endpoint function" -> [requests, seconds]."""
    spent: dict[str, list[float]] = {}
    perform = client.transport.perform_request

    def timed(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return perform(method, url, *args, **kwargs)
        finally:
            kind = next((part for part in reversed(url.split("?")[0].split("/"))
                         if part.startswith("_")), method)
            entry = spent.setdefault(f"{kind} {_asker()}", [0, 0.0])
            entry[0] += 1
            entry[1] += time.monotonic() - began

    client.transport.perform_request = timed
    return spent


def _asker() -> str:
    """The product's function that made the request being timed (past the helpers)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if ("/scholarindex/" in code.co_filename and code.co_name not in _HELPERS
                and not code.co_filename.endswith(("client.py", "scan.py"))):
            return code.co_name
        frame = frame.f_back
    return "-"


_HELPERS = {"_mget", "_retry"}


def dump_lines(client: Any, works: str) -> list[str]:
    """Each work document as a line: id, its work_ids and hidden_by (or -), sorted."""
    body = {"query": {"match_all": {}}, "_source": ["work_ids", HIDDEN]}
    return sorted(f"{hit['_id']}\t{','.join(sorted(hit['_source'].get('work_ids') or []))}"
                  f"\t{hit['_source'].get(HIDDEN) or '-'}\n" for hit in scan(client, works, body))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.judgment", description=__doc__)
    parser.add_argument("--profiles", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--no-judgment", action="store_true")
    parser.add_argument("--stop-at", type=int, default=0, metavar="PROFILES",
                        help="write only the first PROFILES profiles' listings of the site")
    parser.add_argument("--memory-every", type=int, default=0, metavar="PROFILES",
                        help="print the resident size and caches every PROFILES profiles")
    parser.add_argument("--tracemalloc", type=int, default=0, metavar="LINES",
                        help="with --memory-every: also the LINES lines holding the most")
    parser.add_argument("--gc-as-child", action="store_true",
                        help="collect garbage as the writer's child does (GC_THRESHOLDS, "
                             "gc.freeze() once started)")
    parser.add_argument("--collect", action="store_true",
                        help="a full garbage collection after each batch")
    parser.add_argument("--dump", type=Path, metavar="FILE",
                        help="write each work document's id, work_ids and hidden_by, sorted: "
                             "two runs' files are the same when they wrote the same index")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    items = listings(args.profiles, args.seed)
    if args.stop_at:  # the first profiles of the larger site, as a longer crawl starts
        items = items[:listing_ends(args.profiles, args.seed)[args.stop_at - 1]]
    # Where each profile's listings end, to report memory at whole numbers of profiles.
    ends = listing_ends(args.profiles, args.seed) if args.memory_every else []
    if args.memory_every:  # the writer's child starts with empty caches
        for function in memo_caches().values():
            function.cache_clear()
    if args.tracemalloc:
        tracemalloc.start()
    with opensearch_process(args.use_env) as (config, node), \
            tempfile.TemporaryDirectory(prefix="bench-judgment-") as tmp:
        config = replace(config, prefix=f"{config.prefix}benchjudge_")
        print(describe(config))
        client = build_client(config)
        ensure_aliases(client, config.prefix, config.layout)
        writer = BulkWriter(client, config.prefix, DeadLetterFile(Path(tmp) / "dead.jsonl"),
                            RETRY, layout=config.layout, hide_unresolved=not args.no_judgment)
        spent = time_requests(client)
        if args.gc_as_child:
            gc.set_threshold(50_000, 20, 10)
            gc.freeze()
        cpu, began = time.process_time(), time.monotonic()
        node_cpu = process_cpu_seconds(node) if node else 0.0
        marks = [(ends[p - 1], p) for p in range(args.memory_every,
                                                 (args.stop_at or args.profiles) + 1,
                                                 args.memory_every)] if ends else []
        if marks:
            release_free_memory()
            print(memory_line(0, writer, 0.0), flush=True)
        for start in range(0, len(items), args.batch_size):
            writer.write([change_from_item(item, SEEN_AT)
                          for item in items[start:start + args.batch_size]])
            if args.collect:
                gc.collect()
            if marks:
                release_free_memory()  # as the writer's child does after each batch
            while marks and marks[0][0] <= start + args.batch_size:
                print(memory_line(marks.pop(0)[1], writer, time.process_time() - cpu),
                      flush=True)
        cpu, wall = time.process_time() - cpu, time.monotonic() - began
        node_cpu = process_cpu_seconds(node) - node_cpu if node else 0.0
        waited = {kind: list(entry) for kind, entry in spent.items()}
        works = alias_name(config.prefix, "works")
        client.indices.refresh(index=works)
        written = client.count(index=works)["count"]
        hidden = client.count(index=works, body={"query": {"exists": {"field": HIDDEN}}})
        if args.dump:
            args.dump.write_text("".join(dump_lines(client, works)))
        delete_indices(config)
    print(f"listings {len(items)}")
    print(f"works {written}")
    print(f"hidden {hidden['count']}")
    print(f"writer_cpu_s {cpu:.2f}")
    print(f"writer_cpu_ms_per_listing {1000 * cpu / max(1, len(items)):.3f}")
    print(f"wall_s {wall:.1f}")
    print(f"listings_per_s {len(items) / wall:.1f}")
    if node_cpu:
        print(f"node_cpu_s {node_cpu:.1f}")
    print(f"load_average {os.getloadavg()[0]:.1f}")
    for kind, (count, seconds) in sorted(waited.items(), key=lambda kv: -kv[1][1]):
        print(f"requests {kind} {count:.0f} waited_s {seconds:.1f}")
    if args.memory_every:
        print("\n".join(cache_table()))
    if args.tracemalloc:
        for stat in tracemalloc.take_snapshot().statistics("lineno")[:args.tracemalloc]:
            print(f"traced {stat.size / 2**20:.1f} MB {stat.count} blocks {stat.traceback}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
