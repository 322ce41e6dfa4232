"""The background Enricher end to end against the stand-in arXiv, and enrich_pending."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scholarindex.core.identity import work_id
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.pending import enrich_pending
from scholarindex.enrichment.query import query_key
from scholarindex.enrichment.service import AnsweredWorks, start_enricher
from standins.arxiv import ARXIV_ID_OF_SEED, ArxivStandIn, profile_works
from tests.support.settings import enrichment_config_with

EXPECTED = {work_id(title): arxiv_id for title, arxiv_id in ARXIV_ID_OF_SEED.items()}
LISTINGS = [Listing.of(work_id(w["title"]), w["title"], w["year"],
                       [w["researcher_name"], *w["authors"]]) for w in profile_works()]
DISTINCT_WORKS = len({listing.work_id for listing in LISTINGS})


def make_config(api: ArxivStandIn, tmp_path: Path, **overrides: object) -> EnrichmentConfig:
    values: dict = {"api_url": api.api_url, "delay_seconds": 0.05, "cache_dir": str(tmp_path),
                    "backoff_seconds": 0.05, "backoff_max_seconds": 0.2, "timeout_seconds": 1.0,
                    "batch_linger_seconds": 60.0, **overrides}
    return replace(enrichment_config_with(), **values)


class Collector:
    """The on_result callback: the latest outcome per work."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Outcome] = {}
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, outcome: Outcome) -> None:
        with self._lock:
            self.outcomes[outcome.work_id] = outcome
            self.calls += 1


def run_enricher(config: EnrichmentConfig, listings: list[Listing],
                 timeout: float = 20.0) -> tuple[dict[str, Outcome], Collector]:
    """Submit every listing, flush, wait for the answers; the outcomes and the collector."""
    collector = Collector()
    enricher = start_enricher(config, on_result=collector)
    answered: dict[str, Outcome] = {}
    try:
        for listing in listings:
            outcome = enricher.submit(listing)
            if outcome is not None:
                answered[listing.work_id] = outcome
        enricher.flush()
        deadline = time.monotonic() + timeout
        while enricher.outstanding() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert enricher.outstanding() == 0
    finally:
        enricher.close("test over", timeout=5)
    return {**answered, **collector.outcomes}, collector


def assert_right_ids(outcomes: dict[str, Outcome]) -> None:
    assert set(outcomes) == {listing.work_id for listing in LISTINGS}
    for wid, outcome in outcomes.items():
        got = (outcome.arxiv or {}).get("id")
        assert got == EXPECTED.get(wid), (wid, outcome.reason)
        assert outcome.status == ("done" if wid in EXPECTED else "none")


def test_cold_then_warm_cache(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = make_config(arxiv_api, tmp_path)
    cold, collector = run_enricher(config, LISTINGS)
    assert_right_ids(cold)
    cold_requests = arxiv_api.request_count
    assert cold_requests * 10 <= DISTINCT_WORKS, (cold_requests, DISTINCT_WORKS)
    assert all(len(q) > 1000 for q in arxiv_api.queries[:-1])  # full batches, one partial

    arxiv_api.reset()
    warm, collector = run_enricher(config, LISTINGS)
    assert arxiv_api.request_count == 0
    assert collector.calls == 0  # every listing answered from the cache, at submit
    assert_right_ids(warm)


def test_listings_of_one_work_pool_their_evidence(arxiv_api: ArxivStandIn,
                                                  tmp_path: Path) -> None:
    title = "Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs"
    wid = work_id(title)
    other = Listing.of(wid, "Parity declustering for fault–tolerant storage systems via t-designs",
                       2014, ["Mateus Oliveira"])  # alone, no author in common with arXiv's
    owner = Listing.of(wid, title, 2013, ["Chao Jin"])
    outcomes, _ = run_enricher(make_config(arxiv_api, tmp_path), [other, owner])
    assert outcomes[wid].status == "done"
    assert (outcomes[wid].arxiv or {}).get("id") == "1301.6412"


def test_outage_leaves_works_pending_then_enrich_pending_completes_them(
        arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    arxiv_api.fail_next("503", times=1000)
    config = make_config(arxiv_api, tmp_path, max_attempts=3)
    outcomes, _ = run_enricher(config, LISTINGS)
    assert {o.status for o in outcomes.values()} == {"pending"}
    assert all("HTTP 503" in o.reason for o in outcomes.values())
    assert arxiv_api.request_count == 3  # one batch's attempts; the cool-down spares the rest

    arxiv_api.reset()
    merged: dict[str, Listing] = {}
    for listing in LISTINGS:
        merged[listing.work_id] = (merged[listing.work_id].merged(listing)
                                   if listing.work_id in merged else listing)
    results = enrich_pending(merged.values(), config)
    assert_right_ids({o.work_id: o for o in results})
    assert arxiv_api.request_count * 10 <= DISTINCT_WORKS


def test_submit_returns_at_once_while_arxiv_hangs(arxiv_api: ArxivStandIn,
                                                  tmp_path: Path) -> None:
    arxiv_api.fail_next("hang", times=10)
    config = make_config(arxiv_api, tmp_path, batch_size=2, timeout_seconds=3.0)
    collector = Collector()
    enricher = start_enricher(config, on_result=collector)
    for listing in LISTINGS:
        assert enricher.submit(listing) is None  # queued: submit never waits for arXiv
    deadline = time.monotonic() + 20
    while arxiv_api.request_count == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    # Every submit returned while the first request hangs: one submit that had waited
    # for it would have seen it time out, and a retry or an answer would show by now.
    assert arxiv_api.request_count == 1 and collector.calls == 0
    left = enricher.close("the crawl ended before the arXiv lookup finished")
    # Closing does not wait for the request either: still the one request, unanswered.
    assert arxiv_api.request_count == 1
    assert collector.calls == 0
    assert left and all(o.status == "pending" for o in left)
    assert {o.reason for o in left} == {"the crawl ended before the arXiv lookup finished"}


def test_answered_works_round_trip_on_disk() -> None:
    store = AnsweredWorks()
    work = Listing("w1", ("A Title", "a title"), (2019, 2020), ("Ann Lee", "Bo Chen"))
    outcome = Outcome("w1", {"id": "1901.00001", "authors": ["Ann Lee"]}, "done", "ok",
                      "2026-01-01T00:00:00+00:00")
    assert store.get("w1") is None
    store.put(work, outcome)
    assert store.get("w1") == (work, outcome)
    store.put(work, Outcome("w1", None, "none", "no match"))  # the latest answer replaces it
    assert store.get("w1") == (work, Outcome("w1", None, "none", "no match"))
    store.close()
    assert store.get("w1") is None  # closed: knows nothing, stores nothing
    store.put(work, outcome)


def test_answered_works_written_in_batches_read_back_from_disk() -> None:
    store = AnsweredWorks()
    works = [Listing(f"w{i}", (f"Title {i}",), (2019,), ("Ann Lee",))
             for i in range(AnsweredWorks.WRITE_BATCH + 3)]
    outcomes = [Outcome(w.work_id, None, "none", "no match") for w in works]
    for work, outcome in zip(works, outcomes, strict=True):
        store.put(work, outcome)
    on_disk = store._db.execute("SELECT count(*) FROM answered").fetchone()[0]  # type: ignore[union-attr]
    assert on_disk == AnsweredWorks.WRITE_BATCH  # the last 3 still wait in memory
    wanted = {"w0", f"w{AnsweredWorks.WRITE_BATCH + 2}", "missing"}
    assert store.get_many(wanted) == {
        "w0": (works[0], outcomes[0]),
        f"w{AnsweredWorks.WRITE_BATCH + 2}": (works[-1], outcomes[-1])}
    assert store.get("w1") == (works[1], outcomes[1])
    store.close()


def test_answered_works_read_back_from_disk_equal_to_what_was_stored() -> None:
    """Rows go to disk as JSON (a pickle where JSON cannot hold the text): what comes back
    equals what was stored, tuples and metadata alike."""
    store = AnsweredWorks()
    matched = Listing("w-done", ("A Title", "A title"), (2019, 2020), ("Ann Lee", "Bo Chen"))
    metadata = {"id": "1901.00001", "title": "A Title", "authors": ["Ann Lee", "Bo Chen"],
                "categories": ["cs.LG"], "doi": None, "summary": "Über \u00e9 $x^2$ \u2014 ok"}
    done = Outcome("w-done", metadata, "done", "matched", "2026-01-01T00:00:00+00:00")
    odd = Listing("w-odd", ("Broken \ud800 surrogate",), (), ("Ann Lee",))  # JSON-LD gone wrong
    unmatched = Outcome("w-odd", None, "none", "no arXiv entry with this title")
    store.put(matched, done)
    store.put(odd, unmatched)
    for i in range(AnsweredWorks.WRITE_BATCH):  # push both out of memory onto disk
        store.put(Listing(f"w{i}", (f"Title {i}",)), Outcome(f"w{i}", None, "none", "no"))
    assert store._unwritten.keys().isdisjoint({"w-done", "w-odd"})
    assert store.get_many(["w-done", "w-odd"]) == {"w-done": (matched, done),
                                                    "w-odd": (odd, unmatched)}
    assert store.get("w-done") == (matched, done)
    store.close()


def test_counts_are_distinct_works_by_latest_status(arxiv_api: ArxivStandIn,
                                                     tmp_path: Path) -> None:
    config = make_config(arxiv_api, tmp_path)
    run_enricher(config, LISTINGS)  # warms the cache
    enricher = start_enricher(config, on_result=Collector())
    try:
        for listing in LISTINGS + LISTINGS:  # every work listed again: counted once
            assert enricher.submit(listing) is not None
        assert enricher.counts() == {"done": len(EXPECTED),
                                     "none": DISTINCT_WORKS - len(EXPECTED)}
    finally:
        enricher.close("test over", timeout=5)


def test_answers_count_as_outstanding_until_handed_over(arxiv_api: ArxivStandIn,
                                                         tmp_path: Path) -> None:
    """A crawl closes when nothing is outstanding: answers still being reported count."""
    config = make_config(arxiv_api, tmp_path, batch_size=100)
    release = threading.Event()
    collector = Collector()
    entered = threading.Event()

    def slow_consumer(outcome: Outcome) -> None:
        entered.set()
        release.wait(10)
        collector(outcome)

    enricher = start_enricher(config, on_result=slow_consumer)
    listings = LISTINGS[:1]  # one batch: once answered, nothing else waits
    try:
        for listing in listings:
            assert enricher.submit(listing) is None
        enricher.flush()
        assert entered.wait(10)  # the batch is answered; its outcome is being handed over
        assert enricher.outstanding() == 1
        release.set()
        deadline = time.monotonic() + 10
        while enricher.outstanding() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert enricher.outstanding() == 0
        assert set(collector.outcomes) == {listing.work_id for listing in listings}
    finally:
        release.set()
        enricher.close("test over", timeout=5)


def test_submit_many_answers_as_one_submit_each(arxiv_api: ArxivStandIn, tmp_path: Path) -> None:
    config = make_config(arxiv_api, tmp_path)
    run_enricher(config, LISTINGS)  # warms the cache
    one_by_one = start_enricher(config, on_result=Collector())
    batched = start_enricher(config, on_result=Collector())
    try:
        # A page may list one work twice: the second listing sees what the first stored.
        expected = [one_by_one.submit(listing) for listing in LISTINGS + LISTINGS[:3]]
        got = batched.submit_many(LISTINGS + LISTINGS[:3])
        assert got == expected and all(outcome is not None for outcome in got)
        assert batched.counts() == one_by_one.counts()
        assert batched.counts() == {"done": len(EXPECTED), "none": DISTINCT_WORKS - len(EXPECTED)}
    finally:
        one_by_one.close("test over", timeout=5)
        batched.close("test over", timeout=5)


def test_submit_many_reads_a_work_alone_only_when_listed_again(arxiv_api: ArxivStandIn,
                                                                 tmp_path: Path) -> None:
    """A batch's stored answers come in one read; a work alone only for its repeat listings."""
    config = make_config(arxiv_api, tmp_path)
    run_enricher(config, LISTINGS)  # warms the cache
    enricher = start_enricher(config, on_result=Collector())
    batch = LISTINGS + LISTINGS[:3]
    reads: list[str] = []
    store = enricher._answered
    read_one = store.get

    def counted_get(work_id: str) -> tuple[Listing, Outcome] | None:
        reads.append(work_id)
        return read_one(work_id)
    store.get = counted_get  # type: ignore[method-assign]
    try:
        enricher.submit_many(batch)
        assert len(reads) == len(batch) - len({listing.work_id for listing in batch})
    finally:
        enricher.close("test over", timeout=5)


M3BERT = [listing for listing in LISTINGS if len({query_key(t) for t in listing.titles}) == 1
          and "matryoshka" in listing.titles[0].lower()]


@pytest.mark.parametrize("first", [0, 1])
def test_a_spelling_met_after_the_match_costs_no_request_next_run(
        arxiv_api: ArxivStandIn, tmp_path: Path, first: int) -> None:
    """Two spellings of one title: whichever arrives first in the next run, the cache answers."""
    spellings = list({query_key(listing.titles[0]): listing for listing in M3BERT}.values())
    assert len(spellings) == 2
    early, late = spellings[first], spellings[1 - first]
    config = make_config(arxiv_api, tmp_path, batch_linger_seconds=0.05)
    enricher = start_enricher(config, on_result=Collector())
    try:
        assert enricher.submit(early) is None
        deadline = time.monotonic() + 10
        while enricher.outstanding() and time.monotonic() < deadline:
            time.sleep(0.02)
        enricher.submit(late)  # after the first spelling's answer
        while enricher.outstanding() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        enricher.close("test over", timeout=5)
    asked = arxiv_api.request_count
    outcomes, _ = run_enricher(config, [late, early])  # the next run meets them the other way
    assert outcomes[late.work_id].status == "done"
    assert arxiv_api.request_count == asked


def test_a_later_answer_never_looks_older_than_the_one_it_replaces(arxiv_api: ArxivStandIn,
                                                                    tmp_path: Path) -> None:
    """The index keeps the newest answer: "done" decided after "none" must not be older."""
    enricher = start_enricher(make_config(arxiv_api, tmp_path), on_result=Collector())
    work = LISTINGS[0]
    try:
        with enricher._cond:  # the rule lives in _settle, called under the lock
            first = enricher._settle(work, Outcome(work.work_id, None, "none", "no author",
                                                   "2026-01-02T00:00:00+00:00"), None)
            later = enricher._settle(work, Outcome(work.work_id, {"id": "2101.00001"}, "done",
                                                   "matched", "2026-01-01T00:00:00+00:00"),
                                     (work, first))
        assert (later.status, later.checked_at) == ("done", first.checked_at)
    finally:
        enricher.close("test over", timeout=5)
