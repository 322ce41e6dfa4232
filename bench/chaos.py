"""Workers of a distributed crawl under faults, measured: ``python -m bench.chaos kill-loop``.

``kill-loop``: three workers of one job over a synthetic site (real ``scrapy crawl``
processes, a real ``redis-server``, a local OpenSearch node for the index), one of them
SIGKILLed at a moment that varies from run to run (``--kill-at 2 4 6 8 10``: seconds
after the first profile page was fetched), ``--runs`` times. Each run reports whether the survivors
exited 0 and when, profile-page fetches ÷ profiles (the re-work the kill caused), and
whether the index equals the one a single-process crawl of the same site built.

``soak`` (``make soak-distributed``): N workers (default 4) over a larger site with
arXiv enrichment on (the stand-in arXiv API) and indexing on through a TCP fault proxy;
while they crawl, one worker is SIGKILLed and restarted every ``--kill-every`` seconds,
Redis is stopped and started again once (same port, same append-only file) and
OpenSearch is unreachable for ``--outage-seconds`` (the proxy refuses connections and
cuts the open ones). Reports fetches ÷ profiles, how long the workers paused for the
index outage and for Redis (from their logs), every worker's exit code, and whether the
index equals a single-process crawl's.

Prints one line per run and writes every figure as JSON (``--out``); exit 1 when a run
failed (a worker hung or failed, the index differs, or re-work beyond ``--max-ratio``).

``--use-env`` (both modes): the index is the cluster ``OPENSEARCH_URL``,
``OPENSEARCH_USER``, ... name instead of a local OpenSearch node, every index under
``INDEX_PREFIX`` and a token of the run, deleted at the end. The soak's fault proxy
speaks plain http, so it needs an ``http://`` endpoint.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from opensearchpy import OpenSearch

from bench.arxiv import IndexedArxivStandIn
from bench.cluster import add_cluster_option, delete_indices, opensearch_process
from bench.generate import CRAWL_DATE, build_site, load_entries, write_site
from bench.redis_server import RedisServer
from engine.cluster import LocalCluster
from scholarindex.distributed.keys import JobKeys
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.scan import scan
from scholarindex.settings import OPENSEARCH_TIMEOUT
from standins.site import SiteServer
from tests.support.faultproxy import FaultProxy

ROOT = Path(__file__).resolve().parent.parent
WORKER_KEY_PREFIX = "scholarindex:"  # REDIS_KEY_PREFIX's default: the workers keep it
SCRAPY = str(Path(sys.executable).with_name("scrapy"))
# A local site needs no politeness, a dead worker's pages come back within seconds, slow
# enough that a kill lands mid-crawl. The index flushes as the crawl's defaults say (the
# few, large flushes the emulator needed are gone with it).
WORKER_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "false", "ROBOTSTXT_OBEY": "false", "ARXIV_ENABLED": "false",
    "CRAWL_DATE": CRAWL_DATE.isoformat(), "LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": "false",
    "REDIS_LEASE_SECONDS": "3", "REDIS_RETRY_SECONDS": "60", "INDEX_WRITER_PROCESS": "false",
    "INDEX_ENABLED": "true", "CONCURRENT_REQUESTS_PER_DOMAIN": "2", "DOWNLOAD_DELAY": "0.03"}


def run_report(run_dir: Path) -> dict[str, Any]:
    """The run report a crawl wrote as it ended ({} when it wrote none)."""
    path = run_dir / "report.json"
    return json.loads(path.read_text()) if path.exists() else {}


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path
    started: float
    ended: float | None = None
    killed: bool = False  # SIGKILLed on purpose

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is not None and self.ended is None:
            self.ended = time.monotonic()
        return code

    def report(self) -> dict[str, Any]:
        return run_report(self.log.parent)


@dataclass
class Deployment:
    """One site, one Redis, one OpenSearch; workers started on demand.

    ``index`` is how this harness reads the index (credentials, certificates); every
    index name starts with ``index.prefix`` (``INDEX_PREFIX``, with ``--use-env``, and a
    token of this run, so runs never meet on a shared cluster).
    """

    workdir: Path
    site: SiteServer
    site_root: Path
    redis: RedisServer
    opensearch_url: str
    index: OpenSearchConfig
    settings: dict[str, str] = field(default_factory=dict)
    index_pid: int | None = None  # the local node's JVM (for its memory and CPU)

    def prefix(self, name: str) -> str:
        """The index prefix of one crawl of this deployment."""
        return f"{self.index.prefix}{name}"

    @property
    def url_file(self) -> Path:
        return self.site_root / "urls.txt"

    def profile_fetches(self) -> list[str]:
        return [p for p in list(self.site.requests) if not p.endswith(".txt")]

    def command(self, name: str, prefix: str, job: str | None, extra: dict[str, str]) -> list[str]:
        run_dir = self.workdir / name
        run_dir.mkdir(parents=True, exist_ok=True)
        settings = {**WORKER_SETTINGS, **self.settings, "OPENSEARCH_URL": self.opensearch_url,
                    "INDEX_PREFIX": self.prefix(prefix), "STATE_DIR": str(run_dir / "state"),
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
        return run_report(self.workdir / name)


@contextmanager
def deployment(workdir: Path, profiles: int, seed: int = 4,
               use_env: bool = False, cluster: LocalCluster | None = None
               ) -> Iterator[Deployment]:
    """The site, Redis and an index: a fresh local OpenSearch node, with ``use_env`` the
    cluster ``OPENSEARCH_URL`` (and ``OPENSEARCH_USER``, ...) names, or ``cluster``
    (real nodes, one replica); the indices of this run are deleted afterwards."""
    site_root = workdir / "site"
    site_root.mkdir(parents=True)
    index_source = _index(use_env) if cluster is None else _cluster_index(cluster)
    with SiteServer(site_root) as site, RedisServer(workdir / "redis") as redis, \
            index_source as (index, index_pid):
        write_site(build_site(profiles, seed=seed), site_root, site.base)
        dep = Deployment(workdir, site, site_root, redis, index.url, index, index_pid=index_pid)
        if cluster is not None:
            dep.settings.update({"INDEX_REPLICAS": "1"})
        yield dep


@contextmanager
def _cluster_index(cluster: LocalCluster) -> Iterator[tuple[OpenSearchConfig, int | None]]:
    """Every node of ``cluster`` in the URL, as a deployment lists them."""
    yield OpenSearchConfig(url=cluster.url, verify_certs=False, timeout=30.0,
                           prefix="soak_"), None


class ProxyGroup:
    """One fault proxy per node: the whole cluster taken away and given back at once."""

    def __init__(self, urls: list[str], read_timeout: float):
        self.proxies = [FaultProxy.for_url(url, read_timeout).start() for url in urls]

    @property
    def url(self) -> str:
        return ",".join(proxy.url for proxy in self.proxies)

    @property
    def requests(self) -> list[str]:
        return [request for proxy in self.proxies for request in proxy.requests]

    def refuse(self) -> None:
        for proxy in self.proxies:
            proxy.refuse()

    def pass_through(self) -> None:
        for proxy in self.proxies:
            proxy.pass_through()

    def stop(self) -> None:
        for proxy in self.proxies:
            proxy.stop()


@contextmanager
def _index(use_env: bool) -> Iterator[tuple[OpenSearchConfig, int | None]]:
    """``bench.cluster.opensearch_process``, every index under a token of this run,
    deleted at the end (on a shared cluster runs never meet and leave nothing behind)."""
    with opensearch_process(use_env) as (configured, pid):
        index = replace(configured, prefix=f"{configured.prefix}chaos{uuid.uuid4().hex[:6]}_")
        try:
            yield index, pid
        finally:
            delete_indices(index)


def index_contents(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    """Both indices, without when things were seen or enriched (the crawls ran at
    different times) and without the enrichment's reason text (order-dependent wording)."""
    contents: dict[str, dict[str, Any]] = {}
    for name in ("works", "researchers"):
        alias = f"{prefix}{name}"
        client.indices.refresh(index=alias)
        hits = scan(client, alias, {"query": {"match_all": {}}})  # past 10,000 hits too
        docs = {hit["_id"]: hit["_source"] for hit in hits}
        for doc in docs.values():
            for entry in [doc, *doc.get("listings", [])]:
                entry.pop("first_seen", None)
                entry.pop("last_seen", None)
            if isinstance(doc.get("enrichment"), dict):
                # When arXiv was asked, and the reason's wording: it names the author that
                # confirmed the match, of whichever profile listing the work came first.
                doc["enrichment"].pop("updated_at", None)
                doc["enrichment"].pop("reason", None)
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


def differing_fields(got: dict[str, dict[str, Any]],
                     want: dict[str, dict[str, Any]]) -> dict[str, int]:
    """``differences`` by index and field ("works.missing": in one snapshot only)."""
    counts: dict[str, int] = {}
    for name in want:
        a_docs, b_docs = got.get(name, {}), want[name]
        for doc_id in set(a_docs) | set(b_docs):
            a, b = a_docs.get(doc_id), b_docs.get(doc_id)
            keys = ["missing"] if a is None or b is None else \
                [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
            for key in keys:
                counts[f"{name}.{key}"] = counts.get(f"{name}.{key}", 0) + 1
    return counts


def differing_works(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]],
                    limit: int = 5) -> list[dict[str, Any]]:
    """The first ``limit`` works that differ, with the differing fields of each side."""
    a_docs, b_docs = got.get("works", {}), want.get("works", {})
    found = []
    for doc_id in sorted(set(a_docs) | set(b_docs)):
        a, b = a_docs.get(doc_id) or {}, b_docs.get(doc_id) or {}
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if keys:
            found.append({"id": doc_id, "got": {k: a.get(k) for k in keys},
                          "want": {k: b.get(k) for k in keys}})
        if len(found) == limit:
            break
    return found


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
    return replace(dep.index, prefix=dep.prefix(prefix))


def read_index(dep: Deployment, prefix: str) -> dict[str, dict[str, Any]]:
    """``index_contents`` of one crawl of ``dep``."""
    return index_contents(build_client(_config(dep, prefix)), dep.prefix(prefix))


def reference(dep: Deployment, timeout: float) -> dict[str, dict[str, Any]]:
    """A single-process crawl of the same site into an index of its own."""
    prefix = f"ref{uuid.uuid4().hex[:6]}_"
    single = dep.start("reference", prefix)
    if not wait_all([single], timeout) or single.process.returncode != 0:
        tail = Path(single.log).read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError("the single-process reference crawl failed (exit "
                           f"{single.process.returncode}); its log ends:\n" + "\n".join(tail))
    dep.site.requests.clear()
    return read_index(dep, prefix)


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
            deployment(Path(tmp), args.profiles, use_env=args.use_env) as dep:
        want = reference(dep, max(600.0, args.timeout))
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
            diff = differences(read_index(dep, prefix), want) if ended else -1
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


# --- the soak ---------------------------------------------------------------------------

_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_INDEX_RESUMED = re.compile(r"crawl resumed after ([\d.]+)s paused")


def pauses_in_log(text: str) -> dict[str, float | None]:
    """How long one worker's log says it paused, in seconds (None: no pause logged).

    ``index``: the sum of "crawl resumed after Ns paused" (the index pipeline's own
    measure of an OpenSearch outage). ``redis``: from the first "Redis at ... unavailable"
    line to the last "Redis at ... answers again" line after it (each connection logs
    both; Scrapy's log times have whole seconds). A worker that never saw Redis answer
    again (killed meanwhile) has no Redis pause.
    """
    index = [float(m.group(1)) for m in _INDEX_RESUMED.finditer(text)]
    down: datetime | None = None
    back: datetime | None = None
    for line in text.splitlines():
        stamp = _LOG_TIME.match(line)
        if stamp is None or "Redis at " not in line:
            continue
        when = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S")
        if " unavailable (" in line and down is None:
            down = when
        elif "answers again" in line and down is not None:
            back = when
    return {"index": round(sum(index), 1) if index else None,
            "redis": (back - down).total_seconds() if down and back else None}


@dataclass
class Chaos:
    """The soak's faults, struck by time since the first profile page was fetched.

    Kills stop once nine in ten profiles were fetched: a worker restarted after its job
    finished would start a new run of the job and crawl the site again.
    """

    dep: Deployment
    proxy: FaultProxy | ProxyGroup
    workers: list[Worker]
    prefix: str
    job: str
    args: argparse.Namespace
    first_fetch: float | None = None
    kills: list[dict[str, Any]] = field(default_factory=list)
    retired: list[Worker] = field(default_factory=list)
    failed_exits: list[dict[str, Any]] = field(default_factory=list)
    events: dict[str, float] = field(default_factory=dict)
    generation: int = 0
    cluster: LocalCluster | None = None  # real nodes: one of them is SIGKILLed too

    def now(self) -> float:
        return 0.0 if self.first_fetch is None else time.monotonic() - self.first_fetch

    def __call__(self, elapsed: float) -> None:
        if self.first_fetch is None:
            if self.dep.profile_fetches():
                self.first_fetch = time.monotonic()
            return
        t, a = self.now(), self.args
        if "outage_start" not in self.events and t >= a.outage_at:
            self.proxy.refuse()
            self.events["outage_start"] = round(t, 1)
        if "outage_start" in self.events and "outage_end" not in self.events \
                and t >= a.outage_at + a.outage_seconds:
            self.proxy.pass_through()
            self.events["outage_end"] = round(t, 1)
        if "redis_stop" not in self.events and t >= a.redis_at:
            self.dep.redis.stop()
            self.events["redis_stop"] = round(t, 1)
        if "redis_stop" in self.events and "redis_start" not in self.events \
                and t >= a.redis_at + a.redis_down:
            self.dep.redis.start()
            self.events["redis_start"] = round(self.now(), 1)
        if self.cluster is not None:
            self._node_fault(t)
        due = (len(self.kills) + 1) * a.kill_every
        if t >= due and len(self.kills) < a.max_kills and self._work_left():
            self._kill_and_restart(t)
        self._supervise(t)

    def _node_fault(self, t: float) -> None:
        """The elected cluster manager SIGKILLed at ``--node-kill-at``, started again
        ``--node-down`` seconds later on its data path."""
        assert self.cluster is not None
        a = self.args
        if "node_kill" not in self.events and t >= a.node_kill_at:
            victim = self.cluster.cluster_manager()
            self.cluster.kill(victim)
            self.events["node_kill"] = round(t, 1)
            self.events["node_victim"] = victim
        if "node_kill" in self.events and "node_restart" not in self.events \
                and t >= a.node_kill_at + a.node_down:
            self.cluster.restart(int(self.events["node_victim"]))
            self.events["node_restart"] = round(t, 1)

    def _supervise(self, t: float) -> None:
        """As a supervisor would (systemd ``Restart=on-failure``, ``RestartSec=5``): a
        worker that exited non-zero while work is left is started again 5 s later.
        A worker whose start-up check of the cluster met the outage exits 3 before
        fetching anything: expected, and recorded. Its run report says so (close reason
        ``opensearch_unavailable``); when it started does not: a worker started just
        before the outage may open its index stage inside it."""
        for slot, worker in enumerate(self.workers):
            code = worker.poll()
            if code in (None, 0) or worker.ended is None or not self._work_left():
                continue
            if time.monotonic() - worker.ended < 5:
                continue
            self.failed_exits.append({"at": round(t, 1), "worker": slot, "exit_code": code,
                                      "close_reason": worker.report().get("close_reason"),
                                      "log": str(worker.log)})
            self.retired.append(worker)
            self._restart(slot)

    def _restart(self, slot: int) -> None:
        self.generation += 1
        self.workers[slot] = self.dep.start(f"soak/w{slot}.{self.generation}", self.prefix,
                                            self.job)

    def _work_left(self) -> bool:
        return len(set(self.dep.profile_fetches())) < 0.9 * self.args.profiles

    def _kill_and_restart(self, t: float) -> None:
        slot = len(self.kills) % len(self.workers)
        victim = self.workers[slot]
        if victim.poll() is not None:
            return  # it has ended by itself: the job is ending
        held = self._leased_by(victim)
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait()
        handed_off = self._handed_off_by(victim)
        victim.killed = True
        self.retired.append(victim)
        self._restart(slot)
        self.kills.append({"at": round(t, 1), "worker": slot, "held": held,
                           "handed_off": handed_off,
                           "fetches": len(self.dep.profile_fetches())})

    def _leased_by(self, worker: Worker) -> int | None:
        """Pages ``worker`` holds leased, unacknowledged, as Redis says just before it is
        killed: what its death gives the others to do again (None: Redis is down)."""
        owners = JobKeys(WORKER_KEY_PREFIX, self.job).owners
        mine = f":{worker.process.pid}:"
        try:
            held = self.dep.redis.client().hvals(owners)
        except Exception:  # Redis stopped by the soak itself
            return None
        return sum(mine in value.decode() for value in cast(list[bytes], held))

    def _handed_off_by(self, worker: Worker) -> int | None:
        """Pages the killed ``worker`` had parsed and handed to its index stage, not yet
        delivered (its outbox, read once it is dead): another worker indexes them without
        fetching them again (None: Redis is down)."""
        pattern = JobKeys(WORKER_KEY_PREFIX, self.job).outbox(f"*:{worker.process.pid}:*")
        try:
            client = self.dep.redis.client()
            return sum(int(client.hlen(key)) for key in client.keys(pattern))
        except Exception:  # Redis stopped by the soak itself
            return None

    def finish(self) -> None:
        """Whatever was left undone (the crawl ended first) is put right."""
        if "outage_start" in self.events and "outage_end" not in self.events:
            self.proxy.pass_through()
        if "redis_stop" in self.events and "redis_start" not in self.events:
            self.dep.redis.start()
        if self.cluster is not None and "node_kill" in self.events \
                and "node_restart" not in self.events:
            self.cluster.restart(int(self.events["node_victim"]))


def soak(args: argparse.Namespace) -> dict[str, Any]:
    """The long run under every fault at once; one result."""
    if args.use_env and urlsplit(os.environ.get("OPENSEARCH_URL", "")).scheme != "http":
        raise SystemExit("soak --use-env: the fault proxy that takes OpenSearch away speaks "
                         "plain http; set OPENSEARCH_URL to an http:// endpoint of the cluster")
    with ExitStack() as stack:
        cluster = None
        if args.cluster:
            cluster = stack.enter_context(LocalCluster(nodes=args.cluster, heap=args.heap,
                                                       exit_with_parent=True))
        return _soak(args, cluster)
    raise AssertionError("unreachable")


def _soak(args: argparse.Namespace, cluster: LocalCluster | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp, \
            deployment(Path(tmp), args.profiles, use_env=args.use_env,
                       cluster=cluster) as dep, \
            IndexedArxivStandIn(load_entries(dep.site_root)) as arxiv_api:
        # The stand-in is on 127.0.0.1: no politeness delay owed (arXiv's own hosts get 3 s).
        dep.settings.update({"ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv_api.api_url,
                             "ARXIV_DELAY_SECONDS": "0.1", "ARXIV_BATCH_LINGER_SECONDS": "2",
                             "DOWNLOAD_DELAY": str(args.download_delay),
                             "OPENSEARCH_TIMEOUT": str(args.opensearch_timeout)})
        started = time.monotonic()
        want = reference(dep, max(600.0, args.timeout))
        reference_seconds = time.monotonic() - started
        arxiv_reference = arxiv_api.request_count
        arxiv_api.reset()
        # The proxy must not cut what the crawl waits for: a slow bulk is not a fault.
        proxy: FaultProxy | ProxyGroup
        if cluster is not None:  # every node behind its own proxy: all taken away at once
            proxy = ProxyGroup(cluster.urls, args.opensearch_timeout + 30)
        else:
            proxy = FaultProxy.for_url(dep.opensearch_url, args.opensearch_timeout + 30).start()
        try:
            behind_proxy = replace(dep, opensearch_url=proxy.url)
            prefix, job = "soak_", "soak"
            workers = [behind_proxy.start(f"soak/w{i}.0", prefix, job)
                       for i in range(args.workers)]
            chaos = Chaos(behind_proxy, proxy, workers, prefix, job, args, cluster=cluster)
            started = time.monotonic()
            ended = wait_all(workers, args.timeout, chaos)
            wall = time.monotonic() - started
            chaos.finish()
        finally:
            proxy.stop()
        fetched = dep.profile_fetches()
        fetches = len(fetched)
        dead = set_aside(dep, job)
        dead_letters = dead_letter_codes(dep.workdir / "soak")
        got = read_index(dep, prefix) if ended else {}
        diff = differences(got, want) if ended else -1
        logs = {w.log.parent.name: w.log.read_text(errors="replace")
                for w in [*chaos.retired, *workers]}
        pauses = {name: pauses_in_log(text) for name, text in logs.items()}
        codes = [w.process.returncode for w in workers]
        result = {
            "workers": args.workers, "profiles": args.profiles, "ended": ended,
            "opensearch": (f"{args.cluster} real nodes, one replica" if args.cluster
                           else "a local node" if not args.use_env else "OPENSEARCH_URL"),
            "wall_seconds": round(wall, 1), "reference_seconds": round(reference_seconds, 1),
            "fetches": fetches, "ratio": round(fetches / args.profiles, 3),
            "refetches": refetches(fetched, chaos.kills, logs),
            "kills": chaos.kills, "events": chaos.events,
            "exit_codes": codes, "killed_exit_codes": [w.process.returncode for w in
                                                       chaos.retired if w.killed],
            "failed_exits": chaos.failed_exits,
            "index_pause_seconds": {n: p["index"] for n, p in pauses.items()},
            "redis_pause_seconds": {n: p["redis"] for n, p in pauses.items()},
            "index_differences": diff, "differing_fields": differing_fields(got, want),
            "differing_works": differing_works(got, want),
            "arxiv_requests": {"reference": arxiv_reference, "soak": arxiv_api.request_count},
            "proxy_requests": len(proxy.requests),
            "set_aside": dead, "dead_letters": dead_letters,
        }
        unexpected = [f for f in chaos.failed_exits
                      if not (f["close_reason"] == "opensearch_unavailable"
                                  and f["exit_code"] == 3)]
        result["ok"] = (ended and codes == [0] * len(codes) and diff == 0 and not unexpected
                        and result["ratio"] <= args.max_ratio)
        if not result["ok"] and args.keep_failed:
            subprocess.run(["cp", "-r", str(dep.workdir / "soak"), args.keep_failed],
                           check=False)
        return result


_EXPIRED = re.compile(r"(\d+) expired lease\(s\) back in the queue")


def refetches(fetched: list[str], kills: list[dict[str, Any]],
              logs: dict[str, str]) -> dict[str, Any]:
    """Where the fetches beyond one a page came from: the pages each killed worker held
    (leased, unacknowledged) when it was killed, against every lease the workers found
    expired and put back (a killed worker's, or a live worker's that missed its renewals),
    and the pages fetched more than once; and the pages the killed workers had parsed and
    handed off (their outboxes), which cost no fetch."""
    counts: dict[str, int] = {}
    for path in fetched:
        counts[path] = counts.get(path, 0) + 1
    held = [k.get("held") for k in kills]
    handed = [k.get("handed_off") for k in kills]
    return {"extra_fetches": len(fetched) - len(counts),
            "pages_fetched_twice_or_more": sum(n > 1 for n in counts.values()),
            "most_fetches_of_a_page": max(counts.values(), default=0),
            "held_by_killed_workers": sum(h for h in held if h is not None),
            "kills_held_unknown": sum(h is None for h in held),
            "handed_off_by_killed_workers": sum(h for h in handed if h is not None),
            "expired_leases_requeued": sum(int(m) for text in logs.values()
                                           for m in _EXPIRED.findall(text))}


def set_aside(dep: Deployment, job: str) -> list[str]:
    """The URLs the job's frontier set aside (taken ``REDIS_MAX_DELIVERIES`` times without
    an acknowledgement): pages no worker will do again."""
    dead = dep.redis.client().hgetall(JobKeys(WORKER_KEY_PREFIX, job).dead)
    return sorted(pickle.loads(cast(bytes, payload))["url"] for payload in dead.values())


def dead_letter_codes(workdir: Path) -> dict[str, int]:
    """Every worker's dead-letter file, counted by reason code."""
    codes: dict[str, int] = {}
    for path in sorted(workdir.glob("*/deadletter.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            code = json.loads(line).get("code", "?")
            codes[code] = codes.get(code, 0) + 1
    return codes


def print_soak(result: dict[str, Any]) -> None:
    def spread(values: dict[str, float | None]) -> str:
        seen = [v for v in values.values() if v is not None]
        return f"{min(seen)}-{max(seen)} s ({len(seen)} workers)" if seen else "none logged"

    failed = [(f["worker"], f["exit_code"], f["close_reason"]) for f in result["failed_exits"]]

    print(f"soak: {result['workers']} workers, {result['profiles']} profiles, "
          f"{'ended' if result['ended'] else 'DID NOT END'} in {result['wall_seconds']} s "
          f"(single process: {result['reference_seconds']} s)\n"
          f"  fetches / profiles: {result['fetches']} / {result['profiles']} = "
          f"{result['ratio']}; re-work: {result['refetches']}\n"
          f"  faults (s after the first fetch): kills at "
          f"{[k['at'] for k in result['kills']]}, {result['events']}\n"
          f"  paused for the index outage: {spread(result['index_pause_seconds'])}; "
          f"for Redis: {spread(result['redis_pause_seconds'])}\n"
          f"  exit codes: {result['exit_codes']} (killed: {result['killed_exit_codes']}; "
          f"exited non-zero and restarted (slot, code, close reason): {failed})\n"
          f"  index differences from a single-process crawl: {result['index_differences']} "
          f"{result['differing_fields']}\n"
          f"  pages set aside by the frontier: {len(result['set_aside'])}; "
          f"dead letters: {result['dead_letters']}\n"
          f"  arXiv requests: {result['arxiv_requests']}; OpenSearch: "
          f"{result.get('opensearch')}\n"
          f"  {'OK' if result['ok'] else 'FAILED'}", flush=True)


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
    long = sub.add_parser("soak", help="N workers under kills, a Redis restart, an index outage")
    long.add_argument("--workers", type=int, default=4)
    long.add_argument("--profiles", type=int, default=2000)
    long.add_argument("--kill-every", type=float, default=20, help="seconds between kills")
    long.add_argument("--max-kills", type=int, default=1000)
    long.add_argument("--outage-at", type=float, default=5,
                      help="seconds after the first fetch OpenSearch becomes unreachable")
    long.add_argument("--outage-seconds", type=float, default=30)
    long.add_argument("--redis-at", type=float, default=45,
                      help="seconds after the first fetch Redis is stopped")
    long.add_argument("--redis-down", type=float, default=5, help="seconds Redis stays down")
    long.add_argument("--download-delay", type=float, default=0.03)
    long.add_argument("--opensearch-timeout", type=float, default=OPENSEARCH_TIMEOUT,
                      help="OPENSEARCH_TIMEOUT of every crawl (default: the crawl's own, "
                           f"{OPENSEARCH_TIMEOUT:g}); the fault proxy waits 30 s longer")
    long.add_argument("--timeout", type=float, default=1200)
    long.add_argument("--max-ratio", type=float, default=1.3)
    long.add_argument("--keep-failed", help="copy the workers' logs here if the soak fails")
    long.add_argument("--cluster", type=int, default=0, metavar="NODES",
                      help="real OpenSearch nodes (engine.LocalCluster, one replica) instead "
                           "of one local node; the elected cluster manager is SIGKILLed too")
    long.add_argument("--heap", default="512m", help="each node's heap (--cluster)")
    long.add_argument("--node-kill-at", type=float, default=70,
                      help="seconds after the first fetch a node is SIGKILLed (--cluster)")
    long.add_argument("--node-down", type=float, default=15,
                      help="seconds the killed node stays down (--cluster)")
    long.add_argument("--out", type=Path, default=Path("chaos-soak.json"))
    for mode in (loop, long):
        add_cluster_option(mode)
    args = parser.parse_args(argv)
    if args.mode == "soak":
        result = soak(args)
        print_soak(result)
        args.out.write_text(json.dumps({"mode": "soak", "cpus": os.cpu_count(), **result},
                                       indent=2) + "\n", encoding="utf-8")
        return 0 if result["ok"] else 1
    results = kill_loop(args)
    ok = sum(r["ok"] for r in results)
    print(f"{ok} of {len(results)} runs ok; max wall {max(r['wall_seconds'] for r in results)} s; "
          f"max fetches/profiles {max(r['ratio'] for r in results)}", flush=True)
    args.out.write_text(json.dumps({"mode": args.mode, "cpus": os.cpu_count(),
                                    "runs": results}, indent=2) + "\n", encoding="utf-8")
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
