"""Workers of a distributed crawl under faults, measured: ``python -m bench.chaos kill-loop``.

``kill-loop``: three workers of one job over a synthetic site (real ``scrapy crawl``
processes, a real ``redis-server``, a local osmem-server for the index), one of them
SIGKILLed at a moment that varies from run to run (``--kill-at 2 4 6 8 10``: seconds
after the first profile page was fetched), ``--runs`` times. Each run reports whether the survivors
exited 0 and when, profile-page fetches ÷ profiles (the re-work the kill caused), and
whether the index equals the one a single-process crawl of the same site built.

``soak`` (``make soak-distributed``): see ``soak``'s docstring.

Prints one line per run and writes every figure as JSON (``--out``); exit 1 when a run
failed (a worker hung or failed, the index differs, or re-work beyond ``--max-ratio``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from bench.generate import CRAWL_DATE, build_site, write_site
from bench.redis_server import RedisServer
from indexing.client import build_client
from indexing.connection import OpenSearchConfig
from standins.site import SiteServer

ROOT = Path(__file__).resolve().parent.parent
SCRAPY = str(Path(sys.executable).with_name("scrapy"))
# As the distributed crawl's tests run them: a local site needs no politeness, a dead
# worker's pages come back within seconds, slow enough that a kill lands mid-crawl.
WORKER_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "false", "ROBOTSTXT_OBEY": "false", "ARXIV_ENABLED": "false",
    "CRAWL_DATE": CRAWL_DATE.isoformat(), "LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": "false",
    "REDIS_LEASE_SECONDS": "3", "REDIS_RETRY_SECONDS": "60", "INDEX_WRITER_PROCESS": "false",
    "INDEX_ENABLED": "true", "INDEX_FLUSH_INTERVAL": "3", "INDEX_BATCH_SIZE": "2000",
    "INDEX_MAX_BUFFER": "8000", "CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.03"}


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path
    started: float
    ended: float | None = None

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is not None and self.ended is None:
            self.ended = time.monotonic()
        return code


@dataclass
class Deployment:
    """One site, one Redis, one OpenSearch; workers started on demand."""

    workdir: Path
    site: SiteServer
    site_root: Path
    redis: RedisServer
    opensearch_url: str
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def url_file(self) -> Path:
        return self.site_root / "urls.txt"

    def profile_fetches(self) -> list[str]:
        return [p for p in list(self.site.requests) if not p.endswith(".txt")]

    def command(self, name: str, prefix: str, job: str | None, extra: dict[str, str]) -> list[str]:
        run_dir = self.workdir / name
        run_dir.mkdir(parents=True, exist_ok=True)
        settings = {**WORKER_SETTINGS, **self.settings, "OPENSEARCH_URL": self.opensearch_url,
                    "INDEX_PREFIX": prefix, "STATE_DIR": str(run_dir / "state"),
                    "ARXIV_CACHE_DIR": str(run_dir / "arxiv-cache"),
                    "INDEX_DEADLETTER_PATH": str(run_dir / "deadletter.jsonl"),
                    "RUN_REPORT": str(run_dir / "report.json"), **extra}
        command = [SCRAPY, "crawl", "profiles", "-a", f"url_file={self.url_file}"]
        if job is not None:
            command += ["-a", f"job={job}"]
            settings["REDIS_URL"] = self.redis.url
        for key, value in settings.items():
            command += ["-s", f"{key}={value}"]
        return command

    def start(self, name: str, prefix: str, job: str | None = None,
              extra: dict[str, str] | None = None) -> Worker:
        command = self.command(name, prefix, job, extra or {})
        log = self.workdir / name / "worker.log"
        with log.open("ab") as out:
            process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=out,
                                       stdin=subprocess.DEVNULL)
        return Worker(process, log, time.monotonic())

    def report(self, name: str) -> dict[str, Any]:
        path = self.workdir / name / "report.json"
        return json.loads(path.read_text()) if path.exists() else {}


@contextmanager
def deployment(workdir: Path, profiles: int, seed: int = 4) -> Iterator[Deployment]:
    from osmem_server import OsmemServer  # only the local run needs it

    site_root = workdir / "site"
    site_root.mkdir(parents=True)
    with SiteServer(site_root) as site, RedisServer(workdir / "redis") as redis, \
            OsmemServer.start() as server, server.clone() as clone:
        write_site(build_site(profiles, seed=seed), site_root, site.base)
        yield Deployment(workdir, site, site_root, redis.start(), clone.url)
        redis.stop()


def index_contents(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    """Both indices, without when things were seen (the crawls ran at different times)."""
    contents: dict[str, dict[str, Any]] = {}
    for name in ("works", "researchers"):
        alias = f"{prefix}{name}"
        client.indices.refresh(index=alias)
        hits = client.search(index=alias, body={"size": 10000, "query": {"match_all": {}}})
        docs = {hit["_id"]: hit["_source"] for hit in hits["hits"]["hits"]}
        for doc in docs.values():
            for entry in [doc, *doc.get("listings", [])]:
                entry.pop("first_seen", None)
                entry.pop("last_seen", None)
        contents[name] = docs
    return contents


def differences(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> int:
    """How many (document, field) pairs differ between two snapshots of both indices."""
    count = 0
    for name in want:
        a_docs, b_docs = got.get(name, {}), want[name]
        for doc_id in set(a_docs) | set(b_docs):
            a, b = a_docs.get(doc_id), b_docs.get(doc_id)
            if a is None or b is None:
                count += 1
            else:
                count += sum(a.get(k) != b.get(k) for k in set(a) | set(b))
    return count


def wait_all(workers: list[Worker], timeout: float,
             during: Callable[[float], None] = lambda elapsed: None) -> bool:
    """Until every worker exited (True) or ``timeout`` passed (False: the rest are killed)."""
    started = time.monotonic()
    while any(w.poll() is None for w in workers):
        elapsed = time.monotonic() - started
        if elapsed > timeout:
            for w in workers:
                if w.poll() is None:
                    w.process.kill()
                    w.process.wait()
            return False
        during(elapsed)
        time.sleep(0.1)
    return True


def _config(dep: Deployment, prefix: str) -> OpenSearchConfig:
    return OpenSearchConfig(url=dep.opensearch_url, verify_certs=False, timeout=30,
                            prefix=prefix)


def reference(dep: Deployment) -> dict[str, dict[str, Any]]:
    """A single-process crawl of the same site into an index of its own."""
    prefix = f"ref{uuid.uuid4().hex[:6]}_"
    single = dep.start("reference", prefix)
    if not wait_all([single], 600) or single.process.returncode != 0:
        raise RuntimeError(f"the single-process reference crawl failed: see {single.log}")
    dep.site.requests.clear()
    return index_contents(build_client(_config(dep, prefix)), prefix)


@dataclass
class Killer:
    """SIGKILLs ``victim`` ``at`` seconds after the first profile page was fetched."""

    dep: Deployment
    victim: Worker
    at: float
    first_fetch: float | None = None
    killed_at_fetches: int | None = None

    def __call__(self, elapsed: float) -> None:
        if self.killed_at_fetches is not None:
            return
        if self.first_fetch is None:
            if self.dep.profile_fetches():
                self.first_fetch = time.monotonic()
            return
        if time.monotonic() - self.first_fetch >= self.at:
            self.victim.process.send_signal(signal.SIGKILL)
            self.killed_at_fetches = len(self.dep.profile_fetches())


def kill_loop(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp, \
            deployment(Path(tmp), args.profiles) as dep:
        want = reference(dep)
        for n in range(args.runs):
            kill_at = args.kill_at[n % len(args.kill_at)]
            dep.redis.client().flushall()
            dep.site.requests.clear()
            prefix, job = f"run{n}_", f"kill{n}"
            workers = [dep.start(f"run{n}/w{i}", prefix, job) for i in range(args.workers)]
            started = time.monotonic()
            killer = Killer(dep, workers[-1], kill_at)
            ended = wait_all(workers, args.timeout, killer)
            wall = time.monotonic() - started
            fetches = len(dep.profile_fetches())
            survivors = workers[:-1]
            codes = [w.process.returncode for w in survivors]
            client = build_client(_config(dep, prefix))
            diff = differences(index_contents(client, prefix), want) if ended else -1
            parsed = [dep.report(f"run{n}/w{i}").get("pages", {}).get("parsed")
                      for i in range(args.workers - 1)]
            result = {"run": n, "kill_at": kill_at, "ended": ended, "wall_seconds": round(wall, 1),
                      "exit_codes": codes, "fetches": fetches, "profiles": args.profiles,
                      "ratio": round(fetches / args.profiles, 3), "index_differences": diff,
                      "parsed_by_survivors": parsed,
                      "fetches_when_killed": killer.killed_at_fetches,
                      "killed_before_its_end": workers[-1].process.returncode == -signal.SIGKILL}
            result["ok"] = (ended and codes == [0] * len(codes) and diff == 0
                            and result["ratio"] <= args.max_ratio)
            results.append(result)
            print(json.dumps(result), flush=True)
            if not result["ok"] and args.keep_failed:
                keep = Path(args.keep_failed) / f"run{n}"
                subprocess.run(["cp", "-r", str(dep.workdir / f"run{n}"), str(keep)], check=False)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    loop = sub.add_parser("kill-loop", help="N workers, one SIGKILLed; repeated")
    loop.add_argument("--profiles", type=int, default=240)
    loop.add_argument("--workers", type=int, default=3)
    loop.add_argument("--runs", type=int, default=20)
    loop.add_argument("--kill-at", type=float, nargs="+", default=[2, 4, 6, 8, 10])
    loop.add_argument("--timeout", type=float, default=120)
    loop.add_argument("--max-ratio", type=float, default=1.25)
    loop.add_argument("--keep-failed", help="copy a failed run's logs into this folder")
    loop.add_argument("--out", type=Path, default=Path("chaos-kill-loop.json"))
    args = parser.parse_args(argv)
    results = kill_loop(args)
    ok = sum(r["ok"] for r in results)
    print(f"{ok} of {len(results)} runs ok; max wall {max(r['wall_seconds'] for r in results)} s; "
          f"max fetches/profiles {max(r['ratio'] for r in results)}", flush=True)
    args.out.write_text(json.dumps({"mode": args.mode, "cpus": os.cpu_count(),
                                    "runs": results}, indent=2) + "\n", encoding="utf-8")
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
