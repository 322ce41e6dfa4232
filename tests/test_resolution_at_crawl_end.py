"""The pass a finished crawl runs is tried again when it fails in a way that passes."""

from __future__ import annotations

from scrapy.utils.test import get_crawler

from crawler.extensions.resolution import WorkResolution
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.resolution import ResolutionReport
from tests.support.reactor import call_in_reactor

POLICY = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02, jitter=0.0)
LOST_NODE = IndexUnavailable("scan works: HTTP 500 search_phase_execution_exception: all "
                             "shards failed (node_disconnected_exception)", retryable=True)


CREATE_BLOCKED = IndexUnavailable(
    "create index chaos_works-lock: HTTP 403 index_create_block_exception: blocked by: "
    "[FORBIDDEN/10/cluster create-index blocked (api)];", retryable=True)


def _resolution(failures: list[IndexUnavailable],
                outage_wait: float = 0.0) -> tuple[WorkResolution, list[int]]:
    crawler = get_crawler()
    crawler.stats.open_spider()
    config = OpenSearchConfig(url="http://127.0.0.1:1", verify_certs=False, timeout=1.0)
    extension = WorkResolution(crawler, config, POLICY, outage_wait)
    runs: list[int] = []

    def run() -> ResolutionReport:
        runs.append(1)
        if failures:
            raise failures.pop(0)
        return ResolutionReport(mode="incremental", documents=7)

    extension._run = run  # type: ignore[method-assign]  # the fault: a node lost mid-pass
    return extension, runs


def test_a_pass_that_lost_a_node_is_run_again_and_its_figures_kept() -> None:
    extension, runs = _resolution([LOST_NODE, LOST_NODE])
    call_in_reactor(extension.finished, "finished", timeout=30)
    stats = extension.crawler.stats.get_stats()
    assert len(runs) == 3
    assert stats["resolution/retries"] == 2 and stats["resolution/documents"] == 7
    assert "resolution/error" not in stats


def test_a_pass_that_keeps_failing_or_fails_for_good_is_reported_not_retried_forever() -> None:
    extension, runs = _resolution([LOST_NODE] * 5)
    call_in_reactor(extension.finished, "finished", timeout=30)
    assert len(runs) == POLICY.attempts
    assert "node_disconnected" in extension.crawler.stats.get_value("resolution/error")
    refused = IndexUnavailable("scan works: HTTP 403 security_exception", retryable=False)
    extension, runs = _resolution([refused])
    call_in_reactor(extension.finished, "finished", timeout=30)
    assert len(runs) == 1 and extension.crawler.stats.get_value("resolution/error")


def test_a_pass_that_meets_a_disk_block_waits_as_through_an_outage() -> None:
    # After a flood stage OpenSearch keeps the create-index block a minute or more; the
    # pass creates its lock index, so it waits (OPENSEARCH_OUTAGE_WAIT), not 3 tries.
    extension, runs = _resolution([CREATE_BLOCKED] * 6, outage_wait=30)
    call_in_reactor(extension.finished, "finished", timeout=30)
    stats = extension.crawler.stats.get_stats()
    assert len(runs) == 7 and stats["resolution/documents"] == 7
    assert "resolution/error" not in stats
    # No outage wait: a block is given up on like any other failure.
    extension, runs = _resolution([CREATE_BLOCKED] * 6)
    call_in_reactor(extension.finished, "finished", timeout=30)
    assert len(runs) == POLICY.attempts
    assert "create-index" in extension.crawler.stats.get_value("resolution/error")
