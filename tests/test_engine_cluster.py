"""The real engine itself: ``make opensearch`` in the foreground, and a three-node cluster
with a replica holding what one node holds."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from engine.cluster import MODULES, LocalCluster, free_port
from scholarindex.indexing.client import build_client
from standins.site import SiteServer
from tests.support.crawl import ROOT, crawl_profiles
from tests.support.index_contents import snapshot, untimed
from tests.support.settings import opensearch_config_with

pytestmark = [pytest.mark.slow, pytest.mark.process]

SITE = ROOT / "fixtures" / "site"
SEEDS = [p for p in (SITE / "urls.txt").read_text().splitlines() if p.startswith("/")]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def _two_free_ports() -> int:
    """An HTTP port whose transport port (+100) is free too."""
    while True:
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 100))
                return port
            except OSError:
                continue


def test_make_opensearch_says_ready_and_stops_every_node_on_sigterm(tmp_path: Path) -> None:
    port = _two_free_ports()
    node = subprocess.Popen(
        [sys.executable, "-m", "engine", "--port", str(port), "--data", str(tmp_path / "data"),
         "--heap", "512m"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True)
    try:
        assert node.stdout is not None
        assert node.stdout.readline().strip() == f"ready: http://127.0.0.1:{port}"
        info = _get(f"http://127.0.0.1:{port}/")
        assert info["version"]["distribution"] == "opensearch"
        assert info["version"]["number"].startswith("2.19.")
        [listed] = _get(f"http://127.0.0.1:{port}/_nodes/plugins")["nodes"].values()
        assert {plugin["name"] for plugin in listed["plugins"]} >= MODULES
        node.send_signal(signal.SIGTERM)
        assert node.wait(timeout=60) == 0
    finally:
        if node.poll() is None:
            node.kill()
    with pytest.raises(OSError):  # the node is gone, not only its launcher
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    log = (tmp_path / "data" / "node-0" / "logs" / "console.log").read_text()
    assert "stopping ..." in log and "closed" in log


def _crawl_into(tmp_path: Path, site: SiteServer, url: str, prefix: str,
                **settings: str) -> OpenSearch:
    result = crawl_profiles(tmp_path, {
        "INDEX_ENABLED": "true", "ARXIV_ENABLED": "false", "OPENSEARCH_URL": url,
        "INDEX_PREFIX": prefix, **settings}, urls=",".join(site.url(p) for p in SEEDS),
        follow="true")
    assert result.returncode == 0
    assert result.stats.get("index/dead_lettered", 0) == 0
    return build_client(opensearch_config_with(OPENSEARCH_URL=url, INDEX_PREFIX=prefix))


def _timeless(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``docs`` without the times of the crawl that wrote them."""
    docs = untimed(docs)
    for doc in docs.values():
        for entry in [doc, *doc.get("listings", [])]:
            entry.pop("first_seen", None)
    return docs


def test_three_nodes_with_one_replica_hold_what_one_node_holds(
        tmp_path: Path, opensearch_url: str, index_prefix: str) -> None:
    with SiteServer(SITE) as site, LocalCluster(nodes=3, heap="512m",
                                                exit_with_parent=True) as cluster:
        assert len(cluster.urls) == 3
        on_three = _crawl_into(tmp_path / "three", site, cluster.url, "c3_",
                               INDEX_REPLICAS="1")
        health = on_three.cluster.health(wait_for_status="green", request_timeout=60,
                                         params={"timeout": "50s"})
        assert health["number_of_nodes"] == 3 and health["status"] == "green"
        created = on_three.indices.get_settings(index="c3_*")
        assert created and all(entry["settings"]["index"]["number_of_replicas"] == "1"
                               for entry in created.values())
        three = _timeless(snapshot(on_three, "c3_works"))
        on_one = _crawl_into(tmp_path / "one", site, opensearch_url, index_prefix)
        one = _timeless(snapshot(on_one, f"{index_prefix}works"))
    assert len(one) > 30
    assert three == one


def test_works_in_three_shards_are_the_works_in_one(
        tmp_path: Path, opensearch_url: str, index_prefix: str) -> None:
    with SiteServer(SITE) as site:
        sharded = _crawl_into(tmp_path / "three", site, opensearch_url, f"{index_prefix}s3_",
                              INDEX_SHARDS="3")
        single = _crawl_into(tmp_path / "one", site, opensearch_url, f"{index_prefix}s1_")
    shards = sharded.indices.get_settings(index=f"{index_prefix}s3_*")
    by_index = {name: entry["settings"]["index"]["number_of_shards"]
                for name, entry in shards.items()}
    assert by_index[f"{index_prefix}s3_works-v1"] == "3"
    assert by_index[f"{index_prefix}s3_researchers-v1"] == "3"
    assert by_index[f"{index_prefix}s3_tombstones"] == "1"  # bookkeeping keeps one shard
    assert (_timeless(snapshot(sharded, f"{index_prefix}s3_works"))
            == _timeless(snapshot(single, f"{index_prefix}s1_works")))
