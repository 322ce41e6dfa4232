"""Shared fixtures.

OpenSearch: every test gets its own ``INDEX_PREFIX`` on one real OpenSearch for the
whole run, and its indices are deleted afterwards. By default that is a local node
(``engine``) that the run's first process starts and stops, shared by the xdist workers
(they find it through ``OPENSEARCH_TEST_URL``, which that process sets). With
``OPENSEARCH_TEST_URL`` set beforehand, the tests run against that cluster instead
(credentials from ``OPENSEARCH_TEST_USER``/``_PASSWORD``, TLS from
``OPENSEARCH_TEST_VERIFY_CERTS``/``_CA_CERTS``), and no node is started.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import settings
from opensearchpy import OpenSearch

from bench.search_data import index_fixtures
from engine.cluster import LocalCluster
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import INDEX_NAMES, ensure_aliases
from standins.arxiv import ArxivStandIn
from tests.support.engine import describe_engine, wait_until_green
from tests.support.faultproxy import FaultProxy
from tests.support.ops import cli_env
from tests.support.redis import RedisServer, redis_available
from tests.support.search_site import FixtureSite, index_site
from tests.support.settings import LAYOUT, opensearch_config_with

TEST_URL = "OPENSEARCH_TEST_URL"

# Property tests check behaviour, not speed (the benchmarks do): on a loaded machine an
# example of a pure function took 256 ms, past hypothesis's 200 ms deadline, and failed.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
LOCAL_ENGINE = pytest.StashKey[LocalCluster]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's first process starts a local node unless a cluster is given.

    It only launches the JVM: the first test that needs the node waits for it, so the
    node starts while the workers collect.
    """
    if os.environ.get(TEST_URL) or hasattr(config, "workerinput") or config.option.collectonly:
        return
    cluster = LocalCluster(heap="2g", exit_with_parent=True).launch()
    config.stash[LOCAL_ENGINE] = cluster
    os.environ[TEST_URL] = cluster.url


def pytest_unconfigure(config: pytest.Config) -> None:
    cluster = config.stash.get(LOCAL_ENGINE, None)
    if cluster is not None:
        cluster.stop()
        os.environ.pop(TEST_URL, None)


def pytest_report_header(config: pytest.Config) -> str:
    cluster = config.stash.get(LOCAL_ENGINE, None)
    return "engine: " + describe_engine(cluster, os.environ.get(TEST_URL, ""), _cluster_config)


@pytest.fixture(scope="session")
def engine_url() -> str:
    """The run's OpenSearch, once it is green (the first test to ask waits for it)."""
    url = os.environ.get(TEST_URL, "")
    if not url:
        pytest.fail(f"no OpenSearch for the tests: {TEST_URL} is unset (collect-only run?)")
    wait_until_green(build_client(_cluster_config(url, "")))
    return url


@pytest.fixture
def opensearch_url(engine_url: str) -> str:
    """URL(s) of the OpenSearch this test uses (comma-separated for several nodes)."""
    return engine_url


@pytest.fixture
def index_prefix(opensearch_url: str) -> Iterator[str]:
    """A prefix of this test's own."""
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    yield prefix
    _delete_indices(opensearch_url, prefix)


@pytest.fixture(scope="module")
def module_opensearch_config(engine_url: str) -> Iterator[OpenSearchConfig]:
    """Like ``opensearch_config``, but one prefix for a whole test module.

    For data a module builds once and only reads (the web UI's indexed fixture pages).
    """
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    try:
        yield _cluster_config(engine_url, prefix)
    finally:
        _delete_indices(engine_url, prefix)


def _delete_indices(url: str, prefix: str) -> None:
    """Delete the indices under ``prefix``, by name: clusters may forbid wildcard deletes.

    Under a layout of several shards (``INDEX_SHARDS``), a works or researchers index
    that a test created with another count is named in a warning: the suite's run on
    several shards would otherwise pass without those tests taking part.
    """
    client = build_client(_cluster_config(url, prefix))
    found = client.indices.get(index=f"{prefix}*", allow_no_indices=True,
                               expand_wildcards="all")
    for index, body in found.items():
        shards = int(body["settings"]["index"]["number_of_shards"])
        searched = any(index.startswith(f"{prefix}{name}-v") for name in INDEX_NAMES)
        if searched and LAYOUT.shards > 1 and shards != LAYOUT.shards:
            warnings.warn(f"{index} has {shards} shard(s), not the suite's {LAYOUT.shards}",
                          stacklevel=1)
        client.indices.delete(index=index, ignore=404)


@pytest.fixture
def opensearch_config(opensearch_url: str, index_prefix: str) -> OpenSearchConfig:
    """Connection settings for this test's cluster and prefix."""
    return _cluster_config(opensearch_url, index_prefix)


@pytest.fixture
def opensearch_client(opensearch_config: OpenSearchConfig) -> OpenSearch:
    """A client configured like the indexer's."""
    return build_client(opensearch_config)


@pytest.fixture
def fault_proxy(opensearch_url: str) -> Iterator[FaultProxy]:
    """A fault-injecting TCP proxy in front of this test's cluster (plain http only)."""
    if not opensearch_url.startswith("http://"):
        pytest.skip("the fault proxy cannot inspect TLS traffic")
    proxy = FaultProxy.for_url(opensearch_url.split(",")[0]).start()
    try:
        yield proxy
    finally:
        proxy.stop()


def _cluster_config(url: str, prefix: str) -> OpenSearchConfig:
    """The test cluster's settings; a given cluster's credentials and TLS from
    ``OPENSEARCH_TEST_USER`` and so on."""
    overrides = {"OPENSEARCH_URL": url, "INDEX_PREFIX": prefix}
    for name in ("USER", "PASSWORD", "VERIFY_CERTS", "CA_CERTS"):
        if f"OPENSEARCH_TEST_{name}" in os.environ:
            overrides[f"OPENSEARCH_{name}"] = os.environ[f"OPENSEARCH_TEST_{name}"]
    return opensearch_config_with(**overrides)


@pytest.fixture
def make_writer(opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
                tmp_path: Path) -> Callable[..., BulkWriter]:
    """Build a ``BulkWriter`` for this test's prefix with a fast retry policy.

    ``make_writer(url=proxy.url, attempts=3, dead_letters=path)``; the aliases are
    created through the direct client first, so a faulty ``url`` only affects writes.
    """
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)

    def make(url: str | None = None, attempts: int = 4,
             dead_letters: Path | None = None) -> BulkWriter:
        config = replace(opensearch_config, url=url or opensearch_config.url)
        policy = RetryPolicy(attempts=attempts, initial_wait=0.05, max_wait=0.3, jitter=0.05)
        return BulkWriter(build_client(config), config.prefix,
                          DeadLetterFile(dead_letters or tmp_path / "deadletter.jsonl"), policy,
                          layout=LAYOUT)

    return make


@pytest.fixture(scope="module")
def site(module_opensearch_config: OpenSearchConfig,
         tmp_path_factory: pytest.TempPathFactory) -> FixtureSite:
    """The fixture pages indexed once for the module: the tests using it only read."""
    config = module_opensearch_config
    return index_site(build_client(config), config, tmp_path_factory.mktemp("site"))


@pytest.fixture
def own_site(opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
             tmp_path: Path) -> FixtureSite:
    """The fixture pages indexed for this test alone (it writes, or needs the fault proxy)."""
    return index_site(opensearch_client, opensearch_config, tmp_path)


@pytest.fixture
def arxiv_api() -> Iterator[ArxivStandIn]:
    """A stand-in arXiv API on a free port; a request told to hang hangs 5 s."""
    with ArxivStandIn(hang_seconds=5) as server:
        yield server


@pytest.fixture
def indexed(opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
            tmp_path: Path) -> OpenSearchConfig:
    """The fixture pages indexed under this test's prefix (works and researchers)."""
    index_fixtures(opensearch_client, opensearch_config.prefix, tmp_path / "fixtures-dl.jsonl",
                   layout=LAYOUT)
    return opensearch_config


@pytest.fixture
def env(indexed: OpenSearchConfig, tmp_path: Path) -> dict[str, str]:
    """The environment a ``scholarindex`` command gets for the ``indexed`` cluster."""
    return cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "cli-dl.jsonl")


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own (free port, append-only file under tmp_path)."""
    if not redis_available():
        pytest.skip("redis-server not installed (make redis-deps installs Debian's)")
    with RedisServer(tmp_path / "redis") as server:
        yield server
