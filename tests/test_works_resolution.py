"""The resolution pass against OpenSearch: one document per paper, whatever the order.

Listings of one paper printed differently are joined, generic titles stay apart
without author evidence, ops' decisions hold through re-crawls, a listing whose
title changed leaves its old work, two passes at once agree, and the index after the
last pass does not depend on the order the listings arrived or when passes ran.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from scholarindex.indexing import resolution
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item, unlist_change
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.decisions import DecisionStore, decision
from scholarindex.indexing.identity import WorkJoiner
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.resolution import ResolutionPass
from tests.support.crawl import crawl_profiles
from tests.support.index_contents import snapshot, untimed
from tests.support.settings import LAYOUT
from tests.support.works import (
    CUT,
    LISTINGS,
    ORIGINAL,
    OTHER,
    PAPER,
    POLICY,
    PREFACE_1,
    PREFACE_2,
    RELIBRA,
    SEED,
    T1,
    T2,
    T3,
    TYPO,
    listing,
    profile_page,
)


def write(writer: BulkWriter, items: list[dict[str, Any]], at: str = T1) -> None:
    report = writer.write([change_from_item(item, at) for item in items])
    assert not report.fatal and not report.dead_lettered


def resolved(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    ResolutionPass(client, prefix, POLICY, layout=LAYOUT).run()
    return snapshot(client, alias_name(prefix, "works"))


def titles_by_doc(docs: dict[str, dict[str, Any]]) -> list[list[str]]:
    return sorted(sorted(e["title"] for e in d["listings"]) for d in docs.values())


def test_the_pass_joins_one_paper_printed_three_ways_and_nothing_else(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    write(make_writer(), LISTINGS)
    before = snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works"))
    assert len(before) == 6

    docs = resolved(opensearch_client, opensearch_config.prefix)

    assert titles_by_doc(docs) == sorted([
        sorted([PAPER, TYPO["title"], CUT["title"]]), [OTHER["title"]], ["Preface"], ["Preface"]])
    joined = next(d for d in docs.values() if len(d["listings"]) == 3)
    assert joined["work_id"] == min(joined["work_ids"])
    assert {link["by"] for link in joined["resolution"]} == {"match"}
    assert all(link["score"] > 0 and link["evidence"] for link in joined["resolution"])
    # A second pass changes nothing.
    assert resolved(opensearch_client, opensearch_config.prefix) == docs


def test_later_listings_of_an_absorbed_id_follow_it_and_recrawls_keep_one_document(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    writer = make_writer()
    write(writer, LISTINGS)
    first = resolved(opensearch_client, opensearch_config.prefix)
    write(writer, LISTINGS, T2)  # the next crawl: every id, absorbed ones too
    again = snapshot(opensearch_client, alias_name(opensearch_config.prefix, "works"))
    assert set(again) == set(first)
    assert untimed(resolved(opensearch_client, opensearch_config.prefix)) == untimed(first)


def test_a_kept_apart_pair_stays_apart_through_recrawls_and_a_join_holds(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    prefix = opensearch_config.prefix
    writer = make_writer()
    write(writer, LISTINGS)
    resolved(opensearch_client, prefix)
    store = DecisionStore(opensearch_client, prefix, layout=LAYOUT)
    store.record(decision("apart", ORIGINAL["work_id"], TYPO["work_id"], "different editions"))
    store.record(decision("join", PREFACE_1["work_id"], PREFACE_2["work_id"]))

    for at in (T2, T3):  # a decision, then two re-crawls
        docs = resolved(opensearch_client, prefix)
        groups = titles_by_doc(docs)
        assert not any(PAPER in g and TYPO["title"] in g for g in groups), groups
        assert ["Preface", "Preface"] in groups
        preface = next(d for d in docs.values() if d["title"] == "Preface")
        assert [link["by"] for link in preface["resolution"]] == ["manual"]
        write(writer, LISTINGS, at)

    assert store.forget(ORIGINAL["work_id"], TYPO["work_id"]) == 1
    docs = resolved(opensearch_client, prefix)
    assert any(PAPER in g and TYPO["title"] in g for g in titles_by_doc(docs))


def test_a_listing_whose_title_changes_leaves_its_old_work(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    prefix = opensearch_config.prefix
    writer = make_writer()
    write(writer, LISTINGS)
    resolved(opensearch_client, prefix)
    # Bob's profile now prints another paper where the typo was: a new work_id, and the
    # complete page no longer lists the old one.
    renamed = listing("Adaptive Indexing for Column Stores", "Bob Stone")
    report = writer.write([change_from_item(renamed, T2),
                           unlist_change(TYPO["work_id"], TYPO["researcher_id"], T2)])
    assert not report.fatal
    docs = resolved(opensearch_client, prefix)
    groups = titles_by_doc(docs)
    assert sorted([PAPER, CUT["title"]]) in groups
    assert [renamed["title"]] in groups
    assert not any(TYPO["title"] in g for g in groups)


def test_the_resolved_index_does_not_depend_on_arrival_order_or_when_passes_ran(
        opensearch_url: str, opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    """Listings in random orders and batches, passes between random batches: after the
    last pass every index is the same."""
    finals = []
    for seed in range(5):
        rnd = random.Random(seed)
        config = replace(opensearch_config, prefix=f"{opensearch_config.prefix}o{seed}_")
        client = build_client(config)
        ensure_aliases(client, config.prefix, layout=LAYOUT)
        writer = BulkWriter(client, config.prefix, DeadLetterFile(tmp_path / f"{seed}.jsonl"),
                            POLICY, layout=LAYOUT)
        items = LISTINGS[:]
        rnd.shuffle(items)
        while items:
            size = rnd.randint(1, 3)
            batch, items = items[:size], items[size:]
            write(writer, batch)
            if rnd.random() < 0.5:
                ResolutionPass(client, config.prefix, POLICY, layout=LAYOUT).run()
        finals.append(resolved(client, config.prefix))
    assert all(final == finals[0] for final in finals[1:])
    assert len(finals[0]) == 4


def test_regroups_made_together_conflict_each_on_its_own(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter]) -> None:
    # Each step of several regroups goes in one request; a document a crawl changed
    # since the plan stops its own regroup, not the others.
    stream = "Adaptive Load Shedding for Windowed Stream Joins"
    items = [listing(PAPER, "Ann Lee", authors=("Ann Lee", "Bob Stone")), TYPO,
             listing(stream, "Eve Hart", authors=("Eve Hart", "Fay Long")),
             listing("Adaptive Load Sheding for Windowed Stream Joins", "Fay Long",
                     authors=("Eve Hart", "Fay Long"))]
    write(make_writer(), items)
    prefix = opensearch_config.prefix
    changes = ResolutionPass(opensearch_client, prefix, POLICY, layout=LAYOUT).run(
        dry_run=True).changes
    assert len(changes) == 2
    works = alias_name(prefix, "works")
    before = snapshot(opensearch_client, works)
    by_title = {before[d]["listings"][0]["title"]: d for c in changes for d in c["documents"]}
    gone = by_title[stream]  # unlisted meanwhile
    opensearch_client.delete(index=works, id=gone, refresh=True)

    joiner = WorkJoiner(opensearch_client, prefix, POLICY, layout=LAYOUT)
    reports = joiner.regroup_many([({d: [d] for d in c["documents"]}, c["works"], [])
                                   for c in changes])

    done = {by_title[PAPER] in c["documents"]: r for c, r in zip(changes, reports, strict=True)}
    assert not done[True].conflict and done[True].written and len(done[True].deleted) == 1
    assert done[False].conflict and not done[False].written and not done[False].deleted
    docs = snapshot(opensearch_client, works)
    assert titles_by_doc(docs) == sorted([sorted([PAPER, TYPO["title"]]),
                                          ["Adaptive Load Sheding for Windowed Stream Joins"]])


def test_two_passes_at_once_agree(opensearch_client: OpenSearch,
                                  opensearch_config: OpenSearchConfig,
                                  make_writer: Callable[..., BulkWriter]) -> None:
    prefix = opensearch_config.prefix
    write(make_writer(), LISTINGS)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            ResolutionPass(build_client(opensearch_config), prefix, POLICY, layout=LAYOUT).run()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    docs = snapshot(opensearch_client, alias_name(prefix, "works"))
    assert len(docs) == 4
    assert resolved(opensearch_client, prefix) == docs


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_dry_run_writes_nothing(opensearch_client: OpenSearch,
                                  opensearch_config: OpenSearchConfig,
                                  make_writer: Callable[..., BulkWriter], dry_run: bool) -> None:
    prefix = opensearch_config.prefix
    write(make_writer(), LISTINGS)
    report = ResolutionPass(opensearch_client, prefix, POLICY, layout=LAYOUT).run(dry_run=dry_run)
    assert report.groups_changed == 1
    docs = snapshot(opensearch_client, alias_name(prefix, "works"))
    assert len(docs) == (6 if dry_run else 4)


def test_the_report_names_the_largest_work_and_a_large_one_is_a_warning(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        make_writer: Callable[..., BulkWriter], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    prefix = opensearch_config.prefix
    write(make_writer(), LISTINGS)
    one_paper = sorted(item["work_id"] for item in (ORIGINAL, TYPO, CUT))
    report = ResolutionPass(opensearch_client, prefix, POLICY, layout=LAYOUT).run()
    assert (report.largest_work, report.largest_work_id) == (3, one_paper[0])
    assert "holds 3 work ids" not in caplog.text
    monkeypatch.setattr(resolution, "LARGE_WORK", 3)
    ResolutionPass(opensearch_client, prefix, POLICY, layout=LAYOUT).run()
    assert f"work {one_paper[0]} holds 3 work ids" in caplog.text



# --- at the end of a crawl --------------------------------------------------------------

def test_a_finished_crawl_leaves_one_document_per_paper(
        tmp_path: Path, opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    typo = RELIBRA.replace("Reinforcement", "Reinforcment")
    urls = [SEED.as_uri(), profile_page(tmp_path / "ann.txt", "Ann Lee", {RELIBRA: typo})]
    prefix = opensearch_config.prefix
    result = crawl_profiles(tmp_path, {"INDEX_ENABLED": "true", "OPENSEARCH_URL":
                                       opensearch_config.url, "INDEX_PREFIX": prefix},
                            urls=",".join(urls))
    assert result.returncode == 0
    docs = snapshot(opensearch_client, alias_name(prefix, "works"))
    # Five papers listed on two profiles each: five documents, the typo joined by the pass.
    assert len(docs) == 5
    relibra = next(d for d in docs.values() if d["title"] in (RELIBRA, typo))
    assert sorted(e["title"] for e in relibra["listings"]) == sorted([RELIBRA, typo])
    assert result.stats["resolution/groups_changed"] == 1
    assert result.stats["resolution/works"] == 5


def test_a_crawl_stopped_early_or_without_the_setting_does_not_resolve(
        tmp_path: Path, opensearch_config: OpenSearchConfig) -> None:
    result = crawl_profiles(tmp_path, {"INDEX_ENABLED": "true", "OPENSEARCH_URL":
                                       opensearch_config.url, "WORKS_RESOLVE": "false",
                                       "INDEX_PREFIX": opensearch_config.prefix},
                            urls=SEED.as_uri())
    assert result.returncode == 0
    assert not any(key.startswith("resolution/") for key in result.stats)


def test_the_fixture_site_needs_no_regrouping(opensearch_client: OpenSearch,
                                              indexed: OpenSearchConfig) -> None:
    """The seed and held-out pages: no new join among them (the ReLibra near-miss title
    by another author stays apart), nothing split."""
    report = ResolutionPass(opensearch_client, indexed.prefix, POLICY,
                            layout=LAYOUT).run(dry_run=True)
    assert report.documents > 0
    assert report.changes == []
