"""The distributed crawl on one Redis: ``python -m bench.distributed [--profiles 2000] [--quick]``.

The bench site (``bench.generate``, served by ``bench.serve``) crawled by 1, 2 and 4
workers of one job against one ``redis-server`` on this machine (append-only file on,
``appendfsync everysec`` as a production Redis would run). Each worker is a real
``scrapy crawl profiles -a job=... -a url_file=...`` with ``REDIS_URL`` set, started
through ``bench.launch`` for its CPU time. Indexing and enrichment are off: this
measures the crawl side and the frontier (the index and arXiv bounds are in
docs/distributed.md). AutoThrottle off, no download delay, as in ``bench.run``.

Per worker count: wall time and pages/s (all workers started together, until the
last exits), CPU seconds per page (all workers, their children included), Redis round
trips per page (each scheduler counts its calls: ``frontier/redis_round_trips`` in its
stats), Redis commands per page (``INFO commandstats`` delta, the commands run inside
the Lua scripts included: Redis's work) and Redis's own CPU per page (``INFO cpu``
delta). Writes JSON (``--out``).

On a machine with fewer cores than workers the workers share the cores: pages/s then
shows contention, not scaling; CPU per page and commands per page do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.generate import CRAWL_DATE, build_site, write_site
from bench.redis_server import RedisServer
from bench.run import read_stats
from bench.serve import StaticServer

ROOT = Path(__file__).resolve().parent.parent
SCRAPY = str(Path(sys.executable).with_name("scrapy"))
WORKER_COUNTS = (1, 2, 4)
SETTINGS = {"INDEX_ENABLED": "false", "ARXIV_ENABLED": "false", "AUTOTHROTTLE_ENABLED": "false",
            "CRAWL_DATE": CRAWL_DATE.isoformat(), "LOG_LEVEL": "INFO",
            "TELNETCONSOLE_ENABLED": "false", "REDIS_LEASE_SECONDS": "30"}


def _commands(info: dict[str, Any]) -> int:
    return sum(int(v["calls"]) for k, v in info.items() if k.startswith("cmdstat_"))


def _redis_cpu(info: dict[str, Any]) -> float:
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def crawl(workdir: Path, redis: RedisServer, url_file: Path, workers: int,
          pages: int) -> dict[str, Any]:
    client = redis.client()
    client.flushall()
    client.config_resetstat()
    cpu_before = _redis_cpu(client.info("cpu"))
    run_dir = workdir / f"workers-{workers}"
    run_dir.mkdir()
    procs = []
    started = time.monotonic()
    for n in range(workers):
        out = run_dir / f"launch-{n}.json"
        command = [sys.executable, "-m", "bench.launch", str(out), "--", SCRAPY, "crawl",
                   "profiles", "-a", f"job=bench-{workers}", "-a", f"url_file={url_file}",
                   "-s", f"REDIS_URL={redis.url}", "-s", f"STATE_DIR={run_dir / 'state'}",
                   "-s", f"RUN_REPORT={run_dir / f'report-{n}.json'}",
                   *(arg for name, value in SETTINGS.items() for arg in ("-s", f"{name}={value}"))]
        log = (run_dir / f"worker-{n}.log").open("w")
        procs.append((subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log,
                                       stdin=subprocess.DEVNULL), out))
    codes = [proc.wait() for proc, _ in procs]
    wall = time.monotonic() - started
    commands = _commands(client.info("commandstats"))
    redis_cpu = _redis_cpu(client.info("cpu")) - cpu_before
    launched = [json.loads(out.read_text()) for _, out in procs]
    reports = [json.loads((run_dir / f"report-{n}.json").read_text()) for n in range(workers)]
    parsed = [r["pages"]["parsed"] for r in reports]
    trips = sum(int(read_stats((run_dir / f"worker-{n}.log").read_text())
                    .get("frontier/redis_round_trips", 0)) for n in range(workers))
    cpu = sum(entry["cpu_seconds"] for entry in launched)
    return {
        "workers": workers, "exit_codes": codes, "pages": pages,
        "parsed_per_worker": parsed, "wall_seconds": round(wall, 2),
        "pages_per_second": round(sum(parsed) / wall, 1),
        "cpu_ms_per_page": round(1000 * cpu / max(sum(parsed), 1), 2),
        "redis_round_trips_per_page": round(trips / max(sum(parsed), 1), 2),
        "redis_commands": commands,
        "redis_commands_per_page": round(commands / max(sum(parsed), 1), 2),
        "redis_cpu_ms_per_page": round(1000 * redis_cpu / max(sum(parsed), 1), 3),
        "peak_kb_per_worker": [entry["tree_peak_kb"] for entry in launched],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="40 profiles, 1 and 2 workers")
    parser.add_argument("--out", type=Path, default=Path("bench-distributed.json"))
    args = parser.parse_args(argv)
    profiles = 40 if args.quick else args.profiles
    counts = (1, 2) if args.quick else WORKER_COUNTS
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp:
        workdir = Path(tmp)
        site_root = workdir / "site"
        site_root.mkdir()
        with StaticServer(site_root) as server, RedisServer(workdir / "redis",
                                                            fsync="everysec") as redis:
            write_site(build_site(profiles), site_root, server.url)
            for workers in counts:
                result = crawl(workdir, redis, site_root / "urls.txt", workers, profiles)
                results.append(result)
                print(f"{workers} worker(s): {result['pages_per_second']} pages/s, "
                      f"{result['cpu_ms_per_page']} ms CPU/page, "
                      f"{result['redis_round_trips_per_page']} Redis round trips/page "
                      f"({result['redis_commands_per_page']} commands, scripts' included), "
                      f"Redis {result['redis_cpu_ms_per_page']} ms CPU/page, "
                      f"parsed {result['parsed_per_worker']}, exit {result['exit_codes']}",
                      flush=True)
    summary = {"profiles": profiles, "cpus": os.cpu_count(), "runs": results,
               "note": "timings on a shared machine are noisy; compare ratios within a run"}
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    ok = all(code == 0 for r in results for code in r["exit_codes"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
