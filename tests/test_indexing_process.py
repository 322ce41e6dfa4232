"""ProcessWriter: the bulk writer in a child process, against an OpenSearch-compatible server."""

from __future__ import annotations

import gc
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile, read_lines
from scholarindex.indexing.indices import ensure_aliases
from scholarindex.indexing.process import ProcessWriter
from tests.support.index_contents import snapshot
from tests.support.sample_items import CHAO, T1, YINMIN
from tests.support.settings import LAYOUT

ROOT = Path(__file__).resolve().parent.parent
# Every test here starts the writer's child process (or a script that does).
pytestmark = pytest.mark.process


@pytest.fixture
def process_writer(opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
                   tmp_path: Path) -> Iterator[ProcessWriter]:
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
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


def test_the_child_collects_garbage_as_often_as_the_crawl(
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    previous = gc.get_threshold()
    gc.set_threshold(50_000, 20, 10)  # as GcTuning sets them for a crawl
    try:
        writer = ProcessWriter(opensearch_config, DeadLetterFile(tmp_path / "dl.jsonl"),
                               RetryPolicy(attempts=1, initial_wait=0, max_wait=0, jitter=0))
    finally:
        gc.set_threshold(*previous)
    try:
        assert writer._pool.submit(gc.get_threshold).result() == (50_000, 20, 10)
    finally:
        writer.close()


def test_changes_the_child_holds_through_an_outage_come_back_to_the_parent(
        opensearch_config: OpenSearchConfig, tmp_path: Path) -> None:
    down = replace(opensearch_config, url="http://127.0.0.1:9")  # connection refused
    writer = ProcessWriter(down, DeadLetterFile(tmp_path / "dl.jsonl"),
                           RetryPolicy(attempts=2, initial_wait=0.05, max_wait=0.1, jitter=0))
    try:
        report = writer.write([change_from_item(CHAO, T1), change_from_item(YINMIN, T1)],
                              hold=True)
    finally:
        writer.close()
    assert [c.data["researcher_id"] for c in report.held] == [CHAO.researcher_id,
                                                              YINMIN.researcher_id]
    assert report.dead_lettered == 0 and not (tmp_path / "dl.jsonl").exists()


def test_dead_letters_and_log_records_of_the_child_reach_the_parent(
        process_writer: ProcessWriter, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bad_year = {**asdict(CHAO), "work_id": "bad-year", "year": "MMXXVI"}
    with caplog.at_level(logging.ERROR, logger="scholarindex.indexing.bulk"):
        report = process_writer.write([change_from_item(bad_year, T1)])
        process_writer.close()  # flushes the child's log records to the parent
    assert report.dead_letter_codes == {"rejected": 1}
    [letter] = [letter for _, letter in read_lines(tmp_path / "dl.jsonl") if letter]
    assert letter.change.doc_id == "bad-year"
    assert any("rejected works bad-year" in r.getMessage() and r.process != os.getpid()
               for r in caplog.records)


def test_a_dead_child_costs_nothing_the_crawl_goes_on_writing_from_a_thread(
        process_writer: ProcessWriter, opensearch_client: OpenSearch, index_prefix: str,
        caplog: pytest.LogCaptureFixture) -> None:
    process_writer.write([change_from_item(CHAO, T1)])
    [pid] = process_writer._pool._processes
    os.kill(pid, signal.SIGKILL)
    with caplog.at_level(logging.ERROR, logger="scholarindex.indexing.process"):
        report = process_writer.write([change_from_item(YINMIN, T1)])
    assert report.listings_delivered == 1 and report.dead_lettered == 0
    assert "writing from a thread" in caplog.text
    assert snapshot(opensearch_client, f"{index_prefix}works")["relibra"]["profile_count"] == 2


UNGUARDED_SCRIPT = """
import sys
from dataclasses import replace
from tests.support.settings import writer_retry_with
from scholarindex.indexing.changes import change_from_item
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.process import ProcessWriter
from tests.support.sample_items import CHAO, T1

url, prefix, dead = sys.argv[1:]
config = OpenSearchConfig(url=url, prefix=prefix, verify_certs=True, timeout=30)
writer = ProcessWriter(config, DeadLetterFile(dead), writer_retry_with(INDEX_MAX_ATTEMPTS=2))
print("delivered", writer.write([change_from_item(CHAO, T1)]).listings_delivered)
writer.close()
"""


def test_a_script_without_a_main_guard_still_gets_its_items_written(
        opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
        index_prefix: str, tmp_path: Path) -> None:
    # spawn re-runs an unguarded __main__ in the child, which cannot start then.
    ensure_aliases(opensearch_client, opensearch_config.prefix, layout=LAYOUT)
    done = run_script(UNGUARDED_SCRIPT, opensearch_config, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "delivered 1" in done.stdout
    assert "writing from a thread" in done.stderr
    assert set(snapshot(opensearch_client, f"{index_prefix}works")) == {"relibra"}


KILLED_CRAWL_SCRIPT = """
import os, signal, sys
from dataclasses import replace
from tests.support.settings import writer_retry_with
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.process import ProcessWriter

if __name__ == "__main__":
    url, prefix, dead = sys.argv[1:]
    config = OpenSearchConfig(url=url, prefix=prefix, verify_certs=True, timeout=30)
    writer = ProcessWriter(config, DeadLetterFile(dead), writer_retry_with(INDEX_MAX_ATTEMPTS=2))
    writer.write([])
    print(*writer._pool._processes, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_child_ends_when_the_crawl_is_killed(opensearch_config: OpenSearchConfig,
                                                 tmp_path: Path) -> None:
    done = run_script(KILLED_CRAWL_SCRIPT, opensearch_config, tmp_path)
    assert done.returncode == -signal.SIGKILL
    child = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists(), "the writer outlived the crawl"


def run_script(text: str, config: OpenSearchConfig, tmp_path: Path
               ) -> subprocess.CompletedProcess[str]:
    """Run ``text`` as a script's ``__main__``: ``script URL PREFIX DEAD_LETTER_PATH``."""
    script = tmp_path / "script.py"
    script.write_text(text, "utf-8")
    return subprocess.run(
        [sys.executable, str(script), config.url, config.prefix, str(tmp_path / "dl.jsonl")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
