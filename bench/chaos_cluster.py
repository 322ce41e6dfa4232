"""A real three-node OpenSearch cluster under faults: ``python -m bench.chaos_cluster``.

Every crawl writes with one replica (``INDEX_REPLICAS=1``) to every node's URL, and is
compared with a single-process crawl of the same site made before any fault. A crawl's
fault strikes at a share of a warm crawl's length (first page to exit), drawn at random
within the run's slice of 5-95 % (run n of N: the n-th N-th), so the runs spread over
the fetches, the writes, the run report and the resolution pass, and no two runs agree;
a reindex's at a drawn moment of its length, likewise:

``data-node``          a node that is not the cluster manager SIGKILLed, one crawl process;
``data-node-workers``  the same under ``--workers`` workers sharing a Redis frontier;
``manager``            the elected cluster manager SIGKILLed, one crawl process;
``manager-reindex``    the elected cluster manager SIGKILLed during ``scholarindex reindex
                       works`` while a search loop queries the alias: the reindex completes
                       or stops cleanly (the alias still on the old index, nothing
                       half-built or write-blocked left), 0 failed searches, the next
                       reindex (the next run's) starts clean;
``rejections``         a second cluster whose nodes take one bulk at a time
                       (``thread_pool.write.size`` 1, ``queue_size`` 1): 429s all along;
``flood-stage``        the disk watermarks set below this disk's usage, so OpenSearch makes
                       the indices read-only, then lifted ``--flood-seconds`` later;
``unreachable-node``   one node behind a fault proxy that refuses connections (odd runs)
                       or holds every request (even runs: timeouts) for ``--outage-seconds``.

A killed node is started again ``--down`` seconds (drawn) later on its data path; a run
ends when the crawl has ended and the cluster is green again (the node rejoined, its
shards recovered). Prints one table: fault, moments, runs, jobs that ended, exit codes,
fetches / profiles, documents missing or different; writes every run to ``--out``.
Exit 1 when a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from bench.chaos import Deployment, Worker, differing_fields, read_index, wait_all
from bench.generate import build_site, write_site
from bench.redis_server import RedisServer
from engine.cluster import LocalCluster
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import read_only_indices
from scholarindex.search.params import SearchRequest
from scholarindex.webui.service import SearchService
from standins.site import SiteServer
from tests.support.faultproxy import FaultProxy

ROOT = Path(__file__).resolve().parent.parent
SCHOLARINDEX = str(Path(sys.executable).with_name("scholarindex"))
NODE_FAULTS = ("data-node", "data-node-workers", "manager", "manager-reindex")
OTHER_FAULTS = ("rejections", "flood-stage", "unreachable-node")
FAULTS = NODE_FAULTS + OTHER_FAULTS
# Each crawl: one replica, every node's URL, a short outage pause between probes.
# Pages at a pace that keeps the writer busy while they come (a flush every 3 s).
CLUSTER_SETTINGS = {"INDEX_REPLICAS": "1", "INDEX_SHARDS": "2", "OPENSEARCH_TIMEOUT": "20",
                    "OPENSEARCH_OUTAGE_WAIT": "300", "DOWNLOAD_DELAY": "0.15",
                    "CONCURRENT_REQUESTS_PER_DOMAIN": "1"}
WATERMARKS = ("low", "high", "flood_stage")


def _log(message: str) -> None:
    print(f"[chaos-cluster {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Run:
    fault: str
    run: int
    # Crawls: the share of a warm crawl's length after the first page at which the fault
    # struck; a reindex: seconds after it started.
    moment: float
    ended: bool = False
    exit_codes: list[int | None] = field(default_factory=list)
    fetches: int = 0
    profiles: int = 0
    missing: int = -1  # documents in one index and not the other
    different: int = -1  # documents in both, with a field that differs
    dead_letters: int = 0
    green_after: float | None = None  # seconds from the end of the job to green again
    notes: dict[str, Any] = field(default_factory=dict)
    ok: bool = False

    @property
    def ratio(self) -> float:
        return round(self.fetches / self.profiles, 3) if self.profiles else 0.0


def moment(run: int, runs: int, span: float, rng: random.Random) -> float:
    """A moment in the ``run``-th of ``runs`` equal shares of 5-85 % of ``span``."""
    share = 0.8 / runs
    return round(span * (0.05 + share * (run + rng.random())), 2)


def share_of_crawl(run: int, runs: int, rng: random.Random) -> float:
    """A share of a crawl's length, in the ``run``-th of ``runs`` equal slices of 5-95 %:
    the fetches, the writes in between and at the end, the run report and the works'
    resolution pass all get their faults."""
    share = 0.9 / runs
    return round(0.05 + share * (run + rng.random()), 3)


@dataclass
class Trigger:
    """When the fault strikes: ``at`` (a share) of a crawl's length after its first page."""

    bench: Bench
    at: float
    started: float = field(default_factory=time.monotonic)

    def due(self) -> bool:
        return time.monotonic() - self.started >= self.at * self.bench.span

    def now(self) -> float:
        return round(time.monotonic() - self.started, 1)


def compare(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """(documents in one snapshot only, documents in both that differ)."""
    missing = different = 0
    for name in want:
        a, b = got.get(name, {}), want[name]
        missing += len(set(a) ^ set(b))
        different += sum(a[k] != b[k] for k in set(a) & set(b))
    return missing, different


def wait_green(client: OpenSearch, nodes: int, timeout: float = 240) -> float:
    """Seconds until every node is in and every shard copy assigned (green)."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        try:
            health = client.cluster.health(wait_for_status="green", wait_for_nodes=str(nodes),
                                           params={"timeout": "5s"}, request_timeout=15)
            if health.get("status") == "green" and not health.get("timed_out"):
                return round(time.monotonic() - began, 1)
        except Exception:  # a node still starting: ask again
            pass
        time.sleep(1)
    raise RuntimeError(f"the cluster was not green {timeout:.0f} s after the run")


def dead_letter_count(folder: Path) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines())
               for p in folder.glob("**/deadletter.jsonl"))


@dataclass
class Bench:
    """The site, Redis, the cluster and the reference crawl shared by the runs."""

    args: argparse.Namespace
    workdir: Path
    dep: Deployment
    cluster: LocalCluster
    want: dict[str, dict[str, Any]]
    span: float  # seconds the reference crawl took from its first profile page
    rng: random.Random

    def client(self, url: str | None = None) -> OpenSearch:
        return build_client(replace(self.dep.index, url=url or self.cluster.url))

    def crawl(self, name: str, workers: int, url: str | None = None,
              extra: dict[str, str] | None = None) -> list[Worker]:
        """``workers`` crawl processes (one: no Redis) into prefix ``name``."""
        self.dep.site.requests.clear()
        self.dep.redis.client().flushall()
        dep = replace(self.dep, opensearch_url=url or self.cluster.url)
        job = name if workers > 1 else None
        return [dep.start(f"{name}/w{i}", f"{name}_", job, extra) for i in range(workers)]

    def first_fetch(self, workers: list[Worker], timeout: float = 300) -> float:
        began = time.monotonic()
        while not self.dep.profile_fetches():
            if all(w.poll() is not None for w in workers) or time.monotonic() - began > timeout:
                tail = workers[0].log.read_text(errors="replace").splitlines()[-25:]
                codes = [w.poll() for w in workers]
                raise RuntimeError(f"no profile page fetched in {time.monotonic() - began:.0f} s "
                                   f"(exit codes {codes}); {workers[0].log} ends:\n"
                                   + "\n".join(tail))
            time.sleep(0.05)
        return time.monotonic()

    def finish(self, result: Run, name: str, workers: list[Worker],
               during: Callable[[float], None] = lambda t: None,
               settle: Callable[[], None] = lambda: None) -> None:
        """Wait for the job, ``settle`` (a killed node started again), then green; fill in
        what the run did and whether it is right."""
        result.ended = wait_all(workers, self.args.timeout, during)
        result.exit_codes = [w.process.returncode for w in workers]
        result.fetches = len(self.dep.profile_fetches())
        result.profiles = self.args.profiles
        settle()
        result.green_after = wait_green(self.client(), self.args.nodes)
        result.dead_letters = dead_letter_count(self.workdir / name)
        if result.ended:
            got = read_index(self.dep, f"{name}_")
            result.missing, result.different = compare(got, self.want)
            if result.missing or result.different:
                result.notes["fields"] = differing_fields(got, self.want)
        result.ok = (result.ended and result.exit_codes == [0] * len(workers)
                     and result.missing == 0 and result.different == 0
                     and result.dead_letters == 0 and result.ratio <= self.args.max_ratio)
        if not result.ok:
            result.notes["logs"] = [str(w.log) for w in workers]


# --- node kills -------------------------------------------------------------------------

def node_kill(bench: Bench, fault: str, n: int) -> Run:
    """One crawl; a node SIGKILLed at a drawn moment and started again later."""
    at = share_of_crawl(n, bench.args.runs, bench.rng)
    down = round(bench.rng.uniform(*bench.args.down), 1)
    result = Run(fault, n, at, notes={"down_seconds": down})
    name = f"{fault.replace('-', '')}{n}"
    workers = bench.crawl(name, bench.args.workers if fault == "data-node-workers" else 1)
    trigger = Trigger(bench, at, bench.first_fetch(workers))
    state: dict[str, Any] = {}

    def strike(_: float) -> None:
        now = trigger.now()
        if "victim" not in state and trigger.due():
            manager = bench.cluster.cluster_manager()
            victim = manager if fault == "manager" else (manager + 1 + n % 2) % bench.args.nodes
            bench.cluster.kill(victim)
            state.update(victim=victim, killed=now, fetched=len(bench.dep.profile_fetches()))
        if "victim" in state and "restarted" not in state and now >= state["killed"] + down:
            bench.cluster.restart(state["victim"])
            state["restarted"] = now

    def settle() -> None:
        if "victim" not in state:  # the crawl ended before the moment: a fresh length
            state["length"] = trigger.now()
            return
        if "restarted" not in state:
            bench.cluster.restart(state["victim"])

    bench.finish(result, name, workers, strike, settle)
    result.notes.update({"victim": f"node-{state.get('victim')}", "pages_before_kill":
                         state.get("fetched"), "killed_at_seconds": state.get("killed"),
                         "crawl_ended_first": "killed" not in state})
    if "killed" not in state:
        result.ok = False  # not a run under the fault
        result.notes["crawl_seconds"] = state["length"]
    return result


def struck(bench: Bench, run: Callable[[], Run], attempts: int = 3) -> Run:
    """``run`` again while its crawl ended before the fault's moment (crawls speed up as
    the nodes warm, so a late moment can miss): each miss is a crawl with no fault whose
    length becomes the span the next moment is drawn in."""
    result = run()
    missed: list[float] = []
    while result.notes.get("crawl_ended_first") and len(missed) < attempts - 1:
        missed.append(result.moment)
        bench.span = result.notes["crawl_seconds"]
        _log(f"the crawl ended {bench.span:.1f} s after its first page, before the "
             f"{result.moment:.0%} moment: the faults now strike within that; again")
        result = run()
    if missed:
        result.notes["missed_moments"] = missed
    return result


def manager_reindex(bench: Bench, n: int, span: float) -> Run:
    """``scholarindex reindex works`` on the reference's index under a search loop; the
    elected manager SIGKILLed at a drawn moment of it."""
    at = moment(n, bench.args.runs, span, bench.rng)
    down = round(bench.rng.uniform(*bench.args.down), 1)
    result = Run("manager-reindex", n, at, notes={"down_seconds": down})
    client = bench.client()
    alias = f"{bench.dep.prefix('ref_')}works"
    before = sorted(client.indices.get_alias(name=alias))
    with SearchLoop(client, alias) as searches:
        reindex = _reindex_process(bench)
        start = time.monotonic()
        victim: int | None = None
        while reindex.poll() is None and time.monotonic() - start < bench.args.timeout:
            if victim is None and time.monotonic() - start >= at:
                victim = bench.cluster.cluster_manager()
                bench.cluster.kill(victim)
                killed = time.monotonic()
            if victim is not None and time.monotonic() - killed >= down \
                    and bench.cluster.members[victim].process.poll() is not None:  # type: ignore[union-attr]
                bench.cluster.restart(victim)
            time.sleep(0.1)
        result.ended = reindex.poll() is not None
        result.notes["reindex_seconds"] = round(time.monotonic() - start, 1)
        if not result.ended:
            reindex.kill()
        output = reindex.communicate()[0]
        if victim is None:  # it ended first
            victim = bench.cluster.cluster_manager()
            bench.cluster.kill(victim)
        if bench.cluster.members[victim].process.poll() is not None:  # type: ignore[union-attr]
            bench.cluster.restart(victim)
        result.green_after = wait_green(client, bench.args.nodes)
        time.sleep(1)  # searches on the green cluster too
    result.exit_codes = [reindex.returncode]
    after = sorted(client.indices.get_alias(name=alias))
    family = client.indices.get(index=f"{bench.dep.prefix('ref_')}works-*")
    blocked = [name for name, entry in family.items() if name in after and
               str(entry["settings"]["index"].get("blocks", {}).get("write")) == "true"]
    incomplete = [name for name, entry in family.items()
                  if (entry["mappings"].get("_meta") or {}).get("build", {}).get("state")
                  == "incomplete"]
    got = read_index(bench.dep, "ref_")
    result.missing, result.different = compare(got, bench.want)
    switched = after != before
    result.notes.update({"victim": f"node-{victim}", "switched": switched,
                         "alias_before": before, "alias_after": after,
                         "searches": searches.done, "failed_searches": searches.failed,
                         "search_errors": searches.errors[:3], "live_write_blocked": blocked,
                         "half_built_left": incomplete,
                         "reindex_output_tail": output.splitlines()[-4:]})
    clean = (result.exit_codes == [0] and switched) or (result.exit_codes != [0] and not switched)
    result.ok = (result.ended and clean and not blocked and not incomplete
                 and searches.failed == 0 and result.missing == 0 and result.different == 0)
    return result


def _reindex_process(bench: Bench) -> subprocess.Popen[str]:
    config = bench.dep.index
    env = {**os.environ, "OPENSEARCH_URL": bench.cluster.url,
           "INDEX_PREFIX": bench.dep.prefix("ref_"), "OPENSEARCH_TIMEOUT": "20",
           "INDEX_REPLICAS": "1", "INDEX_SHARDS": "2", "OPENSEARCH_USER": config.user,
           "OPENSEARCH_PASSWORD": config.password}
    return subprocess.Popen([SCHOLARINDEX, "reindex", "--index", "works", "--yes", "--keep", "1"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


class SearchLoop:
    """Searches the works back to back in a thread, as the search UI does (its
    ``SearchService``, with its one quick retry of a refused connection or a 5xx); counts
    the searches that failed all the same."""

    def __init__(self, client: OpenSearch, alias: str):
        self.client, self.alias = client, alias
        self.service = SearchService(client, alias.removesuffix("works"), cache_browsing=False)
        self.done = self.failed = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.service.search(SearchRequest(q="learning", size=5))
                self.done += 1
            except Exception as exc:  # counted: a search the UI failed
                self.failed += 1
                self.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            time.sleep(0.05)

    def __enter__(self) -> SearchLoop:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


# --- the other faults ---------------------------------------------------------------------

def rejections(bench: Bench, n: int, cluster: LocalCluster) -> Run:
    """A crawl of ``--workers`` workers into nodes that take one bulk at a time, and at a
    drawn moment a burst of other clients' bulks for ``--burst-seconds`` on top: 429s
    all along, many during the burst. The crawl's writes (documents in its works index,
    sampled) before, during and after the burst say whether the rate recovers."""
    at = share_of_crawl(n, bench.args.runs_other, bench.rng)
    result = Run("rejections", n, at)
    name = f"reject{n}"
    saved = bench.cluster, bench.dep
    bench.cluster = cluster
    bench.dep = replace(bench.dep, opensearch_url=cluster.url,
                        index=replace(bench.dep.index, url=cluster.url))
    client = bench.client(cluster.url)
    burst = Burst(client, f"{bench.dep.prefix(name)}_burst")
    samples: list[tuple[float, int]] = []
    try:
        workers = bench.crawl(name, bench.args.workers)
        began = time.monotonic()
        trigger = Trigger(bench, at, bench.first_fetch(workers))
        state: dict[str, float] = {}

        def strike(_: float) -> None:
            now = trigger.now()
            if not samples or now - samples[-1][0] >= 2:
                samples.append((now, _works_count(client, f"{bench.dep.prefix(name)}_works")))
            if "burst" not in state and trigger.due():
                burst.start()
                state["burst"] = now
            if "burst" in state and "calm" not in state and \
                    now >= state["burst"] + bench.args.burst_seconds:
                burst.stop()
                state["calm"] = now

        bench.finish(result, name, workers, strike)
    finally:
        burst.stop()
        bench.cluster, bench.dep = saved
    retries = sum(w.report().get("index", {}).get("retries", 0) or
                  _stat(w, "index/retries") for w in workers)
    rates = _rates(samples, state.get("burst"), state.get("calm"))
    result.notes.update({"seconds": round(time.monotonic() - began, 1),
                         "reference_seconds": round(bench.span, 1), "index_retries": retries,
                         "burst_at": state.get("burst"), "burst_bulks": burst.sent,
                         "burst_rejected": burst.rejected, "docs_per_second": rates})
    result.ok = result.ok and "burst" in state
    return result


class Burst:
    """Other clients' bulk requests, four at a time, back to back, while started."""

    def __init__(self, client: OpenSearch, index: str):
        self.client, self.index = client, index
        self.sent = self.rejected = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self._threads = [threading.Thread(target=self._loop, args=(i,), daemon=True)
                         for i in range(4)]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)
        self._threads = []

    def _loop(self, i: int) -> None:
        body = [line for k in range(200) for line in
                ({"index": {"_index": self.index, "_id": f"{i}-{k}"}}, {"n": k, "text": "x" * 200})]
        while not self._stop.is_set():
            try:
                answer = self.client.bulk(body=body, request_timeout=30)
                self.sent += 1
                self.rejected += sum(next(iter(item.values())).get("status") == 429
                                     for item in answer.get("items", []))
            except Exception:  # a refused bulk request is the point of the burst
                self.rejected += 1


def _works_count(client: OpenSearch, alias: str) -> int:
    try:
        return int(client.count(index=alias, request_timeout=10)["count"])
    except Exception:  # not created yet, or a slow answer: the next sample
        return -1


def _rates(samples: list[tuple[float, int]], burst: float | None,
           calm: float | None) -> dict[str, float | None]:
    """Works documents written a second, before, during and after the burst."""
    def rate(lo: float, hi: float) -> float | None:
        inside = [(t, c) for t, c in samples if lo <= t <= hi and c >= 0]
        if len(inside) < 2 or inside[-1][0] == inside[0][0]:
            return None
        return round((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]), 1)

    if burst is None or calm is None:
        return {}
    written = [(t, c) for t, c in samples if c >= 0]
    last_change = max((t for (t, c), (_, before) in zip(written[1:], written, strict=False)
                       if c != before), default=calm)
    return {"before": rate(0.0, burst), "during": rate(burst, calm),
            "after": rate(calm, last_change)}


def _stat(worker: Worker, key: str) -> float:
    """A stat from the worker's log's stats dump (0 when absent)."""
    for line in worker.log.read_text(errors="replace").splitlines():
        if f"'{key}':" in line:
            try:
                return float(line.split(":", 1)[1].strip().rstrip(",}"))
            except ValueError:
                return 0.0
    return 0.0


def flood_stage(bench: Bench, n: int) -> Run:
    """Watermarks below this disk's usage at a drawn moment: OpenSearch blocks the indices
    (within its 10 s disk check); lifted ``--flood-seconds`` later."""
    at = share_of_crawl(n, bench.args.runs_other, bench.rng)
    result = Run("flood-stage", n, at)
    name = f"flood{n}"
    client = bench.client()
    workers = bench.crawl(name, 1)
    trigger = Trigger(bench, at, bench.first_fetch(workers))
    state: dict[str, float] = {}

    def strike(_: float) -> None:
        now = trigger.now()
        if "set" not in state and trigger.due():
            _watermarks(client, "1%")
            # What the disk monitor does within its 10 s check, done now: the moment is ours.
            _read_only(client, f"{bench.dep.prefix(name)}_*", True)
            state["set"] = now
        if "set" in state and "lifted" not in state and now >= state["set"] + \
                bench.args.flood_seconds:
            _watermarks(client, None)
            _read_only(client, f"{bench.dep.prefix(name)}_*", None)
            state["lifted"] = now

    def lift() -> None:  # the crawl ended first: lifted before waiting for green, since
        # replicas are not allocated while the low watermark is below the disk's usage
        if "set" in state and "lifted" not in state:
            _watermarks(client, None)
            _read_only(client, f"{bench.dep.prefix(name)}_*", None)

    try:
        bench.finish(result, name, workers, strike, lift)
    finally:
        _watermarks(client, None)
        _settled(client, bench.dep.prefix(""))
    log = workers[0].log.read_text(errors="replace")
    paused = "flood-stage watermark" in log and "crawl paused" in log.lower()
    result.notes.update({"set_at": state.get("set"), "lifted_at": state.get("lifted"),
                         "paused_for_flood_stage": paused, "resumed": "crawl resumed" in log,
                         "paused_seconds": _stat(workers[0], "index/paused_seconds")})
    result.notes["no_write_met_the_block"] = not paused  # struck after the last write
    result.ok = result.ok and paused and "crawl resumed" in log
    return result


def _settled(client: OpenSearch, prefix: str, quiet: float = 35.0,
             timeout: float = 600.0) -> None:
    """Until neither an index of ``prefix`` nor the cluster has carried a flood-stage block
    for longer than a disk check at its default interval (30 s), and an index can be
    created. The blocks are left to OpenSearch's disk monitor to release: it keeps a node
    as over the high watermark until a check finds it under every watermark at least
    ``cluster.routing.allocation.disk.reroute_interval`` (60 s) after its last action, and
    putting back a create-index block someone removed is such an action, so removing it
    every check keeps it coming back for ever."""
    began = calm_since = time.monotonic()
    while time.monotonic() - began < timeout:
        persistent = client.cluster.get_settings(flat_settings=True).get("persistent", {})
        blocked = read_only_indices(client, prefix)
        if persistent.get("cluster.blocks.create_index") == "true" or blocked:
            calm_since = time.monotonic()
        elif time.monotonic() - calm_since >= quiet and _can_create(client, f"{prefix}probe"):
            waited = time.monotonic() - began
            if waited > quiet + 5:
                _log(f"the disk monitor released the flood-stage blocks; {waited:.0f} s")
            return
        time.sleep(1)
    raise RuntimeError(f"flood-stage blocks still set {timeout:.0f} s after the watermarks "
                       "went back to their defaults")


def _can_create(client: OpenSearch, index: str) -> bool:
    try:
        client.indices.create(index=index, body={"settings": {"number_of_replicas": 0}})
        client.indices.delete(index=index)
        return True
    except Exception as exc:  # still refused: wait on
        _log(f"creating an index after the flood stage: {exc}")
        return False


def _read_only(client: OpenSearch, pattern: str, blocked: bool | None) -> None:
    client.indices.put_settings(index=pattern,
                                body={"index.blocks.read_only_allow_delete": blocked})


def _watermarks(client: OpenSearch, used: str | None) -> None:
    """Every disk watermark at ``used`` of the disk (None: back to the defaults), checked
    every 10 s (the least OpenSearch takes)."""
    settings: dict[str, Any] = {f"cluster.routing.allocation.disk.watermark.{w}": used
                                for w in WATERMARKS}
    settings["cluster.info.update.interval"] = "10s" if used else None
    if used is None:  # the create-index block OpenSearch sets at flood stage goes too
        settings["cluster.blocks.create_index"] = None
    client.cluster.put_settings(body={"persistent": settings})


def unreachable_node(bench: Bench, n: int) -> Run:
    """Node 0 reached through a fault proxy that refuses (odd runs) or hangs (even runs)
    for ``--outage-seconds``; the other nodes answer throughout."""
    at = share_of_crawl(n, bench.args.runs_other, bench.rng)
    mode = "refuse" if n % 2 else "hang"
    result = Run("unreachable-node", n, at, notes={"mode": mode})
    name = f"unreach{n}"
    urls = bench.cluster.urls
    proxy = FaultProxy.for_url(urls[0], read_timeout=120).start()
    try:
        url = ",".join([proxy.url, *urls[1:]])
        workers = bench.crawl(name, 1, url=url)
        trigger = Trigger(bench, at, bench.first_fetch(workers))
        state: dict[str, float] = {}

        def strike(_: float) -> None:
            now = trigger.now()
            if "cut" not in state and trigger.due():
                # A held request goes on once the outage is over, as across a healed link.
                if mode == "refuse":
                    proxy.refuse()
                else:
                    proxy.delay(bench.args.outage_seconds)
                state["cut"] = now
            if "cut" in state and "back" not in state and now >= state["cut"] + \
                    bench.args.outage_seconds:
                proxy.delay(0)
                proxy.pass_through()
                state["back"] = now

        bench.finish(result, name, workers, strike)
        result.notes.update(state)
        result.notes["requests_to_node_0"] = len(proxy.requests)
        result.ok = result.ok and "cut" in state  # else the crawl ended before the fault
    finally:
        proxy.stop()
    return result


# --- the whole bench --------------------------------------------------------------------

@contextmanager
def bench_setup(args: argparse.Namespace, workdir: Path) -> Iterator[Bench]:
    site_root = workdir / "site"
    site_root.mkdir(parents=True)
    with ExitStack() as stack:
        site = stack.enter_context(SiteServer(site_root))
        redis = stack.enter_context(RedisServer(workdir / "redis"))
        _log(f"starting {args.nodes} OpenSearch nodes (heap {args.heap} each)")
        cluster = stack.enter_context(LocalCluster(nodes=args.nodes, heap=args.heap,
                                                   exit_with_parent=True, log=_log))
        write_site(build_site(args.profiles, seed=args.seed), site_root, site.base)
        index = OpenSearchConfig(url=cluster.url, verify_certs=False, timeout=30.0,
                                 prefix="chaos_")
        dep = Deployment(workdir, site, site_root, redis, cluster.url, index,
                         settings=dict(CLUSTER_SETTINGS))
        _log(f"reference: one process over {args.profiles} profiles, no fault")
        single = dep.start("reference", "ref_")
        began = time.monotonic()
        while not dep.profile_fetches():
            time.sleep(0.05)
        first = time.monotonic()
        if not wait_all([single], args.timeout) or single.process.returncode != 0:
            raise RuntimeError(f"the reference crawl failed; see {single.log}")
        _log(f"reference took {time.monotonic() - began:.1f} s "
             f"({time.monotonic() - first:.1f} s from the first profile page)")
        want = read_index(dep, "ref_")
        # The faults' moments are shares of a warm crawl's length (the first one created
        # the indices and warmed the nodes up): one more crawl, no fault, measured.
        span = args.span
        if span is None:
            dep.site.requests.clear()
            warm = dep.start("warm", "warm_")
            while not dep.profile_fetches():
                time.sleep(0.05)
            first = time.monotonic()
            wait_all([warm], args.timeout)
            span = time.monotonic() - first
        _log(f"a warm crawl takes {span:.1f} s from its first profile page: the faults "
             "strike within it")
        yield Bench(args, workdir, dep, cluster, want, span, random.Random(args.seed_faults))


def run_all(args: argparse.Namespace) -> list[Run]:
    results: list[Run] = []
    faults = args.faults
    with tempfile.TemporaryDirectory(prefix="chaos-cluster-") as tmp, \
            bench_setup(args, Path(tmp)) as bench:

        def record(run: Callable[[], Run], fault: str, n: int) -> None:
            try:
                result = run()
            except Exception as exc:  # one run that broke is a failed run, not the end
                result = Run(fault, n, 0.0, notes={"error": str(exc)[-3000:]})
                _log(f"{fault} run {n} broke: {exc}")
            results.append(result)
            when = (f"{result.moment} s into it" if result.fault == "manager-reindex"
                    else f"{result.moment:.0%} into the crawl")
            _log(f"{result.fault} run {result.run}, {when}: "
                 f"{'ok' if result.ok else 'FAILED'} exit {result.exit_codes} ratio "
                 f"{result.ratio} missing {result.missing} different {result.different} "
                 f"dead letters {result.dead_letters} {json.dumps(result.notes)[:400]}")

        for fault in ("data-node", "data-node-workers", "manager"):
            if fault in faults:
                for n in range(args.runs):
                    record(partial(struck, bench, partial(node_kill, bench, fault, n)),
                           fault, n)
        if "manager-reindex" in faults:
            began = time.monotonic()
            first = _reindex_process(bench)
            output = first.communicate()[0]
            span = time.monotonic() - began
            _log(f"a reindex with no fault took {span:.1f} s (exit {first.returncode})")
            if first.returncode != 0:  # the runs would only show that it fails anyway
                raise RuntimeError("the reindex with no fault failed:\n" + output)
            if args.reindex_span is not None:  # a loaded machine: the faulted ones take longer
                span = args.reindex_span
            _log(f"the kills strike within {span:.1f} s of a reindex's start")
            for n in range(args.runs):
                record(partial(manager_reindex, bench, n, span), "manager-reindex", n)
            last = _reindex_process(bench)  # after the last kill: the next reindex is clean
            output = last.communicate()[0]
            _log(f"the reindex after the runs: exit {last.returncode}")
            if last.returncode != 0:
                results[-1].ok = False
                results[-1].notes["next_reindex"] = output.splitlines()[-4:]
        for n in range(args.runs_other):
            if "flood-stage" in faults:
                record(partial(flood_stage, bench, n), "flood-stage", n)
            if "unreachable-node" in faults:
                record(partial(unreachable_node, bench, n), "unreachable-node", n)
        if "rejections" in faults:
            _log("starting a second cluster whose nodes take one bulk at a time")
            with LocalCluster(nodes=args.nodes, heap=args.heap, exit_with_parent=True, log=_log,
                              settings={"thread_pool.write.size": 1,
                                        "thread_pool.write.queue_size": 1}) as small:
                for n in range(args.runs_other):
                    record(partial(rejections, bench, n, small), "rejections", n)
    return results


def table(results: list[Run]) -> str:
    rows = [("fault", "moments", "runs", "ended", "exit codes", "fetch ratio",
             "missing/different docs", "dead letters", "ok")]
    for fault in FAULTS:
        mine = [r for r in results if r.fault == fault]
        if not mine:
            continue
        codes = sorted({str(c) for r in mine for c in r.exit_codes})
        moments = sorted(r.moment for r in mine)
        shown = (", ".join(f"{m:g}s" for m in moments) if fault == "manager-reindex"
                 else ", ".join(f"{m:.0%}" for m in moments))
        rows.append((fault, shown,
                     str(len(mine)), f"{sum(r.ended for r in mine)}/{len(mine)}",
                     ",".join(codes),
                     f"{min(r.ratio for r in mine)}-{max(r.ratio for r in mine)}",
                     f"{sum(max(r.missing, 0) for r in mine)}/"
                     f"{sum(max(r.different, 0) for r in mine)}",
                     str(sum(r.dead_letters for r in mine)),
                     f"{sum(r.ok for r in mine)}/{len(mine)}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                     for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", nargs="+", default=list(FAULTS), choices=FAULTS)
    parser.add_argument("--runs", type=int, default=10, help="runs of each node fault")
    parser.add_argument("--runs-other", type=int, default=3,
                        help="runs of rejections, flood-stage and unreachable-node")
    parser.add_argument("--profiles", type=int, default=150)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--heap", default="512m")
    parser.add_argument("--down", type=float, nargs=2, default=[2.0, 10.0],
                        help="a killed node is restarted after a drawn number of seconds")
    parser.add_argument("--flood-seconds", type=float, default=40,
                        help="longer than the writer's retries (about 20 s): the crawl pauses")
    parser.add_argument("--outage-seconds", type=float, default=15)
    parser.add_argument("--burst-seconds", type=float, default=15,
                        help="how long other clients' bulks add to the rejections")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--max-ratio", type=float, default=1.3)
    parser.add_argument("--span", type=float, default=None,
                        help="a crawl's length in seconds, the faults' moments drawn within "
                             "it (default: measured on a warm crawl with no fault)")
    parser.add_argument("--reindex-span", type=float, default=None,
                        help="a reindex's length in seconds, the kills drawn within it "
                             "(default: measured on a reindex with no fault)")
    parser.add_argument("--seed", type=int, default=4, help="the site's")
    parser.add_argument("--seed-faults", type=int, default=None,
                        help="the moments' (default: a new one each time)")
    parser.add_argument("--out", type=Path, default=Path("chaos-cluster.json"))
    args = parser.parse_args(argv)
    if args.seed_faults is None:
        args.seed_faults = random.randrange(1 << 30)
    _log(f"moments drawn with --seed-faults {args.seed_faults}")
    results = run_all(args)
    print(table(results), flush=True)
    args.out.write_text(json.dumps({"cpus": os.cpu_count(), "seed_faults": args.seed_faults,
                                    "runs": [r.__dict__ | {"ratio": r.ratio} for r in results]},
                                   indent=2, default=str) + "\n", encoding="utf-8")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
