"""ProcessWriter: the bulk writer in a child process, against an OpenSearch-compatible server."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexing.bulk import RetryPolicy
from indexing.changes import change_from_item
from indexing.config import OpenSearchConfig
from indexing.deadletter import DeadLetterFile, read_lines
from indexing.indices import ensure_aliases
from indexing.process import ProcessWriter
from tests.test_indexing_writer import CHAO, T1, YINMIN, snapshot


@pytest.fixture
def process_writer(opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
                   tmp_path: Path) -> Iterator[ProcessWriter]:
    ensure_aliases(opensearch_client, opensearch_config.prefix)
    writer = ProcessWriter(opensearch_config, DeadLetterFile(tmp_path / "dl.jsonl"),
                           RetryPolicy(attempts=2, initial_wait=0.05, max_wait=0.1, jitter=0))
    yield writer
    writer.close()


def test_the_child_merges_and_writes_and_reports_back(
        process_writer: ProcessWriter, opensearch_client: OpenSearch, index_prefix: str) -> None:
    report = process_writer.write([change_from_item(CHAO, T1), change_from_item(YINMIN, T1)])
    assert (report.listings_delivered, report.docs_written, report.merged) == (2, 1, 1)
    works = snapshot(opensearch_client, f"{index_prefix}works")
    assert works["relibra"]["profile_count"] == 2
    children = process_writer._pool._processes  # the write ran in another process
    assert children and os.getpid() not in children


def test_dead_letters_and_log_records_of_the_child_reach_the_parent(
        process_writer: ProcessWriter, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bad_year = {**asdict(CHAO), "work_id": "bad-year", "year": "MMXXVI"}
    with caplog.at_level(logging.ERROR, logger="indexing.bulk"):
        report = process_writer.write([change_from_item(bad_year, T1)])
        process_writer.close()  # flushes the child's log records to the parent
    assert report.dead_letter_codes == {"rejected": 1}
    [letter] = [letter for _, letter in read_lines(tmp_path / "dl.jsonl") if letter]
    assert letter.change.doc_id == "bad-year"
    assert any("rejected works bad-year" in r.getMessage() and r.process != os.getpid()
               for r in caplog.records)


def test_a_dead_child_fails_its_batch_and_the_next_write_gets_a_new_one(
        process_writer: ProcessWriter, opensearch_client: OpenSearch, index_prefix: str) -> None:
    from concurrent.futures.process import BrokenProcessPool

    process_writer.write([change_from_item(CHAO, T1)])
    [pid] = process_writer._pool._processes
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(BrokenProcessPool):
        process_writer.write([change_from_item(YINMIN, T1)])
    report = process_writer.write([change_from_item(YINMIN, T1)])
    assert report.listings_delivered == 1
    assert snapshot(opensearch_client, f"{index_prefix}works")["relibra"]["profile_count"] == 2
