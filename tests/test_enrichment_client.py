"""The arXiv client and the resolver against the stand-in API: retries, 400s, paging."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from dataclasses import replace
from email.utils import formatdate
from pathlib import Path

import pytest

from bench.arxiv import IndexedArxivStandIn
from scholarindex.enrichment.cache import LookupCache
from scholarindex.enrichment.client import ArxivFetcher
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable, BadQuery
from scholarindex.enrichment.matching import Thresholds, verify
from scholarindex.enrichment.models import Listing
from scholarindex.enrichment.query import build_query, query_key
from scholarindex.enrichment.resolver import Resolver
from standins.arxiv import ArxivStandIn
from tests.support.settings import enrichment_config_with

RESNEST = query_key("ResNeSt: Split-Attention Networks")
SRT = query_key("SRT: Accelerating Reinforcement Learning via Speculative Rollout with "
                "Tree-Structured Cache")


def make_config(api: ArxivStandIn, tmp_path: Path, **overrides: object) -> EnrichmentConfig:
    values: dict = {"api_url": api.api_url, "delay_seconds": 0.05, "cache_dir": str(tmp_path),
                    "backoff_seconds": 0.05, "backoff_max_seconds": 0.2, "timeout_seconds": 0.5,
                    "max_attempts": 4, **overrides}
    return replace(enrichment_config_with(), **values)


class Events(Counter):
    def __call__(self, name: str, count: int) -> None:
        self[name] += count


def test_search_returns_metadata_without_version(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    result = ArxivFetcher(make_config(arxiv_api, tmp_path)).search(build_query([SRT]))
    (entry,) = result.entries
    assert entry["id"] == "2602.13316"
    assert entry["entry_id"] == "http://arxiv.org/abs/2602.13316v2"
    assert entry["authors"][:2] == ["Yue Chen", "Haibin Lin"]
    assert entry["primary_category"] == "cs.LG" and entry["categories"] == ["cs.LG", "cs.CL"]
    assert entry["published"].startswith("2026-02-19") and entry["updated"].startswith("2026-04")
    assert entry["pdf_url"] == "https://arxiv.org/pdf/2602.13316v2"
    assert entry["comment"].startswith("v2")
    assert entry["doi"] is None and entry["journal_ref"] is None


@pytest.mark.parametrize("fault", ["429", "503", "empty", "blank", "hang"])
def test_transient_faults_are_retried(arxiv_api: ArxivStandIn, tmp_path: Path, fault: str) -> None:
    events = Events()
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path), on_event=events)
    arxiv_api.fail_next(fault, times=2)
    result = fetcher.search(build_query([RESNEST]))
    assert {e["id"] for e in result.entries} == {"2004.08955", "2502.17733"}
    assert arxiv_api.request_count == 3
    assert events == {"arxiv/requests": 3, "arxiv/retries": 2}


def test_outage_after_retries_is_arxiv_unavailable(arxiv_api: ArxivStandIn,
                                                   tmp_path: Path) -> None:
    arxiv_api.fail_next("503", times=10)
    with pytest.raises(ArxivUnavailable, match="HTTP 503 after 4 attempts"):
        ArxivFetcher(make_config(arxiv_api, tmp_path)).search(build_query([RESNEST]))
    assert arxiv_api.request_count == 4


def test_timeout_applies_to_every_request(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    arxiv_api.fail_next("hang", times=10)
    events = Events()
    # The stand-in hangs 5 s; each of the two attempts gives up after 0.5 s.
    with pytest.raises(ArxivUnavailable, match=r"no answer within 0\.5 s after 2 attempts"):
        ArxivFetcher(make_config(arxiv_api, tmp_path, max_attempts=2),
                     on_event=events).search(build_query([RESNEST]))
    assert arxiv_api.request_count == 2
    assert events == {"arxiv/requests": 2, "arxiv/retries": 1}


def test_400_is_not_retried(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    with pytest.raises(BadQuery):
        ArxivFetcher(make_config(arxiv_api, tmp_path)).search('ti:"Lévy processes"')
    assert arxiv_api.request_count == 1


def test_requests_keep_the_delay(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path, delay_seconds=0.2))
    for _ in range(3):
        fetcher.search(build_query([RESNEST]))
    times = [r.at for r in arxiv_api.requests]
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(times))


def test_pages_through_a_batch_with_more_candidates_than_a_page(arxiv_api: ArxivStandIn,
                                                                tmp_path: Path) -> None:
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path, page_size=2))
    result = fetcher.search(build_query([RESNEST, SRT]))
    assert len(result.entries) == 3 and not result.truncated
    assert [(r.start, r.max_results) for r in arxiv_api.requests] == [(0, 2), (2, 2)]


def test_empty_first_page_is_confirmed(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path))
    assert fetcher.search(build_query(["no such title anywhere"])).entries == []
    assert arxiv_api.request_count == 3  # a true "nothing" costs two confirmations


# --- the resolver: batches, 400 isolation, overflow ------------------------------------

def resolver_for(api: ArxivStandIn, tmp_path: Path, events: Events,
                 **overrides: object) -> Resolver:
    config = make_config(api, tmp_path, **overrides)
    fetcher = ArxivFetcher(config, on_event=events)
    cache = LookupCache(tmp_path, config.hit_ttl_seconds, config.miss_ttl_seconds)
    return Resolver(fetcher.search, cache, config, on_event=events)


SEEDS = [
    ("ResNeSt: Split-Attention Networks", 2020, "Haibin Lin", "2004.08955"),
    ("ByteComp: Revisiting Gradient Compression in Distributed Training", 2022, "Haibin Lin",
     "2205.14465"),
    ("TwinBERT: Distilling Knowledge to Twin-Structured BERT Models for Efficient Retrieval",
     2020, "Jian Jiao", "2002.06275"),
    ("NGAME: Negative Mining-aware Mini-batching for Extreme Classification", 2022, "Jian Jiao",
     "2207.04452"),
    ("Is Network the Bottleneck of Distributed Training?", 2020, "Haibin Lin", None),
    ("LSTMSPLIT: Effective SPLIT Learning based LSTM on Sequential Time-Series Data", 2022,
     "Chao Jin", "2203.04305"),
    ("FFConv: Fast Factorized Convolutional Neural Network Inference on Encrypted Data", 2022,
     "Chao Jin", "2208.03160"),
    ("The Counterfactual-Shapley Value: Attributing Change in System Metrics", 2022, "Jian Jiao",
     "2208.08399"),
]


def seed_listings() -> list[Listing]:
    return [Listing.of(f"w{i}", title, year, [owner]) for i, (title, year, owner, _) in
            enumerate(SEEDS)]


def test_a_400_splits_the_batch_and_isolates_the_refused_title(arxiv_api: ArxivStandIn,
                                                               tmp_path: Path) -> None:
    arxiv_api.refuse_words = {"twinbert"}
    events = Events()
    outcomes = resolver_for(arxiv_api, tmp_path, events).resolve(seed_listings())
    by_work = {o.work_id: o for o in outcomes}
    assert by_work["w2"].status == "none" and "HTTP 400" in by_work["w2"].reason
    for i, (_, _, _, expected) in enumerate(SEEDS):
        if i != 2:
            assert (by_work[f"w{i}"].arxiv or {}).get("id") == expected, by_work[f"w{i}"].reason
    # 8 titles, the bad one third: [0-7] x, [0-3] x, [0-1] ok, [2-3] x, [2] x, [3] ok, [4-7] ok
    statuses = [r.status for r in arxiv_api.requests]
    assert statuses.count(400) == 4 and statuses.count(200) == 3
    assert events["arxiv/bad_queries"] == 4


def test_a_batch_matching_too_much_is_split(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    events = Events()
    resolver = resolver_for(arxiv_api, tmp_path, events, page_size=2, max_pages=1)
    listings = seed_listings()[:4]  # ResNeSt alone has 2 candidates: fits one page
    outcomes = resolver.resolve(listings)
    assert [(o.arxiv or {}).get("id") for o in outcomes] == [s[3] for s in SEEDS[:4]]
    assert arxiv_api.request_count > 1


def test_outage_leaves_listings_pending_and_caches_nothing(arxiv_api: ArxivStandIn,
                                                           tmp_path: Path) -> None:
    arxiv_api.fail_next("503", times=100)
    events = Events()
    resolver = resolver_for(arxiv_api, tmp_path, events, batch_size=4)
    outcomes = resolver.resolve(seed_listings())
    assert {o.status for o in outcomes} == {"pending"}
    assert "503" in outcomes[0].reason
    assert arxiv_api.request_count == 4  # one batch's attempts, then no more asking
    assert all(resolver.from_cache(listing) is None for listing in seed_listings())


@pytest.mark.parametrize("fault", ["429", "503"])
def test_retry_after_is_obeyed_up_to_its_cap(arxiv_api: ArxivStandIn, tmp_path: Path,
                                             fault: str) -> None:
    slept: list[float] = []
    config = make_config(arxiv_api, tmp_path, retry_after_max=30.0)
    fetcher = ArxivFetcher(config, sleep=slept.append)
    arxiv_api.fail_next(fault, times=1, retry_after="7")
    arxiv_api.fail_next(fault, times=1, retry_after="3600")
    arxiv_api.fail_next(fault, times=1)  # no header: the backoff
    result = fetcher.search(build_query([RESNEST]))
    assert {e["id"] for e in result.entries} == {"2004.08955", "2502.17733"}
    assert slept[:2] == [7.0, 30.0]
    assert slept[2] <= config.backoff_max_seconds + config.backoff_seconds


def test_retry_after_as_an_http_date_is_obeyed(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    slept: list[float] = []
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path, retry_after_max=60.0),
                           sleep=slept.append)
    when = formatdate(time.time() + 20, usegmt=True)
    arxiv_api.fail_next("503", times=1, retry_after=when)
    fetcher.search(build_query([RESNEST]))
    (waited,) = slept
    assert 15.0 <= waited <= 20.0


def test_the_measured_wait_follows_retry_after(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    fetcher = ArxivFetcher(make_config(arxiv_api, tmp_path, retry_after_max=30.0))
    arxiv_api.fail_next("429", times=1, retry_after="1")
    fetcher.search(build_query([RESNEST]))
    refused, answered = arxiv_api.requests
    assert (refused.status, answered.status) == (429, 200)
    assert answered.at - refused.at >= 1.0  # the backoff alone is 0.05-0.1 s


def test_an_entry_found_by_one_title_of_a_batch_is_not_a_look_alikes_candidate(
        tmp_path: Path) -> None:
    """Two papers of one author and year, titles a word apart, one on arXiv: the batch's
    answer for the first must not verify the second."""
    on_arxiv = "Robust Sparse Attention Methods for Long Documents"
    look_alike = "Robust Sparse Attention Models for Long Documents"  # not on arXiv
    entry = {"id": "2101.00001v1", "title": on_arxiv, "authors": ["Ann Lee", "Bo Chen"],
             "summary": "A paper.", "published": "2021-01-05T12:00:00Z",
             "updated": "2021-01-05T12:00:00Z", "comment": None, "journal_ref": None,
             "doi": None, "primary_category": "cs.CL", "categories": ["cs.CL"]}
    first = Listing.of("w1", on_arxiv, 2021, ["Ann Lee"])
    second = Listing.of("w2", look_alike, 2021, ["Ann Lee"])
    with IndexedArxivStandIn([entry]) as api:
        resolver = resolver_for(api, tmp_path, Events())
        found = resolver.resolve([first])[0].arxiv
        assert found is not None  # the stand-in's answer, as arXiv's
        assert verify(second, [found], Thresholds()).match is not None  # a real look-alike
        outcomes = resolver_for(api, tmp_path / "batch", Events()).resolve([first, second])
        assert [o.status for o in outcomes] == ["done", "none"]
        assert api.request_count == 2  # the pair went in one query
