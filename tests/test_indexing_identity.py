"""One paper under two titles: two work_ids verified as one arXiv paper become one document.

Pure merges first (order independence, idempotence), then the writer against
OpenSearch: the join, later listings/unlists/replays following the redirect, the
enrichment answer arriving after the listings, a conflict in the middle of a join,
and two writers bringing the two titles at once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from scholarindex.core.identity import work_id
from scholarindex.core.items import WorkItem
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import (
    Change,
    apply_change,
    change_from_item,
    enrichment_change,
    fold_change,
    unlist_change,
)
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile, dead_letter
from scholarindex.indexing.documents import merge_works
from scholarindex.indexing.identity import REDIRECT_PREFIX, identity_keys
from scholarindex.indexing.indices import IDENTITIES_INDEX, alias_name
from scholarindex.indexing.replay import replay
from scholarindex.indexing.shapes import WorkDoc, work_of
from scholarindex.ops.rebuild import rebuild
from tests.support.settings import LAYOUT, RETENTION_DAYS

T1, T2, T3 = "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"
EARLY = "Elastic Expert Placement for Sparse Mixture-of-Experts Training"
LATE = "ElasticMoE: Adaptive Expert Placement for Efficient Sparse Mixture-of-Experts Training"
EARLY_ID, LATE_ID = work_id(EARLY), work_id(LATE)
CANONICAL, OTHER = sorted([EARLY_ID, LATE_ID])
ARXIV = {"id": "2405.01234", "title": LATE, "authors": ["Lena Hofmann", "Ada Arxivson"],
         "categories": ["cs.DC", "cs.LG"], "doi": "10.1000/ElasticMoE"}


def listing(title: str, researcher: str, **fields: Any) -> dict[str, Any]:
    return asdict(WorkItem(work_id=work_id(title), title=title, researcher_id=researcher,
                           researcher_name=researcher.replace("-", " ").title(), year=2024,
                           **fields))


def listed(title: str, researcher: str, at: str = T1, **fields: Any) -> Change:
    return change_from_item(listing(title, researcher, **fields), at)


def matched(title: str, at: str = T1, arxiv: dict | None = None) -> Change:
    return enrichment_change(work_id(title), status="done", arxiv=arxiv or ARXIV, at=at)


def doc_of(*changes: Change) -> WorkDoc:
    doc: Mapping[str, Any] | None = None
    for change in changes:
        doc = apply_change(doc, change)
    assert doc is not None
    return work_of(doc)


# --- pure merges -------------------------------------------------------------------------

EARLY_DOC = doc_of(listed(EARLY, "lena-hofmann"), matched(EARLY, T2))
LATE_DOC = doc_of(listed(LATE, "ada-arxivson", T2), listed(LATE, "lena-hofmann", T3),
                  matched(LATE, T3))


def test_merge_keeps_every_listing_under_the_smallest_id() -> None:
    merged = merge_works([EARLY_DOC, LATE_DOC])
    assert merged["work_id"] == CANONICAL and merged["work_ids"] == [CANONICAL, OTHER]
    # One profile listing both titles keeps both listings, one profile entry.
    assert sorted((e["researcher_id"], e["work_id"]) for e in merged["listings"]) == sorted([
        ("lena-hofmann", EARLY_ID), ("ada-arxivson", LATE_ID), ("lena-hofmann", LATE_ID)])
    assert [p["id"] for p in merged["profiles"]] == ["ada-arxivson", "lena-hofmann"]
    assert merged["profile_count"] == 2
    enrichment = merged["enrichment"]
    assert merged["arxiv_id"] == "2405.01234"
    assert enrichment is not None and enrichment["status"] == "done"
    assert {"Lena Hofmann", "Ada Arxivson"} <= set(merged["authors"])
    assert {"cs.DC", "cs.LG"} <= set(merged["categories"])
    assert identity_keys(merged) == ["arxiv:2405.01234", "doi:10.1000/elasticmoe"]


def test_merge_is_order_independent_and_idempotent() -> None:
    merged = merge_works([EARLY_DOC, LATE_DOC])
    for docs in itertools.permutations([EARLY_DOC, LATE_DOC, merged]):
        assert merge_works(docs) == merged
    assert merge_works([merged]) == merged
    assert merge_works([merged, merged, LATE_DOC]) == merged


def test_a_merged_document_takes_listings_of_either_id_and_unlists_one() -> None:
    merged = merge_works([EARLY_DOC, LATE_DOC])
    again = apply_change(merged, listed(LATE, "ada-arxivson", T3))
    assert len(again["listings"]) == 3 and again["work_id"] == CANONICAL
    # An unlist of one title by a profile that lists both keeps the other listing.
    out = fold_change(again, unlist_change(LATE_ID, "lena-hofmann", "2026-04-01T00:00:00Z"))
    assert out is not None
    assert sorted((e["researcher_id"], e["work_id"]) for e in out["listings"]) == sorted([
        ("lena-hofmann", EARLY_ID), ("ada-arxivson", LATE_ID)])
    assert out["work_ids"] == [CANONICAL, OTHER]  # the id still leads here


def test_reindex_rebuild_keeps_a_merged_document_as_it_is() -> None:
    merged = merge_works([EARLY_DOC, LATE_DOC])
    assert rebuild("works", CANONICAL, merged) == merged


def test_no_keys_without_a_verified_match() -> None:
    assert identity_keys(doc_of(listed(EARLY, "x"))) == []
    unmatched = doc_of(listed(EARLY, "x"), enrichment_change(EARLY_ID, status="none", at=T2))
    assert identity_keys(unmatched) == []


# --- the writer --------------------------------------------------------------------------

def works(client: OpenSearch, prefix: str) -> dict[str, dict[str, Any]]:
    client.indices.refresh(index=f"{prefix}works")
    hits = client.search(index=f"{prefix}works", body={"size": 100})["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


def assert_one_document(client: OpenSearch, prefix: str, pairs: set[tuple[str, str]]) -> dict:
    docs = works(client, prefix)
    assert list(docs) == [CANONICAL], sorted(docs)
    [doc] = docs.values()
    assert {(e["researcher_id"], e["work_id"]) for e in doc["listings"]} == pairs
    assert doc["work_ids"] == [CANONICAL, OTHER] and doc["arxiv_id"] == "2405.01234"
    redirect = client.get(index=alias_name(prefix, IDENTITIES_INDEX), id=REDIRECT_PREFIX + OTHER)
    assert redirect["_source"]["merged_into"] == CANONICAL
    return doc


BOTH = {("lena-hofmann", EARLY_ID), ("ada-arxivson", LATE_ID)}


@pytest.mark.parametrize("order", ["early first", "late first", "one batch"])
def test_the_writer_joins_the_two_titles(order: str, make_writer: Callable[..., BulkWriter],
                                         opensearch_client: OpenSearch,
                                         opensearch_config: OpenSearchConfig) -> None:
    writer = make_writer()
    early = [listed(EARLY, "lena-hofmann"), matched(EARLY, T2)]
    late = [listed(LATE, "ada-arxivson"), matched(LATE, T2)]
    batches = {"early first": [early, late], "late first": [late, early],
               "one batch": [early + late]}[order]
    reports = [writer.write(batch) for batch in batches]
    assert sum(r.works_joined for r in reports) == 1
    assert sum(r.dead_lettered for r in reports) == 0
    doc = assert_one_document(opensearch_client, opensearch_config.prefix, BOTH)
    # Idempotent: the same changes again change nothing and join nothing.
    again = writer.write(early + late)
    assert again.works_joined == 0 and again.docs_written == 0
    assert works(opensearch_client, opensearch_config.prefix) == {CANONICAL: doc}


def test_the_join_happens_when_the_answer_arrives_later(make_writer: Callable[..., BulkWriter],
                                                        opensearch_client: OpenSearch,
                                                        opensearch_config: OpenSearchConfig
                                                        ) -> None:
    writer = make_writer()
    prefix = opensearch_config.prefix
    writer.write([listed(EARLY, "lena-hofmann"), listed(LATE, "ada-arxivson")])
    assert sorted(works(opensearch_client, prefix)) == sorted([EARLY_ID, LATE_ID])
    writer.write([matched(LATE, T2)])
    assert len(works(opensearch_client, prefix)) == 2  # one match is no evidence yet
    report = writer.write([matched(EARLY, T2)])
    assert report.works_joined == 1
    assert_one_document(opensearch_client, prefix, BOTH)


def test_later_listings_unlists_and_replays_follow_the_redirect(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    writer = make_writer()
    prefix = opensearch_config.prefix
    writer.write([listed(EARLY, "lena-hofmann"), matched(EARLY, T2),
                  listed(LATE, "ada-arxivson"), matched(LATE, T2)])
    other_title = EARLY if OTHER == EARLY_ID else LATE
    # A re-crawl of the absorbed title, by a new profile: into the surviving document.
    report = writer.write([listed(other_title, "new-profile", T2)])
    assert report.dead_lettered == 0 and report.works_joined == 0
    pairs = BOTH | {("new-profile", OTHER)}
    assert_one_document(opensearch_client, prefix, pairs)
    # An unlist of the absorbed id finds its listing there.
    report = writer.write([unlist_change(OTHER, "new-profile", T3)])
    assert report.unlisted == 1
    assert_one_document(opensearch_client, prefix, BOTH)
    # A dead-lettered listing of the absorbed id, replayed: there too, not a new work.
    dead = tmp_path / "dl.jsonl"
    DeadLetterFile(dead).write([dead_letter(listed(other_title, "replayed", T3), "unavailable",
                                            "test")])
    result = replay(dead, opensearch_client, prefix, RetryPolicy(4, 0.05, 0.3, 0.05),
                    retention_days=RETENTION_DAYS, layout=LAYOUT)
    assert result.delivered == 1 and result.failed_again == 0
    assert_one_document(opensearch_client, prefix, BOTH | {("replayed", OTHER)})


def test_an_unlist_before_the_join_still_keeps_an_older_listing_out(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    writer = make_writer()
    other_title = EARLY if OTHER == EARLY_ID else LATE
    canonical_title = LATE if other_title == EARLY else EARLY
    writer.write([listed(canonical_title, "lena-hofmann"), listed(other_title, "ada-arxivson"),
                  listed(other_title, "gone-profile")])
    assert writer.write([unlist_change(OTHER, "gone-profile", T2)]).unlisted == 1
    assert writer.write([matched(EARLY, T2), matched(LATE, T2)]).works_joined == 1
    pairs = {("lena-hofmann", CANONICAL), ("ada-arxivson", OTHER)}
    assert_one_document(opensearch_client, opensearch_config.prefix, pairs)
    # A listing from before the unlist (a late replay) follows the redirect, meets the
    # joined tombstone and stays out; a listing after it comes back.
    report = writer.write([listed(other_title, "gone-profile", T1)])
    assert report.listings_ignored == 1 and report.dead_lettered == 0
    assert_one_document(opensearch_client, opensearch_config.prefix, pairs)
    writer.write([listed(other_title, "gone-profile", T3)])
    assert_one_document(opensearch_client, opensearch_config.prefix,
                        pairs | {("gone-profile", OTHER)})


class _Interleaving:
    """The client as the joiner sees it: runs ``before`` once, ahead of its first delete.

    The only fake here: the moment another writer changes the absorbed document, between
    the joiner's read and its delete (a 409 no real timing would reliably cause).
    """

    def __init__(self, client: OpenSearch, before: Callable[[], object]):
        self._client, self._before, self.fired = client, before, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def bulk(self, body: Any, **kwargs: Any) -> Any:
        if not self.fired and any(isinstance(line, dict) and "delete" in line for line in body):
            self.fired = True
            self._before()
        return self._client.bulk(body=body, **kwargs)


def test_a_conflict_during_the_join_reads_again_and_loses_nothing(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    prefix = opensearch_config.prefix
    writer, rival = make_writer(), make_writer()
    other_title = EARLY if OTHER == EARLY_ID else LATE
    writer.write([listed(EARLY, "lena-hofmann"), listed(LATE, "ada-arxivson")])
    rivals: list[WriteReport] = []
    interleaved = _Interleaving(writer.joiner.client, lambda: rivals.append(rival.write(
        [listed(other_title, "rival-profile", T2)])))
    writer.joiner.client = interleaved  # type: ignore[assignment]
    report = writer.write([matched(EARLY, T2), matched(LATE, T2)])
    # The rival wrote the absorbed document after the join read it: the delete conflicted
    # and the join read again. (The rival, seeing the key, may finish the join itself.)
    assert interleaved.fired and report.conflicts >= 1
    assert report.works_joined + rivals[0].works_joined == 1
    assert report.dead_lettered == rivals[0].dead_lettered == 0
    assert_one_document(opensearch_client, prefix, BOTH | {("rival-profile", OTHER)})


def _write_at_once(writer: BulkWriter, batch: list[Change], start: threading.Barrier,
                   errors: list[BaseException]) -> None:
    try:
        start.wait(10)
        assert writer.write(batch).dead_lettered == 0
    except BaseException as exc:
        errors.append(exc)


def test_an_unlist_during_the_join_is_not_undone_by_the_first_copy(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    """The surviving document was written with a listing the rival unlists from the
    absorbed one before it goes: the re-merge leaves that listing out (its tombstone)."""
    writer, rival = make_writer(), make_writer()
    other_title = EARLY if OTHER == EARLY_ID else LATE
    canonical_title = LATE if other_title == EARLY else EARLY
    writer.write([listed(canonical_title, "lena-hofmann"), listed(other_title, "ada-arxivson"),
                  listed(other_title, "gone-profile")])
    interleaved = _Interleaving(writer.joiner.client, lambda: rival.write(
        [unlist_change(OTHER, "gone-profile", T2)]))
    writer.joiner.client = interleaved  # type: ignore[assignment]
    writer.write([matched(EARLY, T2), matched(LATE, T2)])
    assert interleaved.fired
    assert_one_document(opensearch_client, opensearch_config.prefix,
                        {("lena-hofmann", CANONICAL), ("ada-arxivson", OTHER)})


def test_two_writers_at_once_converge_on_one_document(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        opensearch_config: OpenSearchConfig) -> None:
    """Each writer brings one title and its match, at the same moment; a fresh paper
    each round, so every round races the join itself."""
    prefix = opensearch_config.prefix
    expected: dict[str, set[tuple[str, str]]] = {}
    for round_ in range(6):
        early, late = f"{EARLY} round {round_}", f"{LATE} round {round_}"
        arxiv = {**ARXIV, "id": f"2405.0{round_}000", "doi": None}
        start = threading.Barrier(2)
        batches = [[listed(early, "lena-hofmann", T2), matched(early, T2, arxiv)],
                   [listed(late, "ada-arxivson", T2), matched(late, T2, arxiv)]]
        writers = [make_writer(attempts=10), make_writer(attempts=10)]
        errors: list[BaseException] = []

        threads = [threading.Thread(target=_write_at_once, args=(*pair, start, errors))
                   for pair in zip(writers, batches, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        expected[min(work_id(early), work_id(late))] = {
            ("lena-hofmann", work_id(early)), ("ada-arxivson", work_id(late))}
        docs = works(opensearch_client, prefix)
        assert sorted(docs) == sorted(expected), round_  # one document per paper
        for doc_id, pairs in expected.items():
            assert {(e["researcher_id"], e["work_id"]) for e in docs[doc_id]["listings"]} \
                == pairs


def test_the_joiner_reads_many_documents_in_parts() -> None:
    # After the 4 x 2,000 soak a resolution pass read 28,765 changed works in one mget,
    # which timed out on the loaded cluster.
    from scholarindex.indexing.identity import READ_PART, WorkJoiner

    asked: list[int] = []

    class Client:
        def mget(self, body: dict[str, Any]) -> dict[str, Any]:
            asked.append(len(body["docs"]))
            return {"docs": [{"_id": d["_id"], "found": True, "_source": {"work_id": d["_id"]},
                              "_seq_no": 1, "_primary_term": 1, "_index": "w-v1"}
                             for d in body["docs"]]}

    policy = RetryPolicy(attempts=1, initial_wait=0, max_wait=0, jitter=0)
    joiner = WorkJoiner(Client(), "p_", policy)  # type: ignore[arg-type]
    ids = [f"w{n:05}" for n in range(2 * READ_PART + 1)]
    reads = joiner._mget("works", ids)
    assert asked == [READ_PART, READ_PART, 1]
    assert sorted(reads) == ids and all(r.doc == {"work_id": w} for w, r in reads.items())
