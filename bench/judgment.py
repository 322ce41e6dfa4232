"""What the index writer's judgment of new works costs: ``python -m bench.judgment``.

Writes the listings of a bench site (``bench.generate.build_site``) through
``BulkWriter`` with the judgment on (``HIDE_UNRESOLVED_WORKS``), as a first crawl does,
in batches like the crawl's, into a local OpenSearch node (or with ``--use-env`` the
cluster ``OPENSEARCH_URL`` names), and prints the writer's CPU seconds (this process's:
the writer runs here), the wall time and the work documents written and hidden. With
``--no-judgment`` the same without it: the difference is the judgment.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.cluster import add_cluster_option, delete_indices, describe, opensearch_process
from bench.generate import build_site
from scholarindex.core.items import WorkItem
from scholarindex.core.resolution.listing import listing_work_id
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.unresolved import HIDDEN

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.judgment", description=__doc__)
    parser.add_argument("--profiles", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--no-judgment", action="store_true")
    add_cluster_option(parser)
    args = parser.parse_args(argv)
    items = listings(args.profiles, args.seed)
    with opensearch_process(args.use_env) as (config, _), \
            tempfile.TemporaryDirectory(prefix="bench-judgment-") as tmp:
        config = replace(config, prefix=f"{config.prefix}benchjudge_")
        print(describe(config))
        client = build_client(config)
        ensure_aliases(client, config.prefix, config.layout)
        writer = BulkWriter(client, config.prefix, DeadLetterFile(Path(tmp) / "dead.jsonl"),
                            RETRY, layout=config.layout, hide_unresolved=not args.no_judgment)
        cpu, began = time.process_time(), time.monotonic()
        for start in range(0, len(items), args.batch_size):
            writer.write([change_from_item(item, SEEN_AT)
                          for item in items[start:start + args.batch_size]])
        cpu, wall = time.process_time() - cpu, time.monotonic() - began
        works = alias_name(config.prefix, "works")
        client.indices.refresh(index=works)
        written = client.count(index=works)["count"]
        hidden = client.count(index=works, body={"query": {"exists": {"field": HIDDEN}}})
        delete_indices(config)
    print(f"listings {len(items)}")
    print(f"works {written}")
    print(f"hidden {hidden['count']}")
    print(f"writer_cpu_s {cpu:.2f}")
    print(f"writer_cpu_ms_per_listing {1000 * cpu / max(1, len(items)):.3f}")
    print(f"wall_s {wall:.1f}")
    print(f"load_average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
