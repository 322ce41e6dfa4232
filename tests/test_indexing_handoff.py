"""The hand-off from the index pipeline to the writer: changes packed a page at a time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch
from scrapy.utils.test import get_crawler

from crawler.environment import project_settings
from pipelines.index import OpenSearchIndexPipeline
from scholarindex.core.items import PageItem, ResearcherItem
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.batching import Batching
from scholarindex.indexing.bulk import WriteReport
from scholarindex.indexing.changes import (
    change_from_item,
    changes_from_records,
    enrichment_change,
    pack_changes,
    unpack_changes,
)
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import ensure_aliases
from scholarindex.indexing.process import ProcessWriter
from tests.support.index_contents import snapshot
from tests.support.sample_items import CHAO, T1, YINMIN
from tests.support.settings import LAYOUT

ENRICHED = replace(CHAO, enrichment={"status": "none", "reason": "no match",
                                     "updated_at": "2026-01-02T00:00:00Z"})
RESEARCHER = ResearcherItem(id="chao-jin", url="https://site/chao-jin", name="Chao Jin",
                            work_ids=["relibra"], complete=True)


def test_packed_changes_unpack_to_the_same_changes_in_order() -> None:
    first = [change_from_item(RESEARCHER, T1), *changes_from_records([ENRICHED], T1)[0]]
    second = [enrichment_change("relibra", status="pending", at=T1),
              change_from_item(YINMIN, T1)]
    assert first[1].enriched  # the enrichment travels in its listing's change
    assert unpack_changes([pack_changes(first), pack_changes(second)]) == first + second
    assert unpack_changes([]) == []


class _Writer:
    """Stands in for the writer: nothing is written in these tests."""

    dead_letters = DeadLetterFile(Path("unused.jsonl"))
    client = None


def _pipeline(batch_size: int = 1000) -> OpenSearchIndexPipeline:
    crawler = get_crawler()
    crawler.stats.open_spider()
    batching = Batching(size=batch_size, max_bytes=10**9, flush_interval=60, max_buffer=10**6)
    config = OpenSearchConfig.from_settings(project_settings())
    policy = RetryPolicy(attempts=1, initial_wait=0, max_wait=0, jitter=0)
    return OpenSearchIndexPipeline(crawler, config, _Writer(),  # type: ignore[arg-type]
                                   batching, policy, outage_wait=1)


def _page(*works: Any) -> PageItem:
    return PageItem(RESEARCHER, list(works))


def test_the_buffer_is_packed_as_it_fills_and_its_size_is_the_packed_length() -> None:
    pipeline = _pipeline()
    pipeline._add_page(_page(CHAO, ENRICHED))
    pipeline._add_page(_page(YINMIN))
    buffer = pipeline.buffer
    assert len(buffer.packed) == 2  # one message a page
    assert unpack_changes(buffer.packed) == buffer.changes
    assert [c.kind for c in buffer.changes] == ["researcher", "work", "work",
                                                "researcher", "work"]
    assert buffer.size == sum(map(len, buffer.packed))
    stats = pipeline.stats.get_stats()
    assert (stats["index/listings_received"], stats["index/researchers_received"],
            stats["index/enrichments_received"]) == (3, 2, 1)


def test_held_changes_go_first_packed_ahead_of_the_buffer_on_resume() -> None:
    pipeline = _pipeline()
    held = [change_from_item(CHAO, T1)]
    pipeline._add_page(_page(YINMIN))
    buffer = pipeline.buffer
    buffered = list(buffer.changes)
    buffer.hold(held)
    assert buffer.full() is False and buffer.pending
    pipeline._flush = lambda: None  # type: ignore[method-assign]  # no writer here
    pipeline._back(paused=1.0)  # what the outage watch calls once the cluster answers
    assert buffer.changes == held + buffered and buffer.held == []
    assert unpack_changes(buffer.packed) == buffer.changes
    assert buffer.size == sum(map(len, buffer.packed))


def test_given_up_everything_held_and_buffered_is_dead_lettered_in_order(
        tmp_path: Path) -> None:
    pipeline = _pipeline()
    pipeline.writer.dead_letters = DeadLetterFile(tmp_path / "dead.jsonl")
    held = [change_from_item(CHAO, T1)]
    pipeline._add_page(_page(YINMIN))
    pipeline.buffer.hold(held)
    expected = held + pipeline.buffer.changes
    pipeline._give_up("OpenSearch unavailable for over OPENSEARCH_OUTAGE_WAIT=1s: down")
    assert (pipeline.buffer.changes, pipeline.buffer.held, pipeline.buffer.packed) == ([], [], [])
    letters = (tmp_path / "dead.jsonl").read_text().splitlines()
    assert len(letters) == len(expected) == 3
    assert pipeline.stats.get_value("index/dead_lettered") == 3
    assert pipeline.given_up is not None
    pipeline._add_page(_page(CHAO))
    pipeline._flush()  # given up: what comes after goes to the dead letters too
    assert pipeline.stats.get_value("index/dead_lettered") == 5


def test_a_flush_sends_the_batch_with_its_packed_messages(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    pipeline = _pipeline()
    sent: list[tuple[list[Any], list[bytes]]] = []

    def to_thread(function: Any, batch: list[Any], packed: list[bytes]) -> Any:
        from twisted.internet.defer import succeed

        sent.append((batch, packed))
        return succeed(WriteReport())

    monkeypatch.setattr("pipelines.index.deferToThread", to_thread)
    pipeline._add_page(_page(CHAO))
    pipeline._add_page(_page(YINMIN))
    pipeline._flush()
    (batch, packed), = sent
    assert unpack_changes(packed) == batch and len(batch) == 4
    assert (pipeline.buffer.changes, pipeline.buffer.packed, pipeline.buffer.size) == ([], [], 0)


@pytest.mark.process
def test_the_child_writes_changes_sent_packed_in_parts(
        opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch, index_prefix: str,
        tmp_path: Path) -> None:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    writer = ProcessWriter(opensearch_config, DeadLetterFile(tmp_path / "dl.jsonl"),
                           RetryPolicy(attempts=2, initial_wait=0.05, max_wait=0.1, jitter=0))
    try:
        changes = [change_from_item(CHAO, T1), change_from_item(YINMIN, T1)]
        parts = [pack_changes(changes[:1]), pack_changes(changes[1:])]
        report = writer.write(changes, packed=parts)
    finally:
        writer.close()
    assert (report.listings_delivered, report.docs_written, report.merged) == (2, 1, 1)
    assert snapshot(opensearch_client, f"{index_prefix}works")["relibra"]["profile_count"] == 2
