"""BulkWriter and index helpers against a real OpenSearch-compatible server."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from bench.indexing import batches, synthetic_listings, synthetic_researchers
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter, RequestLimits
from scholarindex.indexing.changes import (
    change_from_item,
    changes_from_item,
    changes_from_records,
    enrichment_change,
    fold_change,
)
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile, read_lines
from scholarindex.indexing.indices import (
    alias_target,
    concrete_name,
    create_index,
    create_version,
    ensure_aliases,
    list_versions,
    load_mapping,
    mapping_version,
    swap_alias,
)
from scholarindex.indexing.replay import replay
from tests.support.index_contents import snapshot, untimed
from tests.support.sample_items import CHAO, T1, T2, YINMIN
from tests.support.settings import LAYOUT, RETENTION_DAYS, writer_retry_with


def test_new_documents_then_a_merge_from_another_profile(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str) -> None:
    writer = make_writer()
    first = writer.write([change_from_item(CHAO, T1),
                          change_from_item(ResearcherItem(id="chao-jin", url="u", name="Chao Jin"),
                                           T1)])
    assert (first.docs_created, first.listings_delivered, first.researchers_delivered) == (2, 1, 1)
    second = writer.write([change_from_item(YINMIN, T2)])
    assert (second.docs_created, second.docs_written, second.merged) == (0, 1, 1)
    doc = opensearch_client.get(index=f"{index_prefix}works", id="relibra")["_source"]
    assert [p["id"] for p in doc["profiles"]] == ["chao-jin", "yinmin-zhong"]
    assert doc["authors"] == ["Chao Jin", "Yinmin Zhong"]  # mixed case beats CAPS
    assert doc["sources"] == ["bzpeer", "papercards"] and doc["has_code"] is True
    researcher = opensearch_client.get(index=f"{index_prefix}researchers", id="chao-jin")
    assert researcher["_source"]["name"] == "Chao Jin"


def test_recrawl_leaves_documents_identical_but_last_seen(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str) -> None:
    writer = make_writer()
    items = [*synthetic_listings(60, per_work=2, researchers=20), *synthetic_researchers(20)]
    for batch in batches(items, 50, T1):
        writer.write(batch)
    aliases = ("works", "researchers")
    before = {a: snapshot(opensearch_client, f"{index_prefix}{a}") for a in aliases}
    report = writer.write(next(batches(items, len(items), T2)))
    assert report.docs_created == 0 and report.dead_lettered == 0
    after = {a: snapshot(opensearch_client, f"{index_prefix}{a}") for a in aliases}
    assert len(after["works"]) == 60 and len(after["researchers"]) == 20
    for alias in after:
        assert untimed(after[alias]) == untimed(before[alias])
        assert {d["last_seen"] for d in after[alias].values()} == {T2}
        assert {d["first_seen"] for d in after[alias].values()} == {T1}
    # The very same items again: nothing to write at all.
    again = writer.write(next(batches(items, len(items), T2)))
    assert again.docs_written == 0 and again.docs_unchanged == 80
    assert again.listings_delivered == 120


def test_rejected_document_is_dead_lettered_and_the_others_continue(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str, tmp_path: Path) -> None:
    writer = make_writer(dead_letters=tmp_path / "dl.jsonl")
    bad_year = {**asdict(CHAO), "work_id": "bad-year", "year": "MMXXVI"}
    bad_bool = {**asdict(ResearcherItem(id="bad", url="u", name="B")), "claimed": "maybe"}
    report = writer.write([change_from_item(bad_year, T1), change_from_item(bad_bool, T1),
                           change_from_item(CHAO, T1), change_from_item(YINMIN, T1),
                           enrichment_change("nowhere", status="none", at=T1),
                           enrichment_change("relibra", status="done", arxiv={"nope": 1}, at=T1)])
    assert report.listings_delivered == 2 and report.docs_written == 1
    assert report.dead_lettered == 4
    assert report.dead_letter_codes == {"rejected": 2, "missing_document": 1, "invalid": 1}
    lines = {letter.change.doc_id + "/" + letter.code: letter
             for _, letter in read_lines(tmp_path / "dl.jsonl") if letter}
    rejected = lines["bad-year/rejected"]
    assert "mapper_parsing_exception" in rejected.reason
    assert rejected.change.data == bad_year
    assert rejected.document is not None
    assert rejected.document["listings"][0]["year"] == "MMXXVI"
    assert "unmapped fields ['nope']" in lines["relibra/invalid"].reason
    assert set(snapshot(opensearch_client, f"{index_prefix}works")) == {"relibra"}


def test_a_document_another_writer_keeps_writing_is_delivered_not_dead_lettered(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str, tmp_path: Path) -> None:
    # Workers of one job write the same co-authored works at once; on a loaded machine a
    # listing's attempts ran out on conflicts in the soak and it was dead-lettered.
    writer = make_writer(attempts=3, dead_letters=tmp_path / "dl.jsonl")
    writer.write([change_from_item(CHAO, T1)])
    works = f"{index_prefix}works"
    rival_writes = 10  # more rounds than the policy's attempts
    send = writer.client.bulk

    def rival_first(*args: Any, **kwargs: Any) -> Any:
        nonlocal rival_writes
        if rival_writes:  # between the writer's read and its write: its write conflicts
            rival_writes -= 1
            stored = opensearch_client.get(index=works, id="relibra")["_source"]
            opensearch_client.index(index=works, id="relibra", body=stored)
        return send(*args, **kwargs)

    writer.client.bulk = rival_first
    report = writer.write([change_from_item(YINMIN, T2),
                           enrichment_change("relibra", status="none", at=T2)])
    assert rival_writes == 0 and report.conflicts >= 10
    assert report.dead_lettered == 0 and report.listings_delivered == 1
    doc = opensearch_client.get(index=works, id="relibra")["_source"]
    assert [p["id"] for p in doc["profiles"]] == ["chao-jin", "yinmin-zhong"]


def test_a_listing_and_its_enrichment_are_one_change_and_the_same_document(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str) -> None:
    arxiv = {"id": "2605.01234", "title": "ReLibra", "authors": ["Chao Jin", "Yinmin Zhong",
                                                                 "Xin Jin"],
             "categories": ["cs.DC", "cs.LG"], "primary_category": "cs.DC"}
    answer = {"status": "done", "reason": "matched", "updated_at": T2}
    items = [replace(CHAO, arxiv=arxiv, enrichment=answer),
             replace(YINMIN, arxiv=arxiv, enrichment=answer)]
    combined, _ = changes_from_records(items, T1)
    split = [change for item in items for change in changes_from_item(item, T1)]
    assert len(combined) == 2 and len(split) == 4
    report = make_writer().write(combined)
    assert (report.listings_delivered, report.enrichments_delivered, report.enrichments_carried,
            report.delivered, report.dead_lettered) == (2, 2, 2, 2, 0)
    assert report.stats()["index/enrichments_delivered"] == 2
    written = snapshot(opensearch_client, f"{index_prefix}works")
    folded: Mapping[str, Any] | None = None
    for change in sorted(split, key=lambda c: c.kind == "enrichment"):
        folded = fold_change(folded, change)
    assert written == {"relibra": json.loads(json.dumps(folded))}
    assert written["relibra"]["authors"] == ["Chao Jin", "Yinmin Zhong", "Xin Jin"]
    # The same changes sent apart, as older versions did: nothing to write.
    again = make_writer().write(split)
    assert (again.docs_unchanged, again.enrichments_delivered, again.delivered) == (1, 2, 4)


def test_enrichment_patch_lands_in_the_work(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str) -> None:
    writer = make_writer()
    patch = enrichment_change("relibra", status="done", at=T2,
                              arxiv={"id": "2605.01234", "title": "ReLibra",
                                     "primary_category": "cs.DC", "categories": ["cs.DC"]})
    report = writer.write([patch, change_from_item(CHAO, T1)])  # same batch, any order
    assert report.enrichments_delivered == 1 and report.dead_lettered == 0
    doc = opensearch_client.get(index=f"{index_prefix}works", id="relibra")["_source"]
    assert doc["arxiv_id"] == "2605.01234" and doc["enrichment"]["status"] == "done"
    opensearch_client.indices.refresh(index=f"{index_prefix}works")
    hits = opensearch_client.search(index=f"{index_prefix}works", body={
        "query": {"term": {"arxiv.primary_category": "cs.DC"}}})
    assert hits["hits"]["total"]["value"] == 1


def test_replay_gives_the_same_index_as_a_clean_write(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    items = [*synthetic_listings(30, per_work=3, researchers=12), *synthetic_researchers(12)]
    clean_prefix = opensearch_config.prefix + "clean_"
    ensure_aliases(opensearch_client, clean_prefix, layout=LAYOUT)
    clean = make_writer()
    clean.prefix = clean_prefix
    for batch in batches(items, 25, T1):
        clean.write(batch)
    # Everything dead-lettered: the writer points at a port nobody listens on.
    dead = tmp_path / "dl.jsonl"
    down = make_writer(url="http://127.0.0.1:9", attempts=2, dead_letters=dead)
    for batch in batches(items, 25, T1):
        assert down.write(batch).dead_lettered == len(batch)
    codes = {letter.code for _, letter in read_lines(dead) if letter}
    assert codes == {"unavailable"}
    with dead.open("a") as handle:
        handle.write("{not json\n")  # an unreadable line survives replay
    report = replay(dead, opensearch_client, opensearch_config.prefix, writer_retry_with(),
                    batch_size=40, retention_days=RETENTION_DAYS, layout=LAYOUT)
    assert (report.read, report.delivered, report.failed_again) == (len(items) + 1, len(items), 1)
    for alias in ("works", "researchers"):
        assert snapshot(opensearch_client, opensearch_config.prefix + alias) == \
            snapshot(opensearch_client, clean_prefix + alias)
    assert dead.read_text() == "{not json\n"
    assert not list(tmp_path.glob("dl.jsonl.replay-*"))


def test_an_index_of_the_same_version_gets_new_fields_in_place(
        opensearch_client: OpenSearch, index_prefix: str, tmp_path: Path) -> None:
    """A field added to the mapping file reaches an existing index: no document refused."""
    body = load_mapping("works")
    properties = body["mappings"]["properties"]
    del properties["work_ids"], properties["listings"]["properties"]["work_id"]
    index = concrete_name(index_prefix, "works", mapping_version("works"))
    create_index(opensearch_client, index, body)  # as created before the fields were added
    opensearch_client.indices.put_alias(index=index, name=f"{index_prefix}works")
    ensure_aliases(opensearch_client, index_prefix, layout=LAYOUT)
    live = opensearch_client.indices.get_mapping(index=index)[index]["mappings"]["properties"]
    assert "work_ids" in live and "work_id" in live["listings"]["properties"]
    writer = BulkWriter(opensearch_client, index_prefix, DeadLetterFile(tmp_path / "dl.jsonl"),
                        writer_retry_with(), layout=LAYOUT)
    report = writer.write([change_from_item(CHAO, T1)])
    assert report.listings_delivered == 1 and not (tmp_path / "dl.jsonl").exists()


def test_aliases_versions_and_swap(opensearch_client: OpenSearch, index_prefix: str) -> None:
    first = ensure_aliases(opensearch_client, index_prefix, layout=LAYOUT)
    assert ensure_aliases(opensearch_client, index_prefix, layout=LAYOUT) == first  # idempotent
    version = mapping_version("works")
    assert first[f"{index_prefix}works"] == f"{index_prefix}works-v{version}"
    rebuilt = create_version(opensearch_client, index_prefix, "works", suffix="rebuild",
                             layout=LAYOUT)
    versions = list_versions(opensearch_client, index_prefix, "works")
    assert [(v.index, v.aliased) for v in versions] == [
        (f"{index_prefix}works-v{version}", True), (rebuilt, False)]
    old = swap_alias(opensearch_client, index_prefix, "works", rebuilt)
    assert old == [f"{index_prefix}works-v{version}"]
    assert alias_target(opensearch_client, index_prefix, "works") == rebuilt
    swap_alias(opensearch_client, index_prefix, "works", old[0])  # rollback
    assert alias_target(opensearch_client, index_prefix, "works") == old[0]
    meta = opensearch_client.indices.get_mapping(index=old[0])[old[0]]["mappings"]["_meta"]
    assert meta["version"] == version
    assert json.dumps(meta)  # plain JSON, readable by the ops CLI


@pytest.mark.parametrize("query,field", [("deja", "title"), ("penalver", "authors.text")])
def test_search_folds_accents(make_writer: Callable[..., BulkWriter],
                              opensearch_client: OpenSearch, index_prefix: str,
                              query: str, field: str) -> None:
    item = WorkItem(work_id="w", title="Déjà vu in Serving", researcher_id="r",
                    researcher_name="José Luis Peñalver", authors=["José Luis Peñalver"])
    make_writer().write([change_from_item(item, T1)])
    alias = f"{index_prefix}works"
    opensearch_client.indices.refresh(index=alias)
    found = opensearch_client.search(index=alias, body={"query": {"match": {field: query}}})
    assert found["hits"]["total"]["value"] == 1
    prefix = opensearch_client.search(index=alias, body={"query": {"multi_match": {
        "query": "deja v", "type": "bool_prefix",
        "fields": ["title.sayt", "title.sayt._2gram", "title.sayt._3gram"]}}})
    assert prefix["hits"]["total"]["value"] == 1


def test_a_refused_document_in_one_of_several_requests_is_dead_lettered_alone(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig,
        tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    writer = BulkWriter(opensearch_client, opensearch_config.prefix,
                        DeadLetterFile(tmp_path / "dead.jsonl"), writer_retry_with(),
                        limits=RequestLimits(max_docs=2), layout=LAYOUT)
    items = [WorkItem(work_id=f"w{i}", title=f"Work {i}", researcher_id="r",
                      researcher_name="R", year=2026) for i in range(5)]
    bad = {**asdict(items[3]), "year": "MMXXVI"}  # the second request's second document
    report = writer.write([*(change_from_item(item, T1) for item in items[:3]),
                           change_from_item(bad, T1), change_from_item(items[4], T1)])
    assert report.bulk_requests == 3
    assert (report.docs_written, report.dead_letter_codes) == (4, {"rejected": 1})
    (_, letter), = read_lines(tmp_path / "dead.jsonl")
    assert letter is not None and letter.change.doc_id == "w3"
    assert "mapper_parsing_exception" in letter.reason
    assert set(snapshot(opensearch_client, f"{opensearch_config.prefix}works")) == {
        "w0", "w1", "w2", "w4"}


@pytest.mark.parametrize(("limits", "requests"), [
    (RequestLimits(max_docs=10, max_bytes=10 * 1024 * 1024), 4),  # 35 works, 10 a request
    (RequestLimits(max_docs=1000, max_bytes=1), 35),  # every work over the byte limit alone
    (RequestLimits(), 1),
])
def test_bulk_requests_are_cut_to_the_limits(
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig, tmp_path: Path,
        limits: RequestLimits, requests: int) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    writer = BulkWriter(opensearch_client, opensearch_config.prefix,
                        DeadLetterFile(tmp_path / "dead.jsonl"), writer_retry_with(),
                        limits=limits, layout=LAYOUT)
    items = [WorkItem(work_id=f"w{i:02}", title=f"Work {i}", researcher_id="r",
                      researcher_name="R", year=2026) for i in range(35)]
    report = writer.write(change_from_item(item, T1) for item in items)
    assert (report.docs_written, report.dead_lettered) == (35, 0)
    assert report.bulk_requests == requests
    assert len(snapshot(opensearch_client, f"{opensearch_config.prefix}works")) == 35
