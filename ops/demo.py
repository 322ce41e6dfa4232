"""``make demo``: the whole pipeline on local stand-ins, offline, ending in the search UI.

1. Serves ``fixtures/site`` (profile pages in both layouts) on 127.0.0.1.
2. Uses the OpenSearch at ``OPENSEARCH_URL`` when one answers; otherwise starts a
   local ``osmem-server`` (OpenSearch-compatible, in memory).
3. Points the arXiv enricher at a local replay of recorded-style arXiv answers: the
   query API and an OAI-PMH endpoint serving the same papers.
4. Harvests the OAI-PMH endpoint into the local arXiv mirror with the real
   ``scholarindex arxiv harvest``, so enrichment answers from the mirror.
5. Crawls every profile with the real ``scrapy crawl profiles`` command.
6. Prints a summary read back from OpenSearch, then serves the search UI at
   http://127.0.0.1:8000 until Ctrl+C (``DEMO_SERVE=0`` stops after the summary).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import ExitStack, suppress
from pathlib import Path

from opensearchpy import OpenSearch
from osmem_server import OsmemServer

from indexing.client import build_client
from indexing.connection import OpenSearchConfig
from indexing.indices import alias_name
from ops.settings import OpsSettings
from standins.arxiv import ArxivStandIn
from standins.oaipmh import OaiStandIn
from standins.site import SiteServer

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "fixtures" / "site"
OUT = ROOT / "demo-output"
UI_HOST, UI_PORT = "127.0.0.1", int(os.environ.get("DEMO_PORT", "8000"))


def answers(config: OpenSearchConfig) -> bool:
    """Is an OpenSearch cluster reachable where ``config`` points?"""
    try:
        return bool(build_client(config).ping())
    except Exception:  # any failure means "start our own"
        return False


def crawl(url_file: Path, items: Path, env: dict[str, str]) -> int:
    command = [str(Path(sys.executable).with_name("scrapy")), "crawl", "profiles",
               "-a", f"url_file={url_file}", "-a", "follow=true", "-s", "DEPTH_LIMIT=4",
               "-O", str(items), "-s", "LOG_LEVEL=WARNING",
               "-s", f"RUN_REPORT={OUT / 'run-report.json'}"]
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

    from webui.app import create_app

    print(f"\nSearch UI: http://{UI_HOST}:{UI_PORT}/   (Ctrl+C stops the demo)", flush=True)
    uvicorn.run(create_app(OpsSettings.from_env(env).opensearch), host=UI_HOST, port=UI_PORT,
                log_level="warning")


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)  # a fresh index each time wants fresh state
    OUT.mkdir()
    config = OpsSettings.from_env().opensearch
    with ExitStack() as stack:
        site = stack.enter_context(SiteServer(SITE))
        print(f"Profile site (fixtures/site): {site.base}")
        url = config.url
        if answers(config):
            print(f"OpenSearch: using the cluster at {config.safe_url}")
        else:
            url = stack.enter_context(OsmemServer.start()).url
            print(f"OpenSearch: nothing answered at {config.safe_url}; "
                  f"started a local osmem-server at {url}")
        arxiv = stack.enter_context(ArxivStandIn())
        print(f"arXiv: a LOCAL REPLAY of recorded-style answers (fixtures/arxiv) at {arxiv.base}; "
              "the real arXiv is never called")
        oai = stack.enter_context(OaiStandIn())
        print(f"arXiv OAI-PMH: a LOCAL stand-in serving the same papers at {oai.base_url}")
        env = {
            **os.environ, "OPENSEARCH_URL": url, "ARXIV_API_URL": arxiv.api_url,
            "ARXIV_OAI_URL": oai.base_url,
            "ARXIV_DELAY_SECONDS": "0.5", "ARXIV_CACHE_DIR": str(OUT / "arxiv-cache"),
            "INDEX_DEADLETTER_PATH": str(OUT / "deadletter.jsonl"),
            "STATE_DIR": str(OUT / "state"), "CRAWL_DATE": "2026-11-22",
        }
        url_file = OUT / "urls.txt"
        paths = (SITE / "urls.txt").read_text(encoding="utf-8").splitlines()
        url_file.write_text("\n".join(site.url(p) if p.startswith("/") else p for p in paths),
                            encoding="utf-8")
        print("Harvesting arXiv over OAI-PMH into the local mirror...", flush=True)
        harvested = harvest(env)
        print(f"harvest exit status: {harvested}; OAI-PMH requests: {oai.request_count}\n")
        print("Crawling the five seed profiles and the co-authors they link to...", flush=True)
        status = crawl(url_file, OUT / "items.jsonl", env)
        print(f"crawl exit status: {status} (report: {OUT / 'run-report.json'})\n")
        print(summary(build_client(OpsSettings.from_env(env).opensearch), config.prefix))
        print(f"\nItems as exported: {OUT / 'items.jsonl'}; arXiv query API requests made: "
              f"{arxiv.request_count} (only for titles the mirror could not answer)")
        if os.environ.get("DEMO_SERVE", "1") != "0":
            with suppress(KeyboardInterrupt):
                serve(env)
        if status or harvested:
            sys.exit(status or harvested)


if __name__ == "__main__":
    main()
