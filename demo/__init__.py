"""``make demo``: the whole pipeline on local stand-ins, offline, ending in the search UI.

1. Serves ``fixtures/site`` (profile pages in both layouts) on 127.0.0.1.
2. Uses the OpenSearch at ``OPENSEARCH_URL`` when one answers; otherwise starts a
   real OpenSearch node on loopback (``engine``, a temporary data folder).
3. Points the arXiv enricher at a local replay of recorded-style arXiv answers: the
   query API and an OAI-PMH endpoint serving the same papers.
4. Harvests the OAI-PMH endpoint into the local arXiv mirror with the real
   ``scholarindex arxiv harvest``, so enrichment answers from the mirror.
5. Crawls every profile with the real ``scrapy crawl profiles`` command.
6. Prints a summary read back from OpenSearch, then serves the search UI at
   http://127.0.0.1:8000 until Ctrl+C or SIGTERM (``DEMO_SERVE=0`` stops after the
   summary). Either way the node, the stand-ins and the node's data folder go with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import NoReturn

from opensearchpy import OpenSearch

from engine.cluster import LocalCluster
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_name
from scholarindex.ops.settings import OpsSettings
from standins.arxiv import ArxivStandIn
from standins.oaipmh import OaiStandIn
from standins.site import SiteServer

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "fixtures" / "site"
OUT = Path(os.environ.get("DEMO_OUTPUT") or ROOT / "demo-output")
UI_HOST, UI_PORT = "127.0.0.1", int(os.environ.get("DEMO_PORT", "8000"))


def answers(config: OpenSearchConfig) -> bool:
    """Is an OpenSearch cluster reachable where ``config`` points?"""
    try:
        return bool(build_client(config).ping())
    except Exception:  # any failure means "start our own"
        return False


def crawl(url_file: Path, items: Path, env: dict[str, str], report: Path) -> int:
    command = [str(Path(sys.executable).with_name("scrapy")), "crawl", "profiles",
               "-a", f"url_file={url_file}", "-a", "follow=true", "-s", "DEPTH_LIMIT=4",
               "-O", str(items), "-s", "LOG_LEVEL=WARNING", "-s", f"RUN_REPORT={report}"]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def harvest(env: dict[str, str]) -> int:
    command = [str(Path(sys.executable).with_name("scholarindex")), "arxiv", "harvest"]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def summary(client: OpenSearch, prefix: str) -> str:
    """What landed in the index, read back from OpenSearch."""
    works, researchers = alias_name(prefix, "works"), alias_name(prefix, "researchers")
    client.indices.refresh(index=f"{works},{researchers}")
    result = client.search(index=works, body={
        "size": 0,
        "aggs": {
            "years": {"terms": {"field": "year", "size": 20, "order": {"_key": "desc"}}},
            "authors": {"terms": {"field": "authors", "size": 5}},
            "enriched": {"filter": {"exists": {"field": "arxiv_id"}}},
        },
    })
    aggs = result["aggregations"]
    shared = client.search(index=works, body={
        "size": 20, "query": {"range": {"profile_count": {"gte": 2}}},
        "_source": ["title", "profiles.name"], "sort": [{"title.keyword": "asc"}],
    })["hits"]["hits"]
    lines = [
        f"researchers: {client.count(index=researchers)['count']}",
        f"works:       {client.count(index=works)['count']} "
        f"({aggs['enriched']['doc_count']} matched on arXiv)",
        "works per year: " + ", ".join(f"{b['key']}: {b['doc_count']}"
                                       for b in aggs["years"]["buckets"]),
        "most frequent authors: " + ", ".join(f"{b['key']} ({b['doc_count']})"
                                              for b in aggs["authors"]["buckets"]),
        "works on several profiles:",
    ]
    for hit in shared:
        names = sorted(p["name"] for p in hit["_source"]["profiles"])
        lines.append(f"  {hit['_source']['title'][:72]}\n    profiles: {', '.join(names)}")
    return "\n".join(lines)


def serve(env: dict[str, str]) -> None:
    import uvicorn

    from scholarindex.webui.app import create_app

    print(f"\nSearch UI: http://{UI_HOST}:{UI_PORT}/   (Ctrl+C stops the demo)", flush=True)
    uvicorn.run(create_app(OpsSettings.from_env(env).opensearch), host=UI_HOST, port=UI_PORT,
                log_level="warning")


@dataclass
class DemoIndex:
    """The demo's index, built: the environment that reaches it, and how its steps ended."""

    env: dict[str, str]
    harvested: int  # exit status of `scholarindex arxiv harvest`
    crawled: int  # exit status of `scrapy crawl profiles`

    @property
    def status(self) -> int:
        """The first failure's exit status, 0 when both steps succeeded."""
        return self.crawled or self.harvested


def build_index(stack: ExitStack, out: Path, *, use_env_cluster: bool = True,
                log: Callable[[str], None] = print) -> DemoIndex:
    """Steps 1-5 into a fresh ``out``; the servers stay up until ``stack`` closes.

    ``use_env_cluster=False`` always starts a local node, even when a cluster
    answers at ``OPENSEARCH_URL`` (a benchmark wants its own).
    """
    config = OpsSettings.from_env().opensearch
    site = stack.enter_context(SiteServer(SITE))
    log(f"Profile site (fixtures/site): {site.base}")
    url = config.url
    if use_env_cluster and answers(config):
        log(f"OpenSearch: using the cluster at {config.safe_url}")
    else:
        log("OpenSearch: starting a local node (the first run on a machine downloads it)")
        # The node stops by itself should this process be killed before it can stop it.
        node = stack.enter_context(LocalCluster(log=log, exit_with_parent=True))
        url = node.url
        log(f"OpenSearch: a local OpenSearch {node.version} node at {url}"
            + ("" if not use_env_cluster else f" (nothing answered at {config.safe_url})"))
    arxiv = stack.enter_context(ArxivStandIn())
    log(f"arXiv: a LOCAL REPLAY of recorded-style answers (fixtures/arxiv) at {arxiv.base}; "
        "the real arXiv is never called")
    oai = stack.enter_context(OaiStandIn())
    log(f"arXiv OAI-PMH: a LOCAL stand-in serving the same papers at {oai.base_url}")
    env = {
        **os.environ, "OPENSEARCH_URL": url, "ARXIV_API_URL": arxiv.api_url,
        "ARXIV_OAI_URL": oai.base_url,
        "ARXIV_DELAY_SECONDS": "0.5", "ARXIV_CACHE_DIR": str(out / "arxiv-cache"),
        "INDEX_DEADLETTER_PATH": str(out / "deadletter.jsonl"),
        "STATE_DIR": str(out / "state"), "CRAWL_DATE": "2026-11-22",
    }
    url_file = out / "urls.txt"
    paths = (SITE / "urls.txt").read_text(encoding="utf-8").splitlines()
    url_file.write_text("\n".join(site.url(p) if p.startswith("/") else p for p in paths),
                        encoding="utf-8")
    log("Harvesting arXiv over OAI-PMH into the local mirror...")
    harvested = harvest(env)
    log(f"harvest exit status: {harvested}; OAI-PMH requests: {oai.request_count}\n")
    log("Crawling the five seed profiles and the co-authors they link to...")
    crawled = crawl(url_file, out / "items.jsonl", env, out / "run-report.json")
    log(f"crawl exit status: {crawled} (report: {out / 'run-report.json'})\n")
    log(f"arXiv query API requests made: {arxiv.request_count} "
        "(only for titles the mirror could not answer)")
    return DemoIndex(env, harvested, crawled)


def _exit(signum: int, frame: FrameType | None) -> NoReturn:
    raise SystemExit(128 + signum)  # unwinds the ExitStack: the node and its data go too


def main() -> None:
    # SIGTERM (a supervisor, `timeout`) would end the process without unwinding; the web
    # server re-raises it after its own graceful stop.
    signal.signal(signal.SIGTERM, _exit)
    shutil.rmtree(OUT, ignore_errors=True)  # a fresh index each time wants fresh state
    OUT.mkdir()
    with ExitStack() as stack:
        built = build_index(stack, OUT, log=lambda line: print(line, flush=True))
        settings = OpsSettings.from_env(built.env)
        print(summary(build_client(settings.opensearch), settings.prefix))
        print(f"\nItems as exported: {OUT / 'items.jsonl'}")
        if os.environ.get("DEMO_SERVE", "1") != "0":
            with suppress(KeyboardInterrupt):
                serve(built.env)
        if built.status:
            sys.exit(built.status)
