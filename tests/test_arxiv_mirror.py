"""The local arXiv mirror: harvest over OAI-PMH from the stand-in, then enrichment from it.

The stand-in endpoint (``standins.oaipmh``) serves the same recorded-style papers as
the query-API stand-in, five records a page here, so every harvest follows tokens.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from twisted.python import threadable

from scholarindex.core import stat_keys
from scholarindex.core.identity import work_id
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable
from scholarindex.enrichment.harvest import HarvestReport, harvest
from scholarindex.enrichment.mirror import ALL, ArxivMirror, match_expression
from scholarindex.enrichment.models import Listing, Outcome, listing_from_item
from scholarindex.enrichment.oaipmh import OaiClient, OaiError
from scholarindex.enrichment.pending import enrich_pending
from scholarindex.enrichment.query import query_key
from scholarindex.enrichment.resolver import Resolver
from scholarindex.enrichment.service import start_enricher
from standins.arxiv import ARXIV_ID_OF_SEED, ArxivStandIn, load_entries, profile_works
from standins.oaipmh import OaiStandIn
from tests.support.enrichment_crawl import DISTINCT, crawl, final_outcomes
from tests.support.settings import enrichment_config_with

EXPECTED = {work_id(title): arxiv_id for title, arxiv_id in ARXIV_ID_OF_SEED.items()}
PAGES_OF_FIVE = -(-len(load_entries()) // 5)
MATH_SET = {"1301.6412", "2204.06622", "2207.13208", "2506.00311"}  # what set=math holds


@pytest.fixture
def oai() -> Iterator[OaiStandIn]:
    with OaiStandIn(page_size=5) as server:
        yield server


def config_for(oai: OaiStandIn, cache: Path, api: ArxivStandIn | None = None,
               **overrides: float) -> EnrichmentConfig:
    settings: dict = {"oai_url": oai.base_url, "cache_dir": str(cache), "delay_seconds": 0,
                      "api_url": api.api_url if api else "http://127.0.0.1:9/api/query?{}",
                      "backoff_seconds": 0.01, "backoff_max_seconds": 0.05,
                      "timeout_seconds": 5, "batch_linger_seconds": 0.2}
    return replace(enrichment_config_with(), **{**settings, **overrides})


def run_harvest(config: EnrichmentConfig, sets: tuple[str, ...] = (), **kwargs: object
                ) -> HarvestReport:
    client = OaiClient(config)
    try:
        return harvest(ArxivMirror(config.cache_dir), client, sets, **kwargs)  # type: ignore[arg-type]
    finally:
        client.close()


def all_listings() -> list[Listing]:
    """Every work of the seed and held-out fixtures, its listings merged, as the crawl sends."""
    merged: dict[str, Listing] = {}
    for work in profile_works():
        listing = listing_from_item({**work, "work_id": work_id(work["title"])})
        previous = merged.get(listing.work_id)
        merged[listing.work_id] = previous.merged(listing) if previous else listing
    return list(merged.values())


def enrich_through_worker(config: EnrichmentConfig, listings: list[Listing],
                          events: Counter[str] | None = None) -> dict[str, Outcome]:
    """The crawl's path: the background Enricher, answers on its worker thread."""
    answers: dict[str, Outcome] = {}
    done = threading.Event()
    counts = events if events is not None else Counter()
    enricher = start_enricher(config, on_result=lambda o: answers.__setitem__(o.work_id, o),
                              on_event=lambda name, n: counts.update({name: n}))
    try:
        for listing in listings:
            outcome = enricher.submit(listing)
            if outcome is not None:
                answers[listing.work_id] = outcome
        enricher.flush()
        deadline = time.monotonic() + 20
        while enricher.outstanding() and time.monotonic() < deadline:
            done.wait(0.05)
        assert enricher.outstanding() == 0
    finally:
        enricher.close("test over", timeout=5)
    return answers


def assert_right_ids(outcomes: dict[str, Outcome]) -> None:
    assert len(outcomes) == len(all_listings())
    for wid, outcome in outcomes.items():
        assert (outcome.arxiv or {}).get("id") == EXPECTED.get(wid), outcome
        assert outcome.status == ("done" if wid in EXPECTED else "none"), outcome


# --- harvesting ------------------------------------------------------------------------


def test_harvest_follows_tokens_and_a_second_run_asks_only_since_the_last(
        oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path)
    report = run_harvest(config)
    assert report.requests == PAGES_OF_FIVE == oai.request_count
    assert [bool(r.args.get("resumptionToken")) for r in oai.requests] == \
        [False] + [True] * (PAGES_OF_FIVE - 1)
    mirror = ArxivMirror(tmp_path)
    assert mirror.size() == len(oai.ids) == report.records
    paper = mirror.get("2201.03313")
    assert paper is not None
    assert paper["title"].startswith("Cross-Modal ASR Post-Processing")
    assert paper["published"][:10] == "2022-01-10" and paper["updated"][:10] == "2022-02-14"
    assert paper["primary_category"] == "cs.CL" and "eess.AS" in paper["categories"]
    today = datetime.now(UTC).date().isoformat()
    assert mirror.state(ALL).complete_until == today

    oai.reset()
    new = {**load_entries()[0], "id": "2611.00001v1", "title": "A Paper Posted Today"}
    oai.add(new, datestamp=today)
    again = run_harvest(config)
    assert again.requests == oai.request_count == 1
    assert oai.requests[0].args["from"] == today
    assert mirror.get("2611.00001") is not None
    assert mirror.size() == len(oai.ids)

    oai.reset()
    third = run_harvest(config)  # the shared day is listed again, and held once
    assert third.requests == 1 and third.records == 1
    assert mirror.size() == len(oai.ids)


def test_a_set_with_no_records_is_one_request_and_complete(oai: OaiStandIn,
                                                           tmp_path: Path) -> None:
    report = run_harvest(config_for(oai, tmp_path), sets=("q-fin",))
    assert report.requests == 1 and report.records == 0
    assert oai.requests[0].error == "noRecordsMatch"
    assert ArxivMirror(tmp_path).state("q-fin").complete


def test_a_deleted_record_leaves_the_mirror(oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path)
    run_harvest(config)
    mirror = ArxivMirror(tmp_path)
    key = query_key(mirror.get("2205.14465")["title"])  # type: ignore[index]
    assert "2205.14465" in {c["id"] for c in mirror.candidates(key)}
    oai.withdraw("2205.14465", datestamp=datetime.now(UTC).date().isoformat())
    report = run_harvest(config)
    assert report.scopes[0].deleted == 1
    assert mirror.get("2205.14465") is None
    assert "2205.14465" not in {c["id"] for c in mirror.candidates(key)}  # gone from the index
    assert mirror.size() == len(oai.ids) - 1


def test_set_harvest_holds_the_set_only(oai: OaiStandIn, tmp_path: Path) -> None:
    run_harvest(config_for(oai, tmp_path), sets=("math",))
    assert oai.requests[0].args["set"] == "math"
    held = {m["id"] for m in map(ArxivMirror(tmp_path).get, oai.ids) if m}
    # 2506.00311 is cs.IT only, which arXiv also lists in math:math:IT (its alias).
    assert held == MATH_SET
    assert not ArxivMirror(tmp_path).answers_misses(86400)


def test_interrupted_harvest_resumes_with_its_token(oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, max_attempts=2)

    def outage_after_three_pages(scope: object) -> None:
        if oai.request_count == 3:
            oai.fail_next("503", times=2, retry_after=0)

    with pytest.raises(ArxivUnavailable):
        run_harvest(config, on_page=outage_after_three_pages)
    mirror = ArxivMirror(tmp_path)
    state = mirror.state(ALL)
    assert state.running and state.token and mirror.size() == 15
    oai.reset()
    report = run_harvest(config)
    assert report.scopes[0].resumed == "token"
    assert oai.requests[0].args == {"verb": "ListRecords", "resumptionToken": state.token}
    assert report.requests == PAGES_OF_FIVE - 3
    assert mirror.size() == len(oai.ids)
    assert not mirror.state(ALL).running and mirror.state(ALL).complete


def test_expired_token_restarts_from_the_checkpoint(oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, max_attempts=1)

    def outage_after_four_pages(scope: object) -> None:
        if oai.request_count == 4:
            oai.fail_next("503", times=1, retry_after=0)

    with pytest.raises(ArxivUnavailable):
        run_harvest(config, on_page=outage_after_four_pages)
    mirror = ArxivMirror(tmp_path)
    checkpoint = mirror.state(ALL).checkpoint
    stored_before = mirror.size()
    assert checkpoint is not None and stored_before == 20
    oai.expire_tokens()  # UTC midnight passed
    oai.reset()
    report = run_harvest(config)
    assert report.scopes[0].restarts == 1
    assert oai.requests[0].error == "badResumptionToken"
    assert oai.requests[1].args["from"] == checkpoint  # not from the beginning
    assert "resumptionToken" not in oai.requests[1].args
    refetched = len(oai.select(None, checkpoint, None))
    assert refetched < len(oai.ids)
    assert mirror.size() == len(oai.ids)  # every record once


def test_a_token_past_its_expiry_is_not_even_tried(oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, max_attempts=1)
    oai.fail_next("503", times=1, retry_after=0)
    with pytest.raises(ArxivUnavailable):  # the first page fails: the run is saved, no token
        run_harvest(config)
    with pytest.raises(ArxivUnavailable):
        run_harvest(config, on_page=lambda s: oai.fail_next("503", 1, 0))
    mirror = ArxivMirror(tmp_path)
    assert mirror.state(ALL).token
    oai.reset()
    tomorrow = datetime.now(UTC) + timedelta(days=1, hours=1)
    report = run_harvest(config, now=lambda: tomorrow)
    assert report.scopes[0].resumed == "checkpoint"
    assert "resumptionToken" not in oai.requests[0].args
    assert mirror.size() == len(oai.ids)


def test_503_is_retried_after_the_time_retry_after_asks(oai: OaiStandIn, tmp_path: Path) -> None:
    oai.fail_next("503", times=1, retry_after=1)
    run_harvest(config_for(oai, tmp_path))
    first, second = oai.requests[0], oai.requests[1]
    assert first.status == 503 and second.status == 200
    assert second.at - first.at >= 0.95
    assert ArxivMirror(tmp_path).size() == len(oai.ids)


def test_requests_keep_the_delay_against_the_endpoint(oai: OaiStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path)
    config = replace(config, delay_seconds=0.2)
    run_harvest(config)
    gaps = [b.at - a.at for a, b in zip(oai.requests, oai.requests[1:], strict=False)]
    assert min(gaps) >= 0.18


# --- the mirror's lookup ---------------------------------------------------------------


def test_lookup_finds_every_word_in_any_order_stemmed(oai: OaiStandIn, tmp_path: Path) -> None:
    run_harvest(config_for(oai, tmp_path))
    mirror = ArxivMirror(tmp_path)
    # The profile's title says "Rollout", arXiv's latest version "Rollouts".
    seed = ("SRT: Accelerating Reinforcement Learning via Speculative Rollout with "
            "Tree-Structured Cache")
    assert "2602.13316" in {c["id"] for c in mirror.candidates(query_key(seed))}
    assert match_expression("the art of the deal") == '"art" "deal"'
    # More matches than asked for: the best ranked (BM25: the shortest such title) are kept.
    matches = mirror.candidates("distributed training")
    assert len(matches) > 2
    best = mirror.candidates("distributed training", limit=1)
    assert [m["id"] for m in best] == [min(matches, key=lambda m: len(query_key(m["title"])))["id"]]
    assert mirror.candidates("nothing like this title anywhere") == []


# --- enrichment from the mirror (acceptance) ---------------------------------------------


def test_crawl_after_a_full_harvest_asks_the_query_api_nothing(
        oai: OaiStandIn, arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, arxiv_api)
    report = run_harvest(config)
    outcomes = enrich_through_worker(config, all_listings())
    assert_right_ids(outcomes)
    assert arxiv_api.request_count == 0
    assert report.requests == PAGES_OF_FIVE


def test_with_a_set_mirror_the_api_is_asked_only_about_what_it_lacks(
        oai: OaiStandIn, arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, arxiv_api)
    run_harvest(config, sets=("math",))
    listings = all_listings()
    outcomes = {o.work_id: o for o in enrich_pending(listings, config)}
    assert_right_ids(outcomes)
    held = MATH_SET
    held_keys = {query_key(title) for title, i in ARXIV_ID_OF_SEED.items() if i in held}
    assert arxiv_api.request_count > 0
    asked = " ".join(arxiv_api.queries)
    assert not [key for key in held_keys if f'"{key}"' in asked]


def test_a_stale_full_mirror_leaves_misses_to_the_api(
        oai: OaiStandIn, arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, arxiv_api, mirror_max_age_seconds=0)
    run_harvest(config)
    outcomes = enrich_through_worker(config, all_listings())
    assert_right_ids(outcomes)
    held_keys = {query_key(title) for title in ARXIV_ID_OF_SEED}
    asked = " ".join(arxiv_api.queries)
    assert arxiv_api.request_count > 0
    assert not [key for key in held_keys if f'"{key}"' in asked]


def test_the_api_gets_full_batches_of_what_a_set_mirror_lacks(
        oai: OaiStandIn, arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = config_for(oai, tmp_path, arxiv_api, batch_size=5, batch_linger_seconds=30)
    run_harvest(config, sets=("cs",))  # every paper, but not all of arXiv: misses go to the API
    listings = all_listings()
    events: Counter[str] = Counter()
    outcomes = enrich_through_worker(config, listings, events)
    assert_right_ids(outcomes)
    keys = {key for listing in listings for key in Resolver.keys(listing)}
    left = len(keys) - events[stat_keys.ARXIV_MIRROR_ANSWERS]
    assert events[stat_keys.ARXIV_MIRROR_ANSWERS] >= len(EXPECTED)
    # One query per full batch (an empty answer is asked again: the same query).
    assert len(set(arxiv_api.queries)) == math.ceil(left / 5)
    assert arxiv_api.request_count == events[stat_keys.ARXIV_REQUESTS]
    asked = " ".join(arxiv_api.queries)
    assert not [t for t in ARXIV_ID_OF_SEED if f'"{query_key(t)}"' in asked]


def test_a_real_crawl_after_the_harvest_asks_the_query_api_nothing(
        oai: OaiStandIn, arxiv_api: ArxivStandIn, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The acceptance run: harvest (five records a page), then a Scrapy crawl of the seed and
    held-out listings through the arXiv pipeline (tests.support.enrichment_crawl)."""
    report = run_harvest(config_for(oai, tmp_path / "cache"))
    assert report.requests == PAGES_OF_FIVE
    on_reactor: list[bool] = []  # for every mirror lookup: did it run on the reactor thread?
    candidates = ArxivMirror.candidates

    def recorded(self: ArxivMirror, *args: Any, **kwargs: Any) -> list[dict]:
        on_reactor.append(threadable.isInIOThread())
        return candidates(self, *args, **kwargs)

    monkeypatch.setattr(ArxivMirror, "candidates", recorded)
    result = crawl(arxiv_api, tmp_path / "cache")
    final = final_outcomes(result)
    assert len(final) == DISTINCT
    for wid, outcome in final.items():
        assert outcome["arxiv_id"] == EXPECTED.get(wid), outcome
        assert outcome["status"] == ("done" if wid in EXPECTED else "none")
    assert arxiv_api.request_count == 0
    assert result["stats"]["arxiv/mirror_answers"] >= DISTINCT
    assert "arxiv/requests" not in result["stats"]
    assert on_reactor and not any(on_reactor)  # the mirror is read off the reactor thread


def test_a_run_refused_before_storing_anything_is_not_resumed(oai: OaiStandIn,
                                                              tmp_path: Path) -> None:
    """A run saved before its first page (as an older version saved a refused one) that the
    endpoint refuses is dropped, so the next plain harvest starts a run of its own."""
    config = config_for(oai, tmp_path)
    mirror = ArxivMirror(tmp_path)
    mirror.save_state(mirror.state(ALL).begin("2000-01-01", "2026-11-26"))
    with pytest.raises(OaiError, match="start date too early"):
        run_harvest(config)
    assert not mirror.state(ALL).running and mirror.states() == []
    oai.reset()
    report = run_harvest(config)
    assert "from" not in oai.requests[0].args and report.records == len(oai.ids)
