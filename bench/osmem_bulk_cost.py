"""What one bulk request costs osmem-server, by its size and the index's:
``python -m bench.osmem_bulk_cost``.

Fills one works index (the product's mapping) with synthetic documents, 1,000 a request,
and at each size in ``--sizes`` times bulk requests that overwrite 50, 200 and 1,000
documents already indexed, twice each, then one that creates 200; at the largest size,
the same overwrites with ``refresh_interval`` at ``-1`` and ``30s``. Prints one line a
request. Used to tell the stand-in's limits from the crawl's request pattern
(docs/distributed.md).
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.indices import ensure_aliases

_RNG = random.Random(1)
_WORDS = ["".join(_RNG.choice(string.ascii_lowercase) for _ in range(_RNG.randint(3, 10)))
          for _ in range(5000)]


def _text(n: int) -> str:
    return " ".join(_RNG.choice(_WORDS) for _ in range(n))


def _doc(i: int, version: int) -> dict[str, Any]:
    return {"work_id": f"w{i}", "title": _text(8), "abstract": _text(120), "year": 2020,
            "authors": [_text(2), _text(2)], "profile_count": 1 + version,
            "listings": [{"work_id": f"w{i}", "title": _text(8), "researcher_name": _text(2),
                          "position": version}]}


def bulk(client: OpenSearch, index: str, ids: list[int], op: str, version: int = 0) -> float:
    """Seconds one bulk request of ``op`` (create/index) for these documents took."""
    lines = []
    for i in ids:
        lines += [json.dumps({op: {"_index": index, "_id": f"w{i}"}}),
                  json.dumps(_doc(i, version))]
    started = time.monotonic()
    answer = client.bulk(body="\n".join(lines) + "\n", request_timeout=600)
    took = time.monotonic() - started
    if answer.get("errors"):
        raise RuntimeError(f"bulk refused: {str(answer)[:300]}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4000, 8000, 16000])
    args = parser.parse_args(argv)
    from osmem_server import OsmemServer  # only the local run needs it

    with OsmemServer.start() as server, server.clone() as clone:
        client = OpenSearch(hosts=[clone.url], timeout=600)
        ensure_aliases(client, "probe_")
        index, held = "probe_works", 0

        def overwrites(label: str) -> None:
            for size in (50, 200, 1000, 50, 200, 1000):
                took = bulk(client, index, _RNG.sample(range(held), size), "index", 1)
                print(f"{held:6} documents{label}: overwrite {size:5}: {took:6.2f} s",
                      flush=True)

        for target in args.sizes:
            while held < target:
                bulk(client, index, list(range(held, held + 1000)), "create")
                held += 1000
            overwrites("")
            took = bulk(client, index, list(range(held, held + 200)), "create")
            held += 200
            print(f"{held:6} documents: create 200: {took:6.2f} s", flush=True)
        real = next(iter(client.indices.get_alias(name=index)))
        for interval in ("-1", "30s"):
            client.indices.put_settings(index=real,
                                        body={"index": {"refresh_interval": interval}})
            overwrites(f" (refresh_interval {interval})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
