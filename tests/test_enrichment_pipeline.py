"""ArxivEnrichPipeline inside real Scrapy crawls, against the stand-in arXiv API.

Each crawl runs in this process (``tests.support.crawl``). The spider hands out
the seed and held-out listings a page at a time; a recording pipeline after ours
logs what items carried when they passed, a signal handler logs
``work_enriched``, a LoopingCall ticking every 50 ms shows when the reactor
thread ran, and every HTTP request to arXiv is logged with its thread and times.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from twisted.python import threadable

from pipelines.enrich import ArxivEnrichPipeline
from standins.arxiv import ArxivStandIn
from tests.support.enrichment_crawl import DISTINCT, EXPECTED, WORKS, crawl, final_outcomes


@dataclass
class HttpCall:
    start: float
    on_reactor: bool
    end: float | None = None  # None while it has not returned


@pytest.fixture
def arxiv_calls(monkeypatch: pytest.MonkeyPatch) -> list[HttpCall]:
    """Every HTTP request the enrichment makes (through requests), as it happens."""
    calls: list[HttpCall] = []
    request = requests.Session.request

    def logged(self: requests.Session, *args: Any, **kwargs: Any) -> Any:
        call = HttpCall(time.monotonic(), threadable.isInIOThread())
        calls.append(call)
        try:
            return request(self, *args, **kwargs)
        finally:
            call.end = time.monotonic()

    monkeypatch.setattr(requests.Session, "request", logged)
    return calls


@pytest.fixture
def arxiv_api() -> Iterator[ArxivStandIn]:
    with ArxivStandIn(hang_seconds=10) as server:
        yield server


def test_cold_crawl_enriches_in_background_and_warm_crawl_asks_nothing(
        arxiv_api: ArxivStandIn, arxiv_calls: list[HttpCall], tmp_path: Path) -> None:
    report = crawl(arxiv_api, tmp_path / "cache", ARXIV_DELAY_SECONDS=0.5)
    works = [i for i in report["items"] if i["kind"] == "work"]
    assert len(works) == len(WORKS)
    # Cold: a work item passes on at once, marked pending, unless a batch earlier in this
    # crawl already brought its title into the cache (a later profile listing it too).
    queued = [i for i in works if i["enrichment"] == {"status": "pending", "reason": "queued"}]
    answered = [i for i in works if i["enrichment"]["status"] in {"done", "none"}]
    assert len(queued) + len(answered) == len(works)
    assert len(queued) > len(works) / 2
    first_answer = min(s["at"] for s in report["signals"])
    assert first_answer < works[-1]["at"]  # the first batch was answered while parsing went on
    assert all(s["on_reactor"] for s in report["signals"])
    # Answers: the right id for every paper on arXiv, none for the others.
    final = final_outcomes(report)
    assert len(final) == DISTINCT
    for wid, outcome in final.items():
        assert outcome["arxiv_id"] == EXPECTED.get(wid), outcome
        assert outcome["status"] == ("done" if wid in EXPECTED else "none")
    assert arxiv_api.request_count * 10 <= DISTINCT
    # The lookups, and the 0.5 s waits between them, kept off the reactor thread.
    assert len(arxiv_calls) == arxiv_api.request_count
    assert not any(call.on_reactor for call in arxiv_calls)
    stats = report["stats"]
    assert stats["arxiv/requests"] == arxiv_api.request_count
    assert stats["arxiv/cache_misses"] == len(queued)
    assert stats.get("arxiv/cache_hits", 0) == len(answered)
    assert stats["arxiv/matched"] == len(EXPECTED)
    assert stats["arxiv/unmatched"] == DISTINCT - len(EXPECTED)
    assert "arxiv/pending" not in stats

    arxiv_api.reset()
    warm = crawl(arxiv_api, tmp_path / "cache")
    assert arxiv_api.request_count == 0
    assert warm["signals"] == []
    for item in warm["items"]:
        if item["kind"] == "work":
            assert item["arxiv_id"] == EXPECTED.get(item["work_id"])
            assert item["enrichment"]["status"] in {"done", "none"}
            # answered as of the same moment as in the first crawl: the index stays as it was
            assert item["enrichment"]["updated_at"] == final[item["work_id"]]["updated_at"]
    assert warm["stats"]["arxiv/cache_hits"] == len(WORKS)


def test_outage_indexes_everything_pending_with_the_reason(arxiv_api: ArxivStandIn,
                                                           tmp_path: Path) -> None:
    arxiv_api.fail_next("503", times=1000)
    report = crawl(arxiv_api, tmp_path / "cache", ARXIV_MAX_ATTEMPTS=2)
    assert report["reason"] == "finished"
    assert len([i for i in report["items"] if i["kind"] == "work"]) == len(WORKS)
    final = final_outcomes(report)
    assert {o["status"] for o in final.values()} == {"pending"}
    assert all("HTTP 503" in o["reason"] for o in final.values())
    assert report["stats"]["arxiv/pending"] == DISTINCT
    assert arxiv_api.request_count == 2


def test_crawl_gives_up_waiting_for_a_hung_arxiv(arxiv_api: ArxivStandIn,
                                                 arxiv_calls: list[HttpCall],
                                                 tmp_path: Path) -> None:
    arxiv_api.fail_next("hang", times=1000)  # no answer until the stand-in closes
    report = crawl(arxiv_api, tmp_path / "cache",
                   ARXIV_TIMEOUT_SECONDS=30, ARXIV_IDLE_WAIT_SECONDS=1)
    assert report["reason"] == "finished"
    # The crawl closed while the request still hung: it did not wait for an answer.
    assert arxiv_calls
    assert all(call.end is None or call.end > report["closed_at"] for call in arxiv_calls)
    final = final_outcomes(report)
    assert {o["status"] for o in final.values()} == {"pending"}
    assert any("ARXIV_IDLE_WAIT_SECONDS" in o["reason"] for o in final.values())
    # A hung request never touched the reactor: it hung on another thread while the
    # reactor went on ticking.
    assert not any(call.on_reactor for call in arxiv_calls)
    assert any(arxiv_calls[0].start < tick for tick in report["ticks"])


def test_switched_off_is_not_configured() -> None:
    crawler = get_crawler(settings_dict={"ARXIV_ENABLED": "false"})
    with pytest.raises(NotConfigured):
        ArxivEnrichPipeline.from_crawler(crawler)
