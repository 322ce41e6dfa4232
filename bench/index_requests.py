"""What the index spends its time on, per request type: ``python -m bench.index_requests``.

One single-process crawl of the bench site (``bench.generate``) with arXiv enrichment
(the stand-in) into a local OpenSearch node, as the soak's reference crawl makes it, but
through a proxy that times every request (``tests/support/faultproxy.py``, no fault).
Prints, per request type (bulk, mget, search/scroll, refresh, other): how many, the
seconds the server took in all, mean, 95th percentile and longest; the same for each
fifth of the crawl (by when the request was sent), to show what grows as the index
fills; for the bulks, the documents they wrote and how many overwrote one already
indexed (``index`` with ``if_seq_no``) rather than created one; and the server's
resident memory and CPU seconds at the end. Writes every figure as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.arxiv import IndexedArxivStandIn
from bench.chaos import deployment, wait_all
from bench.generate import load_entries
from scholarindex.settings import OPENSEARCH_TIMEOUT
from tests.support.faultproxy import FaultProxy

_KINDS = ("bulk", "mget", "search", "refresh", "other")


def request_kind(line: str) -> str:
    """``"POST /_bulk"`` -> ``"bulk"``, and so on (``_KINDS``)."""
    path = line.split(" ", 1)[-1].split("?", 1)[0]
    for kind, marker in (("bulk", "/_bulk"), ("mget", "/_mget"), ("search", "/_search"),
                         ("refresh", "/_refresh")):
        if marker in path:
            return kind
    return "other"


def bulk_actions(request: bytes) -> dict[str, int] | None:
    """A bulk request's actions by kind (``create``/``index``/``delete``), or None for
    other requests. Bodies may be gzipped (``scholarindex.indexing.client``)."""
    head, _, body = request.partition(b"\r\n\r\n")
    if b"/_bulk" not in head.split(b"\r\n", 1)[0]:
        return None
    if b"content-encoding: gzip" in head.lower():
        body = gzip.decompress(body)
    counts: dict[str, int] = {}
    lines = body.split(b"\n")
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        action = next(iter(json.loads(lines[i])))
        counts[action] = counts.get(action, 0) + 1
        i += 1 if action == "delete" else 2
    return counts


def summary(seconds: list[float]) -> dict[str, float | int]:
    if not seconds:
        return {"count": 0}
    ordered = sorted(seconds)
    return {"count": len(ordered), "total_s": round(sum(ordered), 2),
            "mean_ms": round(1000 * statistics.fmean(ordered), 1),
            "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1),
            "max_ms": round(1000 * ordered[-1], 1)}


def process_figures(pid: int | None) -> dict[str, float]:
    """The server's resident memory (MB) and CPU seconds, from /proc (Linux)."""
    if pid is None or not Path(f"/proc/{pid}").exists():
        return {}
    rss_kb = next(int(line.split()[1]) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines()
                  if line.startswith("VmRSS:"))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return {"rss_mb": round(rss_kb / 1024), "cpu_s": round((int(fields[11]) +
                                                            int(fields[12])) / ticks, 1)}


def measure(timings: list[tuple[float, str, int, float, Any]], parts: int = 5
            ) -> dict[str, Any]:
    """Per request type, overall and per ``parts``-th of the crawl."""
    if not timings:
        return {}
    first, last = timings[0][0], max(t[0] for t in timings)
    span = max(last - first, 1e-9)
    by_kind: dict[str, list[float]] = {k: [] for k in _KINDS}
    by_part: list[dict[str, list[float]]] = [{k: [] for k in _KINDS} for _ in range(parts)]
    bulk_docs = [{"create": 0, "index": 0, "delete": 0} for _ in range(parts)]
    for sent, line, _, took, actions in timings:
        kind = request_kind(line)
        part = min(int(parts * (sent - first) / span), parts - 1)
        by_kind[kind].append(took)
        by_part[part][kind].append(took)
        for action, n in (actions or {}).items():
            bulk_docs[part][action] = bulk_docs[part].get(action, 0) + n
    bulks = [{"at_s": round(sent - first, 1), "seconds": round(took, 2),
              "create": (actions or {}).get("create", 0), "index": (actions or {}).get("index", 0),
              "bytes": size}
             for sent, line, size, took, actions in timings if request_kind(line) == "bulk"]
    return {
        "overall": {k: summary(v) for k, v in by_kind.items()},
        "bulks": bulks,
        "by_fifth": [{"requests": {k: summary(v) for k, v in p.items() if v},
                      "bulk_actions": docs} for p, docs in zip(by_part, bulk_docs, strict=True)],
        "seconds_by_kind": {k: round(sum(v), 1) for k, v in by_kind.items()},
    }


def run(profiles: int, timeout: float, opensearch_timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="index-requests-") as tmp, \
            deployment(Path(tmp), profiles) as dep, \
            IndexedArxivStandIn(load_entries(dep.site_root)) as arxiv_api:
        proxy = FaultProxy.for_url(dep.opensearch_url, opensearch_timeout + 30,
                                   inspect=bulk_actions).start()
        try:
            dep.settings.update({"ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv_api.api_url,
                                 "ARXIV_DELAY_SECONDS": "0.1",
                                 "ARXIV_BATCH_LINGER_SECONDS": "2",
                                 "OPENSEARCH_TIMEOUT": str(opensearch_timeout),
                                 "OPENSEARCH_URL": proxy.url})
            dep.opensearch_url = proxy.url
            started = time.monotonic()
            crawl = dep.start("single", "one_")
            ended = wait_all([crawl], timeout)
            wall = time.monotonic() - started
            server = process_figures(dep.index_pid)
        finally:
            proxy.stop()
        report = dep.report("single")
        return {"profiles": profiles, "ended": ended, "exit_code": crawl.process.returncode,
                "wall_seconds": round(wall, 1), "server": server,
                "pages_parsed": report.get("pages", {}).get("parsed"),
                **measure(list(proxy.timings))}


def print_result(result: dict[str, Any]) -> None:
    print(f"single-process crawl, {result['profiles']} profiles: "
          f"{'ended' if result['ended'] else 'DID NOT END'} (exit {result['exit_code']}) in "
          f"{result['wall_seconds']} s; the node at the end: {result['server']}")
    for kind, figures in result.get("overall", {}).items():
        print(f"  {kind:8} {figures}")
    for n, part in enumerate(result.get("by_fifth", []), 1):
        requests = ", ".join(f"{k} {v['count']}x mean {v['mean_ms']} ms"
                             for k, v in part["requests"].items())
        print(f"  fifth {n}: {requests}; bulk actions {part['bulk_actions']}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=800)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--opensearch-timeout", type=float, default=OPENSEARCH_TIMEOUT,
                        help="OPENSEARCH_TIMEOUT of the crawl (default: the crawl's own)")
    parser.add_argument("--out", type=Path, default=Path("index-requests.json"))
    args = parser.parse_args(argv)
    result = run(args.profiles, args.timeout, args.opensearch_timeout)
    print_result(result)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["ended"] and result["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
