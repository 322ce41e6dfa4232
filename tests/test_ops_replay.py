"""``scholarindex replay``: dead letters re-delivered; those failing again stay, with the reason."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from opensearchpy import OpenSearch

from scholarindex.core.items import WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import (
    change_from_item,
    changes_from_item,
    changes_from_records,
    enrichment_change,
)
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import MISSING, DeadLetterFile, dead_letter, read_lines
from scholarindex.indexing.indices import alias_name, alias_target, ensure_aliases, set_write_block
from scholarindex.indexing.replay import replay
from scholarindex.ops import console
from tests.support.faultproxy import FaultProxy
from tests.support.index_contents import snapshot
from tests.support.ops import cli_env, json_out, last_line, run_cli
from tests.support.settings import LAYOUT, RETENTION_DAYS, writer_retry_with

SEEN = "2026-11-22T00:00:00Z"


def listing(n: int) -> WorkItem:
    return WorkItem(work_id=f"replayed{n}", title=f"Replayed work {n}", researcher_id="r1",
                    researcher_name="Ada Replay", year=2024)


def test_replay_delivers_and_keeps_what_fails_again(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    path = tmp_path / "dl.jsonl"
    DeadLetterFile(path).write([
        dead_letter(change_from_item(listing(1), SEEN), "unavailable", "cluster down"),
        dead_letter(change_from_item(listing(2), SEEN), "unavailable", "cluster down"),
        # An enrichment for a work the index does not hold: fails again.
        dead_letter(enrichment_change("no-such-work", status="none"), MISSING, "old reason"),
    ])

    result = run_cli(["replay", str(path), "--json"], cli_env(opensearch_config))

    assert result.exit_code == console.EXIT_FAILED
    assert json_out(result) | {"fatal": None} == {
        "ok": False, "path": str(path), "read": 3, "delivered": 2, "failed_again": 1,
        "unreadable": 0, "ignored": 0, "fatal": None, "expired": 0,
        "expired_path": f"{path}.expired"}
    assert "1 change(s) failed again" in last_line(result.stderr)
    kept = [letter for _, letter in read_lines(path)]
    assert len(kept) == 1 and kept[0] is not None
    assert kept[0].change.doc_id == "no-such-work" and kept[0].code == MISSING
    assert kept[0].reason != "old reason" and "not indexed" in kept[0].reason  # the new one
    docs = snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works"))
    assert {"replayed1", "replayed2"} <= set(docs)


def test_replay_folds_listings_with_their_enrichment_as_one_line_or_two(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    """A file from an older version holds a listing's enrichment as a line of its own;
    a newer one holds it in the listing's line: replayed, the same documents."""
    answers = [({"id": "2601.00004", "title": "Replayed work 4", "authors": ["Ada Replay"],
                 "categories": ["cs.DL"]}, {"status": "done", "reason": "matched",
                                            "updated_at": SEEN}),
               (None, {"status": "none", "reason": "no match", "updated_at": SEEN})]
    items = [replace(listing(4 + n), arxiv=arxiv, enrichment=answer)
             for n, (arxiv, answer) in enumerate(answers)]
    separate = [c for item in items for c in changes_from_item(item, SEEN)]
    carried, _ = changes_from_records(items, SEEN)
    assert [c.kind for c in separate] == ["work", "enrichment"] * 2 and len(carried) == 2
    documents = {}
    for name, changes in (("older", separate), ("newer", carried)):
        path = tmp_path / f"{name}.jsonl"
        DeadLetterFile(path).write([dead_letter(c, "unavailable", "down") for c in changes])
        assert [letter.change for _, letter in read_lines(path) if letter] == changes
        prefix = f"{opensearch_config.prefix}{name}-"
        report = replay(path, opensearch_client, prefix, writer_retry_with(),
                        retention_days=RETENTION_DAYS, layout=LAYOUT)
        assert (report.read, report.delivered, report.failed_again) == (len(changes),) * 2 + (0,)
        assert report.write.enrichments_delivered == 2
        documents[name] = snapshot(opensearch_client, alias_name(prefix, "works"))
    assert documents["older"] == documents["newer"]
    assert documents["newer"]["replayed4"]["arxiv_id"] == "2601.00004"
    assert documents["newer"]["replayed5"]["enrichment"]["status"] == "none"


def test_replay_reads_the_configured_file_and_says_when_nothing_waits(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    path = tmp_path / "configured.jsonl"
    env = cli_env(opensearch_config, INDEX_DEADLETTER_PATH=path)
    empty = run_cli(["replay"], env)
    assert empty.exit_code == 0 and f"nothing waiting in {path}" in empty.stdout

    DeadLetterFile(path).write([dead_letter(change_from_item(listing(3), SEEN), "x", "y")])
    done = run_cli(["replay"], env)
    assert done.exit_code == 0, done.output
    assert "read 1, delivered 1, failed again 0" in done.stdout
    assert not path.exists() or not path.read_text().strip()


def test_writes_refused_by_a_frozen_index_come_back_with_replay(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter], tmp_path: Path) -> None:
    """What a crawl writing during a reindex's freeze gets: a 403, a dead letter, a replay."""
    dead = tmp_path / "crawl-dl.jsonl"
    writer = make_writer(dead_letters=dead)
    prefix = opensearch_config.prefix
    live = alias_target(opensearch_client, prefix, "works")
    assert live is not None
    set_write_block(opensearch_client, live, True)
    report = writer.write([change_from_item(listing(n), SEEN) for n in range(4)])
    assert report.dead_lettered == 4
    assert all("blocked" in letter.reason for _, letter in read_lines(dead) if letter)
    set_write_block(opensearch_client, live, False)  # the switch happened; writes go on

    result = run_cli(["replay", str(dead)], cli_env(opensearch_config))
    assert result.exit_code == 0, result.output
    docs = snapshot(opensearch_client, alias_name(prefix, "works"))
    assert {f"replayed{n}" for n in range(4)} <= set(docs)


def test_replay_with_the_cluster_down_exits_3_and_keeps_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dl.jsonl"
    DeadLetterFile(path).write([dead_letter(change_from_item(listing(9), SEEN), "x", "y")])
    before = path.read_text()
    env = {"OPENSEARCH_URL": "http://127.0.0.1:9", "INDEX_PREFIX": "p_", "OPENSEARCH_TIMEOUT": "2"}
    result = run_cli(["replay", str(path)], env)
    assert result.exit_code == console.EXIT_UNAVAILABLE
    assert "http://127.0.0.1:9" in last_line(result.stderr)
    assert path.read_text() == before


def test_replay_refused_by_the_cluster_exits_3_and_keeps_the_file(
        fault_proxy: FaultProxy, opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    """Wrong credentials are "unavailable" too: nothing is read from the file."""
    path = tmp_path / "dl.jsonl"
    DeadLetterFile(path).write([dead_letter(change_from_item(listing(8), SEEN), "x", "y")])
    before = path.read_text()
    fault_proxy.fail_next(1, 401)
    result = run_cli(["replay", str(path)], cli_env(replace(opensearch_config,
                                                            url=fault_proxy.url)))
    assert result.exit_code == console.EXIT_UNAVAILABLE, result.output
    assert fault_proxy.faults_injected == 1
    assert path.read_text() == before


def test_replay_losing_the_cluster_mid_way_exits_3_with_the_lines_back(
        fault_proxy: FaultProxy, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    path = tmp_path / "dl.jsonl"
    DeadLetterFile(path).write([dead_letter(change_from_item(listing(n), SEEN), "x", "y")
                                for n in range(3)])
    fault_proxy.fail_next(1, 401, match="_mget")  # the aliases answer, the writes do not
    result = run_cli(["replay", str(path)], cli_env(replace(opensearch_config,
                                                            url=fault_proxy.url)))
    assert result.exit_code == console.EXIT_UNAVAILABLE, result.output
    assert fault_proxy.faults_injected == 1
    assert "replay stopped" in last_line(result.stderr)
    kept = [letter.change.doc_id for _, letter in read_lines(path) if letter is not None]
    assert sorted(kept) == [f"replayed{n}" for n in range(3)]
    assert not list(tmp_path.glob("dl.jsonl.replay-*"))  # processed to the end, then removed
