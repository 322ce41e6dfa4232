"""The search API under load: N concurrent clients for D seconds against the demo index.

    python -m bench.load                          # 50 clients, 60 s (make bench-load)
    python -m bench.load --clients 10 --seconds 5 --out load.json
    python -m bench.load --during-reindex         # also reindex and write meanwhile

Builds the demo's index as ``make demo`` does (``demo.build_index``: the fixture
site and the arXiv stand-ins crawled into a local OpenSearch node), starts the real
``scholarindex serve`` on 127.0.0.1 on a free port, and runs ``--clients`` threads,
each sending its next request as soon as the last one answered, until ``--seconds``
pass or ``--max-requests`` were sent. Loopback only: the app is ours, on 127.0.0.1.

The requests are a fixed, seeded pool built from what the index holds: words and
phrases of the indexed titles, author names, facet filters (year, category, venue,
type, source), newest-first sorts and second pages; most as ``GET /api/search``,
some as the HTML page ``GET /?q=``. Before the load each API request of the pool is
asked once, and its total is the answer every later response must give: an error is
a non-200 or a transport failure, a wrong answer is a different total, or a page
without results for a search that has some.

``--during-reindex``: while the load runs, a crawl-like writer adds works (with
``scholarindex.indexing.bulk.BulkWriter``, words no query of the pool contains, so the totals
above stay right) and ``scholarindex reindex --yes --index works`` switches the
alias; afterwards every write that was not dead-lettered must be in the index.

Prints the figures and writes them as JSON (``--out``); exits 1 on any error, wrong
answer, failed reindex or lost write. ``tests/test_bench_load.py`` runs a few clients
for a few seconds on the fixture pages.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from bench.search import nearest_rank
from demo import build_index
from engine.cluster import free_port
from scholarindex.core.items import WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.client import build_client, quiet_transport_logs
from scholarindex.indexing.deadletter import DeadLetterFile, read_lines
from scholarindex.indexing.indices import alias_name, alias_target
from scholarindex.ops.settings import OpsSettings
from scholarindex.search.params import SearchRequest

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
# scholarindex/webui/templates/search.html: the "no results" block, and the count above the results.
NO_RESULTS = 'class="no-results"'
PAGE_TOTAL = re.compile(r"Show the (\d+) works?")
FACETS = ("year", "category", "venue", "type", "source")
WRITE_WORD = "qzxwrite"  # in every title the writer adds: no query of the pool has it


# --- the request pool --------------------------------------------------------------------

@dataclass(frozen=True)
class Probe:
    """One request of the pool and the answer it must get."""

    path: str
    endpoint: str  # "api" or "html"
    text: bool  # a text query (the writer's works never match one)
    total: int = -1  # from the API before the load; -1 until measured


def request_pool(titles: list[str], facets: Mapping[str, list[Any]], authors: list[str],
                 count: int = 300, html_share: float = 0.15, seed: int = 7) -> list[Probe]:
    """``count`` distinct-ish searches over the indexed titles and facet values, seeded."""
    rng = random.Random(seed)
    title_words = [ws for ws in (re.findall(r"[A-Za-z0-9]+", t) for t in titles)
                   if len(ws) >= 2]
    long_words = sorted({w for ws in title_words for w in ws if len(w) >= 5})
    out = []
    for _ in range(count):
        ws = rng.choice(title_words)
        start = rng.randrange(len(ws) - 1)
        kind = rng.random()
        if kind < 0.35:
            q = " ".join(ws[start:start + rng.randint(2, 3)])
        elif kind < 0.50:
            q = '"' + " ".join(ws[start:start + 3]) + '"'
        elif kind < 0.65:
            q = rng.choice(long_words)
        elif kind < 0.75:
            q = f"{rng.choice(long_words)} OR {rng.choice(long_words)}"
        elif kind < 0.85 and authors:
            q = rng.choice(authors)
        else:
            q = ""  # browsing by facets
        filters: dict[str, list[str]] = {}
        if not q or rng.random() < 0.25:
            name = rng.choice([f for f in FACETS if facets.get(f)])
            filters[name] = [str(rng.choice(facets[name]))]
        request = SearchRequest.from_strings(
            q, filters, sort="newest" if rng.random() < 0.2 else "relevance",
            page=2 if rng.random() < 0.1 else 1)
        query = urlencode(request.to_params())
        html = rng.random() < html_share
        out.append(Probe(f"/?{query}" if html else f"/api/search?{query}",
                         "html" if html else "api", bool(request.q)))
    return out


def index_contents(http: httpx.Client) -> tuple[list[str], dict[str, list[Any]], list[str]]:
    """(titles, facet values, author names) of everything the index holds, read by the API."""
    first = _json(http, "/api/search?size=50")
    titles = [h["title"] for h in first["hits"]]
    for page in range(2, min(first["total"] // 50 + 2, 21)):
        titles += [h["title"] for h in _json(http, f"/api/search?size=50&page={page}")["hits"]]
    facets = {name: [v["value"] for v in values]
              for name, values in first["facets"].items()}
    return titles, facets, facets.get("author", [])[:10]


def measured(http: httpx.Client, pool: list[Probe]) -> list[Probe]:
    """The pool with each request's total, asked once through the API before the load."""
    totals: dict[str, int] = {}
    out = []
    for probe in pool:
        api = probe.path if probe.endpoint == "api" else "/api/search" + probe.path[1:]
        if api not in totals:
            totals[api] = int(_json(http, api)["total"])
        out.append(Probe(probe.path, probe.endpoint, probe.text, totals[api]))
    return out


def _json(http: httpx.Client, path: str) -> dict[str, Any]:
    response = http.get(path)
    response.raise_for_status()
    return response.json()


# --- the load -----------------------------------------------------------------------------

@dataclass
class Tally:
    """What one client saw: latencies in seconds per endpoint, errors, wrong answers."""

    requests: int = 0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"api": [], "html": []})
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


class Budget:
    """The hard cap on requests, shared by every client."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            self.left -= 1
            return self.left >= 0


def verdict(probe: Probe, body: str, check_totals: bool) -> str | None:
    """What is wrong with a 200 answer to ``probe`` (None: nothing)."""
    if probe.endpoint == "html":
        shown = PAGE_TOTAL.search(body)
        total = int(shown.group(1)) if shown else 0 if NO_RESULTS in body else -1
        if total < 0:
            return f"neither results nor 'no results' on {probe.path}"
    else:
        total = json.loads(body)["total"]
    if check_totals and total != probe.total:
        return f"total {total} for {probe.path}, {probe.total} before the load"
    if probe.total > 0 and total == 0:
        return f"no results for {probe.path}, which has {probe.total}"
    return None


def client_loop(base: str, pool: list[Probe], deadline: float, budget: Budget, tally: Tally,
                seed: int, check_all_totals: bool) -> None:
    """One client: request after request until the deadline or the budget runs out."""
    rng = random.Random(seed)
    with httpx.Client(base_url=base, timeout=30.0) as http:
        while time.monotonic() < deadline and budget.take():
            probe = rng.choice(pool)
            tally.requests += 1
            began = time.perf_counter()
            try:
                response = http.get(probe.path)
                body = response.text
            except httpx.HTTPError as exc:
                tally.errors.append(f"{probe.path}: {type(exc).__name__}: {exc}")
                continue
            tally.latencies[probe.endpoint].append(time.perf_counter() - began)
            if response.status_code != 200:
                tally.errors.append(f"{probe.path}: HTTP {response.status_code}")
                continue
            problem = verdict(probe, body, check_all_totals or probe.text)
            if problem:
                tally.wrong.append(problem)


def run_load(base: str, pool: list[Probe], clients: int, seconds: float, max_requests: int,
             check_all_totals: bool = True) -> tuple[list[Tally], float]:
    """``clients`` threads against ``base``; their tallies and the wall time spent."""
    if not base.startswith(f"http://{HOST}:"):
        raise ValueError(f"the load only goes to our own app on {HOST}, not {base}")
    budget = Budget(max_requests)
    tallies = [Tally() for _ in range(clients)]
    began = time.monotonic()
    deadline = began + seconds
    threads = [threading.Thread(target=client_loop, daemon=True,
                                args=(base, pool, deadline, budget, tally, n, check_all_totals))
               for n, tally in enumerate(tallies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    return tallies, time.monotonic() - began


def latency(samples: list[float]) -> dict[str, float | int]:
    """count, p50/p95/p99/max/mean in milliseconds (nearest rank)."""
    if not samples:
        return {"count": 0}
    ms = sorted(s * 1000 for s in samples)
    return {"count": len(ms), "p50": round(nearest_rank(ms, 0.50), 1),
            "p95": round(nearest_rank(ms, 0.95), 1), "p99": round(nearest_rank(ms, 0.99), 1),
            "max": round(ms[-1], 1), "mean": round(sum(ms) / len(ms), 1)}


def summarise(tallies: list[Tally], wall: float, samples: int = 5) -> dict[str, Any]:
    """The figures of one load run."""
    by_endpoint = {name: [s for t in tallies for s in t.latencies[name]]
                   for name in ("api", "html")}
    errors = [e for t in tallies for e in t.errors]
    wrong = [w for t in tallies for w in t.wrong]
    requests = sum(t.requests for t in tallies)
    return {
        "requests": requests, "seconds": round(wall, 1),
        "rps": round(requests / wall, 1) if wall else 0.0,
        "errors": len(errors), "error_samples": errors[:samples],
        "wrong_answers": len(wrong), "wrong_samples": wrong[:samples],
        "latency_ms": {"all": latency(by_endpoint["api"] + by_endpoint["html"]),
                       **{name: latency(values) for name, values in by_endpoint.items()}},
    }


# --- the app under test ------------------------------------------------------------------

@contextmanager
def search_app(env: Mapping[str, str], timeout: float = 60.0) -> Iterator[str]:
    """``scholarindex serve`` on 127.0.0.1 in a child process; yields its base URL."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("scholarindex")), "serve",
               "--host", HOST, "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=dict(env), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    base = f"http://{HOST}:{port}"
    try:
        give_up = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"scholarindex serve exited with {process.returncode}")
            try:
                if httpx.get(f"{base}/api/search", timeout=5.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > give_up:
                raise RuntimeError(f"scholarindex serve did not answer in {timeout:.0f} s")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- a crawl writing and a reindex switching meanwhile -------------------------------------

@dataclass
class Writes:
    """The writer's account: works written, changes delivered and dead-lettered."""

    written: set[str] = field(default_factory=set)
    batches: int = 0
    delivered: int = 0
    dead_lettered: int = 0
    failures: list[str] = field(default_factory=list)


def write_loop(writer: BulkWriter, stop: threading.Event, writes: Writes,
               pause: float = 0.3) -> None:
    """Crawl-like writes until ``stop``: two new works a batch, and a new listing of one
    written before (a profile re-crawled), all titled with ``WRITE_WORD``."""
    n = 0
    while not stop.is_set():
        items = [WorkItem(work_id=f"loadwrite-{n + i}", title=f"{WRITE_WORD} number {n + i}",
                          researcher_id=f"qzx-{(n + i) % 3}",
                          researcher_name=f"Qzxwriter {(n + i) % 3}", year=2026)
                 for i in range(2)]
        if n:
            items.append(WorkItem(work_id=f"loadwrite-{n - 1}",
                                  title=f"{WRITE_WORD} number {n - 1}",
                                  researcher_id="qzx-again", researcher_name="Qzxwriter Again",
                                  year=2026))
        try:
            report = writer.write([change_from_item(item) for item in items])
        except Exception as exc:  # counted and reported: a write loop must not stop the load
            writes.failures.append(f"{type(exc).__name__}: {exc}")
        else:
            writes.batches += 1
            writes.delivered += report.delivered
            writes.dead_lettered += report.dead_lettered
            writes.written |= {doc_id for index, doc_id in report.written}
        n += 2
        stop.wait(pause)


def reindex_command(env: Mapping[str, str]) -> dict[str, Any]:
    """``scholarindex reindex --yes --index works --json``: exit status, time, its answer."""
    command = [str(Path(sys.executable).with_name("scholarindex")), "reindex", "--yes",
               "--index", "works", "--json"]
    began = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=dict(env), capture_output=True, text=True)
    out: dict[str, Any] = {"exit_status": done.returncode,
                           "seconds": round(time.monotonic() - began, 1)}
    try:
        [result] = json.loads(done.stdout)["results"]
        out.update({k: result[k] for k in ("old_index", "new_index", "switched", "docs",
                                           "caught_up", "frozen_ms")})
    except (ValueError, KeyError):
        out["stderr"] = done.stderr[-2000:]
    return out


def lost_writes(env: Mapping[str, str], writes: Writes, dead_letters: Path) -> list[str]:
    """Works the writer delivered (and never dead-lettered) that the index lacks now."""
    settings = OpsSettings.from_env(env)
    client = build_client(settings.opensearch)
    dead = {letter.change.doc_id for _, letter in read_lines(dead_letters) if letter} \
        if dead_letters.exists() else set()
    expected = sorted(writes.written - dead)
    works = alias_name(settings.prefix, "works")
    client.indices.refresh(index=works)
    found = client.search(index=works, body={"size": len(expected) or 1, "_source": False,
                                             "query": {"ids": {"values": expected}}})
    present = {hit["_id"] for hit in found["hits"]["hits"]}
    return [doc_id for doc_id in expected if doc_id not in present]


def load_during_reindex(env: Mapping[str, str], base: str, pool: list[Probe], clients: int,
                        seconds: float, max_requests: int, work_dir: Path) -> dict[str, Any]:
    """The load while a writer writes and, a third of the way in, a reindex switches."""
    settings = OpsSettings.from_env(env)
    client = build_client(settings.opensearch)
    before = alias_target(client, settings.prefix, "works")
    dead_letters = work_dir / "load-writes-deadletter.jsonl"
    writer = BulkWriter(client, settings.prefix, DeadLetterFile(dead_letters),
                        settings.writer_retry)
    writes, stop, reindexed = Writes(), threading.Event(), {}
    writer_thread = threading.Thread(target=write_loop, args=(writer, stop, writes), daemon=True)

    def reindex_later() -> None:
        if not stop.wait(seconds / 3):
            reindexed.update(reindex_command(env))

    reindex_thread = threading.Thread(target=reindex_later, daemon=True)
    writer_thread.start()
    reindex_thread.start()
    try:
        tallies, wall = run_load(base, pool, clients, seconds, max_requests,
                                 check_all_totals=False)
    finally:
        stop.set()
        writer_thread.join(120)
        reindex_thread.join(600)
    figures = summarise(tallies, wall)
    figures["reindex"] = {"alias_before": before,
                          "alias_after": alias_target(client, settings.prefix, "works"),
                          **reindexed}
    figures["writes"] = {"batches": writes.batches, "works": len(writes.written),
                         "changes_delivered": writes.delivered,
                         "dead_lettered": writes.dead_lettered,
                         "failures": writes.failures[:5],
                         "lost": lost_writes(env, writes, dead_letters)}
    return figures


# --- the run ------------------------------------------------------------------------------

def run(env: Mapping[str, str], clients: int, seconds: float, max_requests: int,
        during_reindex: bool = False, work_dir: Path | None = None,
        log: Callable[[str], None] = print) -> dict[str, Any]:
    """Serve the index ``env`` points at and load it; the figures (``failed`` says if not ok)."""
    with search_app(env) as base, httpx.Client(base_url=base, timeout=30.0) as http:
        titles, facets, authors = index_contents(http)
        pool = measured(http, request_pool(titles, facets, authors))
        log(f"{len(titles)} works indexed; {len(pool)} requests in the pool "
            f"({sum(p.endpoint == 'html' for p in pool)} HTML pages); app at {base}")
        load_before = os.getloadavg()
        if during_reindex:
            with tempfile.TemporaryDirectory() as tmp:
                figures = load_during_reindex(env, base, pool, clients, seconds, max_requests,
                                              work_dir or Path(tmp))
        else:
            tallies, wall = run_load(base, pool, clients, seconds, max_requests)
            figures = summarise(tallies, wall)
    figures.update({"clients": clients, "duration_s": seconds, "max_requests": max_requests,
                    "works": len(titles), "during_reindex": during_reindex,
                    "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                    "cpus": os.cpu_count()})
    figures["failed"] = failures(figures)
    return figures


def failures(figures: Mapping[str, Any]) -> list[str]:
    """Why the run is not a pass (empty: it is)."""
    out = []
    if figures["errors"]:
        out.append(f"{figures['errors']} errors")
    if figures["wrong_answers"]:
        out.append(f"{figures['wrong_answers']} wrong answers")
    reindexed = figures.get("reindex")
    if reindexed is not None and not (reindexed.get("exit_status") == 0
                                      and reindexed["alias_after"] != reindexed["alias_before"]):
        out.append(f"the reindex did not switch the alias: {reindexed}")
    writes = figures.get("writes")
    if writes is not None and (writes["lost"] or writes["failures"]):
        out.append(f"writes lost or failed: {writes['lost'][:5]} {writes['failures'][:2]}")
    return out


def report_lines(figures: Mapping[str, Any]) -> list[str]:
    """The printed figures."""
    lines = [f"{figures['clients']} clients, {figures['seconds']} s, {figures['works']} works: "
             f"{figures['requests']} requests, {figures['rps']} req/s, "
             f"{figures['errors']} errors, {figures['wrong_answers']} wrong answers "
             f"(load average {figures['loadavg_before'][0]} -> "
             f"{figures['loadavg_after'][0]}, {figures['cpus']} CPUs)"]
    for name, row in figures["latency_ms"].items():
        if row.get("count"):
            lines.append(f"  {name:<5} n={row['count']:<6} p50={row['p50']:7.1f} ms  "
                         f"p95={row['p95']:7.1f} ms  p99={row['p99']:7.1f} ms  "
                         f"max={row['max']:7.1f} ms")
    for sample in figures["error_samples"] + figures["wrong_samples"]:
        lines.append(f"  ! {sample}")
    if "reindex" in figures:
        lines.append(f"  reindex: {figures['reindex']}")
        lines.append(f"  writes: {figures['writes']}")
    lines.append("PASS" if not figures["failed"] else "FAIL: " + "; ".join(figures["failed"]))
    return lines


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.load``."""
    parser = argparse.ArgumentParser(prog="python -m bench.load",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=50, help="concurrent clients (50)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long (60)")
    parser.add_argument("--max-requests", type=int, default=100_000,
                        help="hard cap on requests, whatever the time (100000)")
    parser.add_argument("--during-reindex", action="store_true",
                        help="write and reindex the works alias while the load runs")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args(argv)
    quiet_transport_logs()
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        with ExitStack() as stack:
            built = build_index(stack, work, use_env_cluster=False, log=_stderr)
            if built.status:
                print(f"building the demo index failed ({built.status})", file=sys.stderr)
                return 1
            figures = run(built.env, args.clients, args.seconds, args.max_requests,
                          args.during_reindex, work, _stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(report_lines(figures)))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 1 if figures["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
