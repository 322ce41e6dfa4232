"""The run's OpenSearch: what it is (pytest's header) and waiting until it serves."""

from __future__ import annotations

import time
from collections.abc import Callable

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as TransportConnectionError
from opensearchpy.exceptions import TransportError

from engine.cluster import LocalCluster, java_version
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig

READY_TIMEOUT = 180.0


def describe_engine(local: LocalCluster | None, url: str,
                    config_for: Callable[[str, str], OpenSearchConfig]) -> str:
    """``opensearch 2.19.6 at http://127.0.0.1:PORT, jvm 17``: what the run uses.

    A local node is described by what was launched (it is still starting); a given
    cluster by what it answers.
    """
    if local is not None:
        return f"opensearch {local.version} at {local.url}, jvm {java_version()} (local node)"
    if not url:
        return "none (collect only)"
    config = config_for(url, "")
    try:
        info = build_client(config).info()
    except (TransportError, TransportConnectionError) as error:
        return f"unreachable at {config.safe_url} ({error})"
    version = info.get("version", {})
    return (f"{version.get('distribution', 'elasticsearch')} {version.get('number', '?')} "
            f"at {config.safe_url} (given cluster)")


def wait_until_green(client: OpenSearch, timeout: float = READY_TIMEOUT) -> None:
    """Block until the cluster answers with every node up (green, or yellow for a
    given cluster whose indices' replicas cannot be placed)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            health = client.cluster.health()
            if health.get("status") in ("green", "yellow"):
                return
            last = health
        except (TransportError, TransportConnectionError) as error:
            last = error
        time.sleep(0.5)
    raise RuntimeError(f"OpenSearch was not ready after {timeout:.0f} s: {last}")
