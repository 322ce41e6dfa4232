"""``scholarindex reindex`` and ``rollback`` against the real local server.

Searches keep working, a writer loses nothing, failures leave the alias alone,
``--rebuild`` applies code changes, nothing destructive happens without --yes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

import scholarindex.indexing.documents
from scholarindex.core.items import WorkItem
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import read_lines
from scholarindex.indexing.indices import alias_name
from scholarindex.indexing.shapes import ListingEntry
from scholarindex.ops import console
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot
from tests.support.ops import (
    SearchLoop,
    cli_env,
    facet_counts,
    first_title_words,
    indices_of,
    json_out,
    last_line,
    mappings_dir,
    run_cli,
    run_process,
    target,
    write_blocked,
)

SEEN = "2026-11-22T00:00:00Z"


# --- the switch under load ---------------------------------------------------------------

def test_reindex_under_search_load_then_rollback(indexed: OpenSearchConfig,
                                                 opensearch_client: OpenSearch,
                                                 env: dict[str, str]) -> None:
    client, prefix = opensearch_client, indexed.prefix
    before = {n: target(client, prefix, n) for n in ("works", "researchers")}
    facets_before = facet_counts(client, alias_name(prefix, "works"), "works")
    count_before = client.count(index=alias_name(prefix, "works"))["count"]

    words = first_title_words(client, prefix)
    with SearchLoop(indexed, alias_name(prefix, "works"), words) as loop:
        # Small slices: the copy takes several requests, searches run between them.
        result = run_cli(["reindex", "--yes", "--batch-size", "7", "--json"], env)
        moved = {n: target(client, prefix, n) for n in ("works", "researchers")}
        blocked = {n: write_blocked(client, before[n]) for n in ("works", "researchers")}
        back = run_cli(["rollback", "--yes", "--index", "works"], env)

    assert result.exit_code == 0, result.output
    report = json_out(result)
    assert report["ok"] and [r["name"] for r in report["results"]] == ["works", "researchers"]
    for name in ("works", "researchers"):
        assert moved[name] != before[name]
        assert moved[name] == report["results"][["works", "researchers"].index(name)]["new_index"]
        assert blocked[name]  # kept for a rollback, refusing writes
    assert client.count(index=moved["works"])["count"] == count_before
    assert facet_counts(client, moved["works"], "works") == facets_before
    assert facet_counts(client, before["works"], "works") == facets_before

    assert back.exit_code == 0, back.output
    assert target(client, prefix, "works") == before["works"]
    assert not write_blocked(client, before["works"])
    assert write_blocked(client, moved["works"])
    assert target(client, prefix, "researchers") == moved["researchers"]

    assert loop.searches > 20
    assert loop.failures == [] and loop.empty == 0


def test_keep_deletes_older_versions(indexed: OpenSearchConfig, opensearch_client: OpenSearch,
                                     env: dict[str, str]) -> None:
    first = target(opensearch_client, indexed.prefix, "researchers")
    for _ in range(3):
        assert run_cli(["reindex", "--yes", "--index", "researchers", "--keep", "1"],
                       env).exit_code == 0
    live = target(opensearch_client, indexed.prefix, "researchers")
    family = indices_of(opensearch_client, indexed.prefix, "researchers")
    assert len(family) == 2 and live in family and first not in family
    # The one kept is the version before the live one: rollback goes there.
    rolled = run_cli(["rollback", "--yes", "--index", "researchers", "--json"], env)
    assert rolled.exit_code == 0, rolled.output
    assert json_out(rolled)["moves"][0]["from"] == live
    assert target(opensearch_client, indexed.prefix, "researchers") != live


# --- a writer during the reindex -----------------------------------------------------------

class Writer:
    """A crawl stand-in: writes new works and new listings of existing works, batch by batch."""

    def __init__(self, writer: BulkWriter, existing: dict[str, str]):
        self.writer = writer
        self.existing = sorted(existing.items())  # (work_id, title)
        self.expected: dict[str, set[str]] = {}  # work_id -> researcher ids it must list
        self.report = WriteReport()
        self.batches = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        n = 0
        while not self.stop.is_set():
            items = []
            for _ in range(4):
                items.append(WorkItem(work_id=f"during{n:05d}", title=f"Written during reindex {n}",
                                      researcher_id="r-writer", researcher_name="Wren Writer",
                                      year=2020 + n % 6, category="DC", source="papercards"))
                work_id, title = self.existing[n % len(self.existing)]
                items.append(WorkItem(work_id=work_id, title=title, researcher_id=f"r-extra{n}",
                                      researcher_name=f"Extra Person {n}", year=2021))
                n += 1
            report = self.writer.write([change_from_item(i, SEEN) for i in items])
            self.report.add(report)
            for item in items:
                self.expected.setdefault(item.work_id, set()).add(item.researcher_id)
            self.batches += 1
            self.stop.wait(0.05)  # a crawl's pace, not a tight loop starving the server


def test_writes_during_reindex_are_not_lost(indexed: OpenSearchConfig,
                                            opensearch_client: OpenSearch,
                                            make_writer: Callable[..., BulkWriter],
                                            fault_proxy: FaultProxy, tmp_path: Path) -> None:
    client, prefix = opensearch_client, indexed.prefix
    works = alias_name(prefix, "works")
    existing = {k: v["title"] for k, v in snapshot(client, works).items()}
    dead = tmp_path / "writer-dl.jsonl"
    writer = Writer(make_writer(dead_letters=dead), existing)
    # The reindex goes through the proxy, each copy slice held 0.3 s: the crawl stand-in
    # (direct) writes while the copy runs.
    for _ in range(12):
        fault_proxy.delay_next(1, 0.3, match="/_reindex")
    env = cli_env(indexed, OPENSEARCH_URL=fault_proxy.url,
                  INDEX_DEADLETTER_PATH=tmp_path / "cli-dl.jsonl")
    old = target(client, prefix, "works")

    writer.thread.start()
    try:
        result = run_cli(["reindex", "--yes", "--index", "works", "--batch-size", "5",
                          "--json"], env)
    finally:
        writer.stop.set()
        writer.thread.join(60)
    assert result.exit_code == 0, result.output
    report = json_out(result)["results"][0]
    assert target(client, prefix, "works") == report["new_index"] != old
    assert writer.batches >= 3
    assert report["caught_up"] > 0  # writes landed during the copy and were copied again

    # Writes refused in the moment the old index was frozen went to the dead letter,
    # with the block as their reason; a replay delivers them.
    letters = list(read_lines(dead)) if dead.exists() else []
    assert all("blocked" in letter.reason for _, letter in letters if letter), letters
    if letters:
        replayed = run_cli(["replay", str(dead)], cli_env(indexed))
        assert replayed.exit_code == 0, replayed.output
    assert writer.report.delivered + len(letters) == sum(len(v) for v in writer.expected.values())

    docs = snapshot(client, works)
    for work_id, researchers in writer.expected.items():
        assert work_id in docs, work_id
        listed = {e["researcher_id"] for e in docs[work_id]["listings"]}
        assert researchers <= listed, (work_id, researchers - listed)
    for work_id in existing:  # nothing the crawl had before went missing
        assert work_id in docs


# --- failures leave the alias alone ------------------------------------------------------

def test_server_error_during_copy(indexed: OpenSearchConfig, opensearch_client: OpenSearch,
                                  fault_proxy: FaultProxy, tmp_path: Path) -> None:
    client, prefix = opensearch_client, indexed.prefix
    old = target(client, prefix, "works")
    fault_proxy.delay_next(1, 0.01, match="/_reindex")  # the first slice goes through...
    fault_proxy.fail_next(1, 503, match="/_reindex")  # ...the second gets a 503
    env = cli_env(indexed, OPENSEARCH_URL=fault_proxy.url)

    result = run_cli(["reindex", "--yes", "--index", "works", "--batch-size", "10"], env)

    assert result.exit_code == console.EXIT_UNAVAILABLE
    reason = last_line(result.stderr)
    assert "503" in reason and f"still points at {old}" in reason and "removed" in reason
    assert fault_proxy.count("/_reindex") == 2
    assert target(client, prefix, "works") == old
    assert indices_of(client, prefix, "works") == [old]
    assert not write_blocked(client, old)


def test_mapping_the_server_rejects(indexed: OpenSearchConfig, opensearch_client: OpenSearch,
                                    tmp_path: Path) -> None:
    def bad(body: dict[str, Any]) -> None:
        body["mappings"]["properties"]["title"]["type"] = "no_such_type"
    old = target(opensearch_client, indexed.prefix, "works")
    env = cli_env(indexed, INDEX_MAPPINGS_DIR=mappings_dir(tmp_path, bad))

    result = run_cli(["reindex", "--yes", "--index", "works"], env)

    assert result.exit_code == console.EXIT_FAILED
    reason = last_line(result.stderr)
    assert "mapper_parsing_exception" in reason and "no_such_type" in reason
    assert f"still points at {old}" in reason
    assert target(opensearch_client, indexed.prefix, "works") == old
    assert indices_of(opensearch_client, indexed.prefix, "works") == [old]


def test_failure_at_the_switch_unblocks_and_cleans_up(indexed: OpenSearchConfig,
                                                      opensearch_client: OpenSearch,
                                                      fault_proxy: FaultProxy) -> None:
    client, prefix = opensearch_client, indexed.prefix
    old = target(client, prefix, "researchers")
    fault_proxy.fail_next(1, 500, match="POST /_aliases")
    env = cli_env(indexed, OPENSEARCH_URL=fault_proxy.url)

    result = run_cli(["reindex", "--yes", "--index", "researchers"], env)

    assert result.exit_code != 0
    assert "swap alias" in last_line(result.stderr)
    assert target(client, prefix, "researchers") == old
    assert indices_of(client, prefix, "researchers") == [old]
    assert not write_blocked(client, old)  # the crawl can write again


def test_facet_difference_blocks_the_switch_unless_accepted(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, tmp_path: Path) -> None:
    def drop_categories(body: dict[str, Any]) -> None:  # "CV" is now too long to index
        body["mappings"]["properties"]["categories"]["ignore_above"] = 1
        body["mappings"]["_meta"]["version"] = 2
    old = target(opensearch_client, indexed.prefix, "works")
    env = cli_env(indexed, INDEX_MAPPINGS_DIR=mappings_dir(tmp_path, drop_categories))

    refused = run_cli(["reindex", "--yes", "--index", "works"], env)
    assert refused.exit_code == console.EXIT_FAILED
    assert "facet categories" in last_line(refused.stderr)
    assert target(opensearch_client, indexed.prefix, "works") == old
    assert indices_of(opensearch_client, indexed.prefix, "works") == [old]

    accepted = run_cli(["reindex", "--yes", "--index", "works", "--accept-differences",
                        "--json"], env)
    assert accepted.exit_code == 0, accepted.output
    report = json_out(accepted)["results"][0]
    assert report["new_index"].endswith("works-v2")
    assert any("facet categories" in d for d in report["differences"])
    assert target(opensearch_client, indexed.prefix, "works") == report["new_index"]


# --- --rebuild -----------------------------------------------------------------------------

def test_rebuild_applies_a_changed_transform(indexed: OpenSearchConfig,
                                             opensearch_client: OpenSearch, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def with_field(body: dict[str, Any]) -> None:
        body["mappings"]["properties"]["listing_count"] = {"type": "integer"}
        body["mappings"]["_meta"]["version"] = 2
    original = scholarindex.indexing.documents._work_doc

    def work_doc_with_count(work_id: str, entries: list[ListingEntry],
                            previous: Any, before: Any = None) -> dict[str, Any]:
        return original(work_id, entries, previous, before) | {"listing_count": len(entries)}

    works = alias_name(indexed.prefix, "works")
    before = snapshot(opensearch_client, works)
    assert not any("listing_count" in d for d in before.values())
    monkeypatch.setattr(scholarindex.indexing.documents, "_work_doc", work_doc_with_count)
    env = cli_env(indexed, INDEX_MAPPINGS_DIR=mappings_dir(tmp_path, with_field))

    result = run_cli(["reindex", "--yes", "--index", "works", "--rebuild", "--json"], env)

    assert result.exit_code == 0, result.output
    assert json_out(result)["results"][0]["new_index"].endswith("works-v2")
    after = snapshot(opensearch_client, works)
    assert after.keys() == before.keys()
    for work_id, doc in after.items():
        assert doc["listing_count"] == len(before[work_id]["listings"])
        assert {k: v for k, v in doc.items() if k != "listing_count"} == before[work_id]


def test_rebuild_with_unchanged_code_changes_nothing(indexed: OpenSearchConfig,
                                                     opensearch_client: OpenSearch,
                                                     env: dict[str, str]) -> None:
    before = {n: snapshot(opensearch_client, alias_name(indexed.prefix, n))
              for n in ("works", "researchers")}
    result = run_cli(["reindex", "--yes", "--rebuild"], env)
    assert result.exit_code == 0, result.output
    for name, docs in before.items():
        assert snapshot(opensearch_client, alias_name(indexed.prefix, name)) == docs


def test_rebuild_sends_a_failed_bulk_request_again(indexed: OpenSearchConfig,
                                                   opensearch_client: OpenSearch,
                                                   fault_proxy: FaultProxy, tmp_path: Path) -> None:
    """A 503 on one of the rebuild's bulk requests: that request again, nothing lost or doubled."""
    works = alias_name(indexed.prefix, "works")
    before = snapshot(opensearch_client, works)
    fault_proxy.delay_next(1, 0.01, match="/_bulk")  # the first request goes through...
    fault_proxy.fail_next(1, 503, match="/_bulk")  # ...the second gets a 503
    env = cli_env(indexed, OPENSEARCH_URL=fault_proxy.url,
                  INDEX_DEADLETTER_PATH=tmp_path / "cli-dl.jsonl")

    result = run_cli(["reindex", "--yes", "--rebuild", "--index", "works",
                      "--batch-size", "7", "--json"], env)

    assert result.exit_code == 0, result.output
    assert fault_proxy.faults_injected == 2  # the delay and the 503
    assert len(before) > 3 * 7  # several requests, the failed one in the middle
    [done] = json_out(result)["results"]
    # Copied in one pass: none left for the catch-up to find missing.
    assert (done["copied"], done["caught_up"]) == (len(before), 0)
    assert snapshot(opensearch_client, works) == before


# --- confirmation --------------------------------------------------------------------------

@pytest.mark.process
def test_without_yes_and_without_a_terminal_nothing_happens(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch, env: dict[str, str],
        tmp_path: Path) -> None:
    assert run_cli(["reindex", "--yes"], env).exit_code == 0  # something to roll back to
    family = {n: indices_of(opensearch_client, indexed.prefix, n)
              for n in ("works", "researchers")}
    live = {n: target(opensearch_client, indexed.prefix, n) for n in ("works", "researchers")}
    for args in (["reindex"], ["reindex", "--index", "works", "--rebuild"], ["rollback"]):
        result = run_cli(args, env)
        assert result.exit_code == console.EXIT_USAGE, result.output
        assert "--yes" in last_line(result.stderr)
    # A real process with stdin closed: the terminal check itself, not a stand-in.
    process = run_process(["reindex", "--index", "works"], env, cwd=tmp_path)
    assert process.returncode == console.EXIT_USAGE
    assert "not a terminal, pass --yes" in last_line(process.stderr)
    assert {n: indices_of(opensearch_client, indexed.prefix, n)
            for n in ("works", "researchers")} == family
    assert {n: target(opensearch_client, indexed.prefix, n)
            for n in ("works", "researchers")} == live


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if a person sat at a terminal."""
    monkeypatch.setattr(console, "interactive", lambda: True)
    yield


@pytest.mark.usefixtures("terminal")
def test_the_prompt_asks_and_no_means_no(indexed: OpenSearchConfig,
                                         opensearch_client: OpenSearch,
                                         env: dict[str, str]) -> None:
    old = target(opensearch_client, indexed.prefix, "works")
    declined = run_cli(["reindex", "--index", "works"], env, stdin="n\n")
    assert declined.exit_code == console.EXIT_USAGE
    assert f"{old} -> new" in declined.stderr and "not confirmed" in declined.stderr
    assert indices_of(opensearch_client, indexed.prefix, "works") == [old]
    agreed = run_cli(["reindex", "--index", "works"], env, stdin="y\n")
    assert agreed.exit_code == 0, agreed.output
    assert target(opensearch_client, indexed.prefix, "works") != old


# --- real processes: the installed entry point and the statuses a shell sees ---------------

@pytest.mark.process
def test_the_installed_command(indexed: OpenSearchConfig, opensearch_client: OpenSearch,
                               env: dict[str, str], tmp_path: Path) -> None:
    helped = run_process(["--help"], env, cwd=tmp_path)
    assert helped.returncode == 0
    for command in ("status", "reindex", "rollback", "replay", "enrich", "serve"):
        assert command in helped.stdout
        assert run_cli([command, "--help"], env).exit_code == 0

    old = target(opensearch_client, indexed.prefix, "works")
    done = run_process(["reindex", "--yes", "--index", "works", "--json"], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    new = json_out(done)["results"][0]["new_index"]
    assert target(opensearch_client, indexed.prefix, "works") == new != old

    status = run_cli(["status", "--json"], env)
    assert status.exit_code == 0, status.stderr
    works = json_out(status)["indices"][0]
    assert works["index"] == new and works["older_versions"][0]["index"] == old

    back = run_cli(["rollback", "--yes", "--index", "works"], env)
    assert back.exit_code == 0, back.stderr
    assert target(opensearch_client, indexed.prefix, "works") == old


def test_unreachable_cluster_exits_3_naming_it(tmp_path: Path) -> None:
    env = {"OPENSEARCH_URL": "http://127.0.0.1:9", "INDEX_PREFIX": "nobody_",
           "OPENSEARCH_TIMEOUT": "2"}
    for args in (["status"], ["reindex", "--yes"], ["rollback", "--yes"]):
        result = run_cli(args, env)
        assert result.exit_code == console.EXIT_UNAVAILABLE, (args, result.stderr)
        assert "http://127.0.0.1:9" in last_line(result.stderr)


@pytest.mark.process
def test_unreachable_cluster_exit_status_reaches_the_shell(tmp_path: Path) -> None:
    env = {"OPENSEARCH_URL": "http://127.0.0.1:9", "INDEX_PREFIX": "nobody_",
           "OPENSEARCH_TIMEOUT": "2"}
    result = run_process(["status"], env, cwd=tmp_path)
    assert result.returncode == console.EXIT_UNAVAILABLE, result.stderr
    assert "http://127.0.0.1:9" in last_line(result.stderr)


def test_a_reindex_into_several_shards_records_each_shards_mark_and_rolls_back(
        indexed: OpenSearchConfig, opensearch_client: OpenSearch,
        env: dict[str, str]) -> None:
    client, prefix = opensearch_client, indexed.prefix
    before = target(client, prefix, "works")
    count = client.count(index=alias_name(prefix, "works"))["count"]
    sharded = {**env, "INDEX_SHARDS": "2"}
    moved = run_cli(["reindex", "--yes", "--index", "works"], sharded)
    assert moved.exit_code == 0, moved.output
    live = target(client, prefix, "works")
    settings = client.indices.get_settings(index=live)[live]["settings"]["index"]
    assert settings["number_of_shards"] == "2"
    assert client.count(index=alias_name(prefix, "works"))["count"] == count
    # _seq_no orders writes within a shard only: the mark is one per shard.
    meta = client.indices.get_mapping(index=live)[live]["mappings"]["_meta"]
    assert sorted(meta["live_since"]["shards"]) == ["0", "1"]
    assert meta["live_since"]["from"] == before
    back = run_cli(["rollback", "--yes", "--index", "works", "--json"], sharded)
    assert back.exit_code == 0, back.output
    assert json_out(back)["moves"][0]["carried"] == []  # nothing written since
    assert target(client, prefix, "works") == before
