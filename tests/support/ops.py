"""Helpers for the ``scholarindex`` tests (no tests here): CLI runs, index facts, loads.

Plain functions on top of conftest's fixtures, like ``tests/support/search_site.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from opensearchpy import OpenSearch

from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import MAPPINGS_DIR, alias_name, alias_target, list_versions
from scholarindex.ops.cli import main
from scholarindex.ops.verify import FACET_FIELDS
from scholarindex.search.query import text_query

SCHOLARINDEX = Path(sys.executable).with_name("scholarindex")


def cli_env(config: OpenSearchConfig, **extra: str | os.PathLike[str]) -> dict[str, str]:
    """The environment the CLI reads, for ``config`` (and ``extra`` names)."""
    env = {
        "OPENSEARCH_URL": config.url, "INDEX_PREFIX": config.prefix,
        "OPENSEARCH_USER": config.user, "OPENSEARCH_PASSWORD": config.password,
        "OPENSEARCH_VERIFY_CERTS": "true" if config.verify_certs else "false",
        "OPENSEARCH_CA_CERTS": config.ca_certs, "OPENSEARCH_TIMEOUT": str(config.timeout),
        "INDEX_SHARDS": str(config.layout.shards), "INDEX_REPLICAS": str(config.layout.replicas),
    }
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_cli(args: list[str], env: Mapping[str, str], stdin: str | None = None) -> Result:
    """``scholarindex ARGS`` in-process (CliRunner: stdin is not a terminal)."""
    return CliRunner().invoke(main, args, env=dict(env), input=stdin, catch_exceptions=False)


def run_process(args: list[str], env: Mapping[str, str], cwd: Path,
                timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``.venv/bin/scholarindex ARGS`` as a real process, stdin closed."""
    return subprocess.run([str(SCHOLARINDEX), *args], env={**os.environ, **env}, cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, check=False)


def last_line(text: str) -> str:
    """The last non-empty line (where the CLI puts its one-line reason)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def indices_of(client: OpenSearch, prefix: str, name: str) -> list[str]:
    """Every concrete index of ``name`` under ``prefix``."""
    return [v.index for v in list_versions(client, prefix, name)]


def target(client: OpenSearch, prefix: str, name: str) -> str:
    """Where the alias points (it must exist)."""
    index = alias_target(client, prefix, name)
    assert index is not None, f"no alias {prefix}{name}"
    return index


def write_blocked(client: OpenSearch, index: str) -> bool:
    """Whether ``index`` refuses writes."""
    settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
    return str((settings.get("blocks") or {}).get("write", "false")).lower() == "true"


def facet_counts(client: OpenSearch, index: str, name: str) -> dict[str, list[tuple[Any, int]]]:
    """Every value of every facet with its count (the test's own, not ops.verify's code)."""
    client.indices.refresh(index=index)
    aggs = {f"f{i}": {"terms": {"field": f, "size": 10000}}
            for i, f in enumerate(FACET_FIELDS[name])}
    answer = client.search(index=index, body={"size": 0, "aggs": aggs})["aggregations"]
    return {f: sorted((b["key"], b["doc_count"]) for b in answer[f"f{i}"]["buckets"])
            for i, f in enumerate(FACET_FIELDS[name])}


def json_out(result: Result | subprocess.CompletedProcess[str]) -> Any:
    """The JSON a ``--json`` run printed on stdout."""
    return json.loads(result.stdout)


@dataclass
class SearchLoop:
    """Searches an alias over and over in a thread, counting failures and empty answers."""

    config: OpenSearchConfig
    alias: str
    words: str
    searches: int = 0
    failures: list[str] = field(default_factory=list)
    empty: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> SearchLoop:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(30)

    def _run(self) -> None:
        client = build_client(self.config)
        bodies = [{"query": {"match_all": {}}, "size": 5},
                  {"query": text_query(self.words), "size": 5}]
        while not self._stop.is_set():
            for body in bodies:
                try:
                    answer = client.search(index=self.alias, body=body)
                except Exception as exc:  # counted, not hidden: the test asserts there are none
                    self.failures.append(repr(exc)[:200])
                    continue
                self.searches += 1
                if not answer["hits"]["hits"]:
                    self.empty += 1
            time.sleep(0.005)


def first_title_words(client: OpenSearch, prefix: str) -> str:
    """Two words of some work's title: a text query that finds something."""
    alias = alias_name(prefix, "works")
    client.indices.refresh(index=alias)
    hit = client.search(index=alias, body={"size": 1, "sort": [{"work_id": "asc"}]})
    return " ".join(hit["hits"]["hits"][0]["_source"]["title"].split()[:2])


def mappings_dir(tmp_path: Path, edit: Callable[[dict[str, Any]], None],
                 name: str = "works") -> Path:
    """A copy of index_mappings/ with ``name``.json changed by ``edit``."""
    folder = tmp_path / "mappings"
    folder.mkdir(exist_ok=True)
    for source in MAPPINGS_DIR.glob("*.json"):
        body = json.loads(source.read_text(encoding="utf-8"))
        if source.stem == name:
            edit(body)
        (folder / source.name).write_text(json.dumps(body), encoding="utf-8")
    return folder
