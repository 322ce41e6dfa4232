"""The scheduler's bookkeeping without Redis or a reactor: where each page stands between
its take and its acknowledgement (``PageBook``), one call of a kind in flight
(``SingleFlight``), what an idle worker says it waits for (``IdleReport``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from crawler.distributed.idlereport import IdleReport
from crawler.distributed.pagebook import Delivery, Done, PageBook, Waiting
from crawler.distributed.singleflight import SingleFlight
from scholarindex.distributed.frontier import FrontierState
from scholarindex.distributed.outbox import items_of

T = TypeVar("T")


def evidence(work_id: str, title: str = "t") -> dict[str, Any]:
    return {"work_id": work_id, "listings": [{"work_id": work_id, "title": title}]}


def leased(*pages: str) -> PageBook:
    book = PageBook()
    for page in pages:
        book.leased(page)
    return book


# --- PageBook ---------------------------------------------------------------------------


def test_a_page_with_nothing_to_wait_for_is_acknowledged_plainly() -> None:
    book = leased("a")
    assert book.done("a", 0, {}, 1.0) is Done.ACK
    assert book.acks == ["a"] and book.handoffs == [] and book.waiting == []
    assert book.parsed == ["a"]
    assert book.held == {"a"}  # until the acknowledgement is sent
    acks, handoffs = book.to_send()
    assert (acks, handoffs) == (["a"], []) and not book.unsent
    book.sent(acks, handoffs)
    assert book.idle


def test_a_page_whose_flush_is_delivered_already_needs_no_hand_off() -> None:
    book = leased("a")
    book.delivered(3)
    assert book.done("a", 3, {}, 1.0) is Done.ACK


def test_a_page_waiting_for_its_flush_is_handed_off_with_its_scraped_items() -> None:
    book = leased("a")
    book.scraped("a", "https://x/a", {"n": 1})
    book.scraped("a", "https://x/a", {"n": 2})
    book.scraped("z", "https://x/z", {"n": 9})  # not leased here: not kept
    assert book.done("a", 2, {}, 5.0) is Done.HAND_OFF
    assert book.waiting == [Waiting("a", 2, 5.0)]
    [(page, payload)] = book.handoffs
    assert page == "a" and items_of(payload) == [{"n": 1}, {"n": 2}]
    assert book.acks == [] and book.unsent
    acks, handoffs = book.to_send()
    book.sent(acks, handoffs)
    assert book.held == set() and not book.idle  # still waiting for the index


def test_a_page_no_longer_leased_here_is_dropped_with_its_items() -> None:
    book = leased("a")
    book.scraped("a", "https://x/a", {"n": 1})
    book.dropped("a")
    book.done("a", 2, {}, 1.0)
    [(_, payload)] = book.handoffs
    assert items_of(payload) == []


def test_delivered_after_the_hand_off_went_out_clears_the_outbox_entry() -> None:
    book = leased("a", "b")
    book.done("a", 1, {"w1": evidence("w1")}, 1.0)
    book.done("b", 2, {"w2": evidence("w2")}, 2.0)
    book.sent(*book.to_send())
    delivery = book.delivered(1)
    assert delivery == Delivery(hold={"w1": evidence("w1")}, acked=[], handed=["a"])
    assert book.waiting == [Waiting("b", 2, 2.0)] and book.acks == []
    assert book.last_delivered == 1
    assert book.delivered(2) == Delivery({"w2": evidence("w2")}, [], ["b"])
    assert book.idle


def test_delivered_before_the_hand_off_went_out_becomes_a_plain_acknowledgement() -> None:
    book = leased("a", "b")
    book.done("a", 1, {}, 1.0)
    book.sent(*book.to_send())  # a's hand-off went out
    book.done("b", 1, {"w": evidence("w")}, 2.0)  # b's waits behind the call in flight
    delivery = book.delivered(1)
    assert delivery == Delivery({"w": evidence("w")}, acked=["b"], handed=["a"])
    assert book.handoffs == [] and book.acks == ["b"]
    assert book.to_send() == (["b"], [])


def test_the_lookups_of_pages_delivered_together_merge_in_page_order() -> None:
    book = leased("a", "b")
    book.done("a", 1, {"w": evidence("w", "first")}, 1.0)
    book.done("b", 1, {"w": evidence("w", "later")}, 2.0)
    assert book.delivered(1).hold == {"w": evidence("w", "later")}


def test_a_delivery_of_an_earlier_flush_leaves_the_later_pages_waiting() -> None:
    book = leased("a")
    book.done("a", 5, {}, 1.0)
    book.delivered(4)
    assert book.delivered(2) == Delivery({}, [], [])
    assert book.last_delivered == 4 and [w.page for w in book.waiting] == ["a"]


def test_an_adopted_page_waits_like_an_own_page_and_only_its_outbox_entry_goes() -> None:
    book = PageBook()
    book.adopted("x", 3, {"w": evidence("w")}, 7.0)
    assert book.waiting == [Waiting("x", 3, 7.0)] and book.held == set()
    assert not book.unsent and not book.idle
    assert book.delivered(3) == Delivery({"w": evidence("w")}, acked=[], handed=["x"])
    assert book.idle and not book.unsent


def test_a_flush_is_asked_for_once_per_delivery_while_pages_wait() -> None:
    book = leased("a", "b")
    assert not book.flush_wanted()  # nothing waits
    book.done("a", 1, {}, 1.0)
    assert book.flush_wanted()
    book.done("b", 2, {}, 1.0)
    assert not book.flush_wanted()
    book.delivered(1)
    assert book.flush_wanted()  # b still waits
    book.delivered(2)
    assert not book.flush_wanted()


def test_a_renewal_names_the_leases_and_the_pages_parsed_since_the_last_one() -> None:
    book = leased("c", "a", "b")
    book.done("b", 0, {}, 1.0)
    assert book.renewal() == (["a", "b", "c"], ["b"])
    assert book.renewal() == (["a", "b", "c"], [])


def test_at_close_hand_offs_become_acknowledgements_and_the_rest_is_handed_back() -> None:
    book = leased("a", "b", "c", "d")
    book.done("a", 0, {}, 1.0)  # acknowledgement not sent
    book.done("b", 1, {"w": evidence("w")}, 1.0)  # hand-off not sent
    book.adopted("x", 1, {"v": evidence("v")}, 1.0)
    acks, unfinished = book.closed()
    assert acks == ["a", "b"] and unfinished == ["c", "d"]
    assert book.waiting == [] and not book.unsent
    assert book.delivered(1) == Delivery({}, [], [])  # nothing left to hold


# --- SingleFlight -----------------------------------------------------------------------


class HeldCalls:
    """Calls that end when the test fires them. (Not ``RedisCalls``: importing it installs
    a reactor, and the in-process crawls of the session need theirs.)"""

    def __init__(self) -> None:
        self.pending: list[Deferred[Any]] = []

    def run(self, fn: Callable[..., T], *args: Any) -> Deferred[T]:
        d: Deferred[T] = Deferred()
        self.pending.append(d)
        return d


def test_a_single_flight_is_over_for_the_callbacks_so_they_may_start_the_next() -> None:
    calls = HeldCalls()
    flight = SingleFlight(calls)
    assert not flight.busy and flight.call is None
    seen: list[tuple[Any, bool]] = []
    d = flight.run(lambda: None)
    assert flight.busy and flight.call is d
    d.addCallback(lambda result: seen.append((result, flight.busy)))
    calls.pending[0].callback("ok")
    assert seen == [("ok", False)] and flight.call is None
    flight.run(lambda: None)
    with pytest.raises(AssertionError):
        flight.run(lambda: None)  # the caller asks busy first


def test_a_single_flight_that_failed_is_over_too() -> None:
    calls = HeldCalls()
    flight = SingleFlight(calls)
    failures: list[Failure] = []

    def failed(failure: Failure) -> None:
        failures.append(failure)
    flight.run(lambda: None).addErrback(failed)
    calls.pending[0].errback(RuntimeError("down"))
    assert not flight.busy and len(failures) == 1


# --- IdleReport -------------------------------------------------------------------------


def test_an_idle_worker_says_what_it_waits_for_once_a_minute() -> None:
    report = IdleReport()
    start = report.handed_at
    assert not report.due(start + 59)
    assert report.due(start + 61)
    assert not report.due(start + 100)
    assert report.due(start + 122)
    report.handed()
    assert not report.due(report.handed_at + 1)


def test_the_reasons_an_idle_worker_gives() -> None:
    report = IdleReport()
    book = leased("a", "b")
    book.done("a", 4, {}, 10.0)
    book.delivered(2)
    assert report.reasons(40.0, book, 0, 0.0) == [
        "1 page(s) of this worker waiting for the index (oldest 30 s, flush 4; delivered 2)",
        "2 page(s) leased by this worker, not yet acknowledged"]
    report.checked(FrontierState(queued=3, leased=5, seeded=False, dead=0), others_looking_up=1)
    assert report.reasons(40.0, PageBook(), 2, 35.0) == [
        "Redis: 2 call(s) in line, the last answered 5 s ago",
        "the URL list, not yet all queued by a seeding worker", "3 request(s) queued",
        "arXiv lookups of 1 other worker(s)",
        "5 page(s) leased by other workers (taken here if their leases expire)"]
