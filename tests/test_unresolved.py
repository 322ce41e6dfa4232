"""New works judged at ingest (``indexing.unresolved``): only those blocking may pair
with another are judged; the judgment can be switched off; passes take turns."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from scholarindex.indexing import unresolved
from scholarindex.indexing.atoms import DocAtoms
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.passlock import PassLock
from tests.support.index_contents import snapshot
from tests.support.works import CUT, ORIGINAL, OTHER, POLICY, TYPO, listing

AT = "2026-01-01T00:00:00.000Z"
UNRELATED = listing("Altruistic Locking in Multiversion Databases", "Eve Kay")


def test_new_works_sharing_a_block_or_two_words_with_another_are_told_apart() -> None:
    keys = {"a": frozenset({"w:window", "w:query", "x:a"}),
            "b": frozenset({"w:window", "w:query", "x:b"}),  # two words with a
            "c": frozenset({"w:window", "w:locking", "x:c"}),  # one word with a and b
            "d": frozenset({"w:preface", "x:d"}),  # one distinctive word: one is enough
            "e": frozenset({"w:preface", "w:locking", "x:e"}),
            "f": frozenset({"w:zebra", "x:shared"}),
            "g": frozenset({"w:yak", "x:shared"})}  # a block in common
    words = {d: {k for k in ks if k.startswith("w:")} for d, ks in keys.items()}
    need = {"a": 2, "b": 2, "c": 2, "d": 1, "e": 2, "f": 1, "g": 1}
    assert unresolved._sharing_in_batch(keys, words, need) == {"a", "b", "d", "e", "f", "g"}


@pytest.fixture
def writer_for(opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
               tmp_path: Path) -> Iterator[Any]:
    made: list[str] = []

    def make(hide: bool = True) -> tuple[BulkWriter, str]:
        prefix = f"{opensearch_config.prefix}{uuid.uuid4().hex[:8]}-"
        made.append(prefix)
        ensure_aliases(opensearch_client, prefix)
        return BulkWriter(opensearch_client, prefix, DeadLetterFile(tmp_path / "dead.jsonl"),
                          POLICY, hide_unresolved=hide), prefix

    yield make
    for prefix in made:
        opensearch_client.indices.delete(index=f"{prefix}*", ignore=404)


def _hidden(client: OpenSearch, prefix: str) -> dict[str, str | None]:
    docs = snapshot(client, alias_name(prefix, "works"))
    return {doc_id: doc.get("hidden_by") for doc_id, doc in docs.items()}


def test_only_new_works_with_a_possible_partner_are_judged(
        writer_for: Any, opensearch_client: OpenSearch,
        monkeypatch: pytest.MonkeyPatch) -> None:
    writer, prefix = writer_for()
    writer.write([change_from_item(ORIGINAL, AT), change_from_item(OTHER, AT)])
    judged: list[set[str]] = []
    real = unresolved._with_candidates

    def spy(*args: Any) -> set[str]:
        found = real(*args)
        judged.append(found)
        return found

    monkeypatch.setattr(unresolved, "_with_candidates", spy)
    writer.write([change_from_item(TYPO, AT), change_from_item(CUT, AT),
                  change_from_item(UNRELATED, AT)])
    assert judged == [{TYPO["work_id"], CUT["work_id"]}]  # the unrelated one pairs with none
    hidden = _hidden(opensearch_client, prefix)
    assert hidden[TYPO["work_id"]] == ORIGINAL["work_id"]
    assert hidden[CUT["work_id"]] == ORIGINAL["work_id"]
    assert hidden[UNRELATED["work_id"]] is None
    assert hidden[ORIGINAL["work_id"]] is None


@pytest.mark.parametrize("failures", [1, 2])
def test_a_judgment_that_times_out_is_tried_again_not_written_visible(
        writer_for: Any, opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch,
        failures: int) -> None:
    # Under load a neighbour read may time out: the round is tried again, with the
    # writer's backoff, rather than the new printing written visible beside its paper.
    writer, prefix = writer_for()
    writer.write([change_from_item(ORIGINAL, AT)])
    real = unresolved.neighbourhood.counts
    calls = {"n": 0}

    def timing_out(*args: Any) -> dict[str, int]:
        calls["n"] += 1
        if calls["n"] <= failures:
            raise IndexUnavailable("count blocking keys: timed out", retryable=True)
        return real(*args)

    monkeypatch.setattr(unresolved.neighbourhood, "counts", timing_out)
    report = writer.write([change_from_item(TYPO, AT)])

    assert calls["n"] > failures and report.retries >= 1 and not report.dead_lettered
    assert _hidden(opensearch_client, prefix)[TYPO["work_id"]] == ORIGINAL["work_id"]


def test_with_the_judgment_off_new_works_are_written_as_they_come(
        writer_for: Any, opensearch_client: OpenSearch) -> None:
    writer, prefix = writer_for(hide=False)
    writer.write([change_from_item(ORIGINAL, AT)])
    writer.write([change_from_item(TYPO, AT)])
    assert set(_hidden(opensearch_client, prefix).values()) == {None}


def test_a_pass_waits_for_the_one_running(opensearch_client: OpenSearch,
                                          opensearch_config: OpenSearchConfig) -> None:
    prefix = opensearch_config.prefix
    first = PassLock(opensearch_client, prefix)
    first.acquire()
    taken = threading.Event()

    def second() -> None:
        with PassLock(opensearch_client, prefix):
            taken.set()

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(1.5)
    assert not taken.is_set()
    first.release()
    thread.join(60)
    assert taken.is_set()


def test_a_printing_is_found_among_many_documents_sharing_its_words(
        writer_for: Any, opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    # The judgment reads a few likeliest documents per new work, not every holder of
    # its words: the printing sharing its rarest keys must be among them.
    monkeypatch.setattr(unresolved, "NEAREST", 3)
    writer, prefix = writer_for()
    crowd = [listing(f"Efficient Processing of Window Queries over {topic} Streams", f"P{n} Roe")
             for n, topic in enumerate(["Video", "Audio", "Market", "Traffic", "Weather",
                                        "Network", "Click", "Energy", "Health", "Social"])]
    writer.write([change_from_item(item, AT) for item in [*crowd, ORIGINAL]])
    writer.write([change_from_item(TYPO, AT)])
    hidden = _hidden(opensearch_client, prefix)
    assert hidden[TYPO["work_id"]] == ORIGINAL["work_id"]
    assert all(hidden[item["work_id"]] is None for item in crowd)


# Other titles printing the typo's misspelt word: a large crawl prints one misprint of a
# common word again, so "Procesing" is then no word no document holds.
MISPRINTED = [listing(f"Distributed Procesing of {topic} Joins", f"Q{n} Poe")
              for n, topic in enumerate(["Spatial", "Temporal"])]


@pytest.mark.parametrize("misprinted", [[], MISPRINTED],
                         ids=["the misprint held by none", "the misprint held by others"])
def test_a_printing_with_a_typo_is_found_among_titles_that_differ_in_that_word_alone(
        writer_for: Any, opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch,
        misprinted: list[dict[str, Any]]) -> None:
    # The misspelt word shares no key, so every title that differs from the paper's in
    # that word alone shares as many keys with the printing as the paper does: only the
    # title, a letter apart, tells them apart.
    monkeypatch.setattr(unresolved, "NEAREST", 3)
    writer, prefix = writer_for()
    crowd = [listing(ORIGINAL["title"].replace("Processing", word), f"P{n} Roe")
             for n, word in enumerate(["Indexing", "Caching", "Sampling", "Filtering",
                                       "Joining", "Ranking", "Sharing", "Merging"])]
    writer.write([change_from_item(item, AT) for item in [*crowd, *misprinted]])
    writer.write([change_from_item(ORIGINAL, AT)])  # the last of the ties the engine orders
    writer.write([change_from_item(TYPO, AT)])
    hidden = _hidden(opensearch_client, prefix)
    assert hidden[TYPO["work_id"]] == ORIGINAL["work_id"]
    assert all(hidden[item["work_id"]] is None for item in [*crowd, *misprinted])


def test_a_batch_asking_about_more_clauses_than_one_search_holds_is_asked_in_parts(
        writer_for: Any, opensearch_client: OpenSearch,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A batch of new works with long titles: one filter a work, and all of them together
    # far past the engine's limit of nested clauses in one query (1,024 by default).
    writer, prefix = writer_for(hide=False)
    writer.write([change_from_item(ORIGINAL, AT)])
    works = alias_name(prefix, "works")
    opensearch_client.indices.refresh(index=works)
    stored = snapshot(opensearch_client, works)[ORIGINAL["work_id"]]["blocking_keys"]
    words = sorted(k for k in stored if k.startswith("w:"))
    assert len(words) >= 2
    strangers = [f"w:nothing{i}" for i in range(12)]
    # Each filter its own (the engine folds identical clauses into one before it counts).
    ask = {f"new-{i:03d}": unresolved._sharing_words(
        [*words, f"w:only{i}"], [*words, f"w:only{i}", *strangers], 2) for i in range(300)}
    ask["stranger"] = unresolved._sharing_words(strangers, strangers, 2)
    total = sum(1 + unresolved.clauses(query) for query in ask.values())
    assert total > 1024 * 3
    assert unresolved._sharing(opensearch_client, works, ask) == set(ask) - {"stranger"}
    # Asked in one search, the engine refuses it, and no retry would help.
    monkeypatch.setattr(unresolved, "CLAUSES_PER_SEARCH", 10**9)
    with pytest.raises(IndexUnavailable, match="too_many_nested_clauses") as refused:
        unresolved._sharing(opensearch_client, works, ask)
    assert not refused.value.retryable


def test_clauses_are_counted_as_nested_in_bools() -> None:
    query = {"bool": {"filter": [{"terms": {"k": ["a", "b"]}}],
                      "should": [{"term": {"k": "a"}},
                                 {"bool": {"should": [{"term": {"k": "b"}}]}}]}}
    assert unresolved.clauses(query) == 4
    assert unresolved.clauses({"term": {"k": "a"}}) == 0
    parts = list(unresolved._parts({f"q{i}": query for i in range(10)}, budget=12))
    assert [len(part) for part in parts] == [2, 2, 2, 2, 2]
    assert [name for part in parts for name in part] == [f"q{i}" for i in range(10)]


def test_a_neighbour_is_read_once_a_version_and_again_when_it_changes(
        writer_for: Any, opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    writer, prefix = writer_for()
    writer.write([change_from_item(ORIGINAL, AT), change_from_item(OTHER, AT)])
    works = alias_name(prefix, "works")
    opensearch_client.indices.refresh(index=works)
    reads: list[list[str]] = []
    real = unresolved.mget_hits

    def spy(client: OpenSearch, wanted: Any, *args: Any) -> Any:
        reads.append([doc_id for _, doc_id in wanted])
        return real(client, wanted, *args)

    monkeypatch.setattr(unresolved, "mget_hits", spy)

    def versions() -> dict[str, Any]:
        hits = opensearch_client.search(index=works, body={
            "seq_no_primary_term": True, "_source": False})["hits"]["hits"]
        return {hit["_id"]: (hit["_index"], hit["_seq_no"], hit["_primary_term"])
                for hit in hits}

    neighbours = unresolved.Neighbours(size=5)
    first = neighbours.read(opensearch_client, versions(), DocAtoms())
    assert sorted(first) == sorted([ORIGINAL["work_id"], OTHER["work_id"]])
    assert neighbours.read(opensearch_client, versions(), DocAtoms()) == first
    assert len(reads) == 2 and reads[1] == []  # the same versions: nothing read again
    assert (neighbours.hits, neighbours.misses) == (2, 2)
    opensearch_client.update(index=works, id=ORIGINAL["work_id"],
                             body={"doc": {"hidden_by": "elsewhere"}}, refresh=True)
    changed = neighbours.read(opensearch_client, versions(), DocAtoms())
    assert reads[2] == [ORIGINAL["work_id"]]
    assert changed[ORIGINAL["work_id"]].hidden == "elsewhere"
    assert changed[OTHER["work_id"]] == first[OTHER["work_id"]]
    gone = versions()
    opensearch_client.delete(index=works, id=OTHER["work_id"], refresh=True)
    bounded = unresolved.Neighbours(size=1)
    assert list(bounded.read(opensearch_client, gone, DocAtoms())) == [ORIGINAL["work_id"]]
    assert list(bounded.read(opensearch_client, gone, DocAtoms())) == [ORIGINAL["work_id"]]
    assert reads[-1] == [OTHER["work_id"]]  # the one kept was not read again
