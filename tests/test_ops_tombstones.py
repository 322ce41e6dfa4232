"""``scholarindex tombstones prune`` and replay's retention, against a real OpenSearch node."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import EXPIRED, read_lines
from scholarindex.indexing.documents import timestamp
from scholarindex.indexing.indices import TOMBSTONES_INDEX, alias_name
from scholarindex.indexing.tombstones import retention_cutoff
from scholarindex.ops import console
from scholarindex.ops.tombstones import PruneReport, _prune_one
from tests.support.ops import cli_env, json_out, run_cli
from tests.support.settings import RETENTION_DAYS

OLD = retention_cutoff(RETENTION_DAYS + 30)  # a month beyond the retention
OLDER = retention_cutoff(RETENTION_DAYS + 60)
RECENT = retention_cutoff(10)


def listing(researcher: str, work: str) -> dict[str, Any]:
    return asdict(WorkItem(work_id=work, title=f"Title of {work}", researcher_id=researcher,
                           researcher_name=researcher.title()))


def profile(researcher: str, work_ids: list[str]) -> dict[str, Any]:
    return asdict(ResearcherItem(id=researcher, url=f"https://x/{researcher}",
                                 name=researcher.title(), work_ids=work_ids, complete=True))


def unlisted(writer: BulkWriter, researcher: str, work: str, listed_at: str,
             unlisted_at: str) -> None:
    """``researcher`` lists ``work`` at ``listed_at`` and drops it at ``unlisted_at``.

    One profile per (researcher, work) (``ann_old``), so each profile's history is its own.
    """
    researcher = f"{researcher}_{work}"
    report = writer.write([change_from_item(profile(researcher, [work]), listed_at),
                           change_from_item(listing(researcher, work), listed_at)])
    assert report.dead_lettered == 0
    report = writer.write([change_from_item(profile(researcher, []), unlisted_at)])
    assert report.dead_lettered == 0 and report.unlisted == 1


def tombstones(client: OpenSearch, prefix: str) -> dict[str, list[tuple[str, str]]]:
    index = alias_name(prefix, TOMBSTONES_INDEX)
    client.indices.refresh(index=index)
    hits = client.search(index=index, body={"size": 100})["hits"]["hits"]
    return {h["_id"]: [(e["researcher_id"].split("_")[0], e["unlisted_at"])
                       for e in h["_source"]["unlisted"]] for h in hits}


def test_prune_removes_old_records_and_empty_tombstones(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    writer = make_writer()
    prefix = opensearch_config.prefix
    unlisted(writer, "ann", "old", OLDER, OLD)  # only an old record: the tombstone goes
    unlisted(writer, "ann", "mixed", OLDER, OLD)  # an old and a recent record: one stays
    unlisted(writer, "bob", "mixed", OLDER, RECENT)
    unlisted(writer, "cy", "young", OLDER, RECENT)  # untouched
    before = tombstones(opensearch_client, prefix)
    assert set(before) == {"old", "mixed", "young"}

    dry = run_cli(["tombstones", "prune", "--dry-run", "--json"], cli_env(opensearch_config))
    assert dry.exit_code == 0, dry.output
    assert {k: json_out(dry)[k] for k in ("read", "records_pruned", "updated", "deleted",
                                          "dry_run")} == {
        "read": 2, "records_pruned": 2, "updated": 1, "deleted": 1, "dry_run": True}
    assert tombstones(opensearch_client, prefix) == before  # nothing written

    result = run_cli(["tombstones", "prune", "--json"], cli_env(opensearch_config))
    assert result.exit_code == 0, result.output
    out = json_out(result)
    assert {k: out[k] for k in ("ok", "read", "records_pruned", "updated", "deleted",
                                "conflicts", "left", "older_than_days")} == {
        "ok": True, "read": 2, "records_pruned": 2, "updated": 1, "deleted": 1,
        "conflicts": 0, "left": 0, "older_than_days": RETENTION_DAYS}
    assert tombstones(opensearch_client, prefix) == {
        "mixed": [("bob", before["mixed"][1][1])], "young": before["young"]}

    again = run_cli(["tombstones", "prune", "--json"], cli_env(opensearch_config))
    assert (json_out(again)["read"], json_out(again)["records_pruned"]) == (0, 0)
    text = run_cli(["tombstones", "prune"], cli_env(opensearch_config))
    assert "read 0 tombstone(s), pruned 0 record(s)" in text.output

    # The writer still works on a work whose tombstone was deleted: a new unlist makes one.
    unlisted(writer, "ann", "old", RECENT, timestamp())
    assert [who for who, _ in tombstones(opensearch_client, prefix)["old"]] == ["ann"]


def test_prune_below_the_retention_is_refused(opensearch_config: OpenSearchConfig) -> None:
    result = run_cli(["tombstones", "prune", "--older-than", str(RETENTION_DAYS - 1)],
                     cli_env(opensearch_config))
    assert result.exit_code == console.EXIT_USAGE
    assert "below TOMBSTONE_RETENTION_DAYS" in result.output
    # A shorter retention, declared for replay too, is how to prune sooner.
    shorter = run_cli(["tombstones", "prune", "--older-than", "5", "--json"],
                      cli_env(opensearch_config, TOMBSTONE_RETENTION_DAYS="5"))
    assert shorter.exit_code == 0, shorter.output
    assert json_out(shorter)["older_than_days"] == 5


def test_a_concurrent_unlist_between_read_and_write_is_not_lost(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    writer = make_writer()
    prefix = opensearch_config.prefix
    index = alias_name(prefix, TOMBSTONES_INDEX)
    for deleting in (True, False):  # the prune would delete / would update the tombstone
        work = f"raced{deleting}"
        unlisted(writer, "ann", work, OLDER, OLD)
        if not deleting:
            unlisted(writer, "cy", work, OLDER, RECENT)
        stale = opensearch_client.get(index=index, id=work)  # prune read this...
        unlisted(writer, "bob", work, OLDER, RECENT)  # ...then a crawl unlisted again
        report = PruneReport(index=index, cutoff=retention_cutoff(RETENTION_DAYS),
                             dry_run=False)
        _prune_one(opensearch_client, index, stale, report.cutoff, False, report)
        assert (report.conflicts, report.records_pruned, report.left) == (1, 1, 0)
        assert (report.updated, report.deleted) == (1, 0)  # bob's record keeps it alive
        kept = [who for who, _ in tombstones(opensearch_client, prefix)[work]]
        assert kept == (["bob"] if deleting else ["bob", "cy"])


def test_replay_sets_aside_listings_older_than_the_retention(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    dead = tmp_path / "dl.jsonl"
    unreachable = make_writer(url="http://127.0.0.1:9", attempts=1, dead_letters=dead)
    report = unreachable.write([change_from_item(listing("ann", "ancient"), OLD),
                                change_from_item(listing("ann", "fresh"), RECENT)])
    assert report.dead_lettered == 2

    result = run_cli(["replay", str(dead), "--json"], cli_env(opensearch_config))

    assert result.exit_code == 0, result.output
    out = json_out(result)
    assert (out["read"], out["delivered"], out["expired"], out["failed_again"]) == (2, 1, 1, 0)
    assert out["expired_path"] == f"{dead}.expired"
    set_aside = [letter for _, letter in read_lines(f"{dead}.expired")]
    assert [(x.change.doc_id, x.code) for x in set_aside if x] == [("ancient", EXPIRED)]
    assert "TOMBSTONE_RETENTION_DAYS" in set_aside[0].reason  # type: ignore[union-attr]
    assert not dead.exists()  # nothing left to replay
    works = alias_name(opensearch_config.prefix, "works")
    opensearch_client.indices.refresh(index=works)
    assert opensearch_client.exists(index=works, id="fresh")
    assert not opensearch_client.exists(index=works, id="ancient")
    text = run_cli(["replay", str(dead)], cli_env(opensearch_config))
    assert "nothing waiting" in text.output  # the expired file is not replayed by default
