"""Where each page this worker is answerable for stands, between its take and its
acknowledgement (``scheduler``): pure bookkeeping, the scheduler makes the Redis calls.

- ``leased``: taken from Redis; held until acknowledged, handed back at close if not done;
- ``scraped``: an item of a held page came through every pipeline (what its outbox entry
  carries if the page is handed off);
- ``done``: the page's output is consumed and its items are through the pipelines. With
  nothing to wait for it is acknowledged plainly; else it is handed off (acknowledged
  with its items written to the outbox) and waits for the index flush that carries them;
- ``adopted``: a dead worker's handed-off page, now in this worker's outbox: it waits
  for its flush like a page of this worker's own (it holds no lease here);
- ``delivered``: an index flush ended; the pages it carried are ready: their lookups are
  to be held, then their outbox entries cleared, or, for a page whose hand-off has not
  gone out yet, a plain acknowledgement instead;
- ``to_send`` and ``sent``: the acknowledgements and hand-offs of one call, and its end;
- ``closed``: the pipelines have closed, so every page waiting is delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from scholarindex.distributed.outbox import entry

Evidence = dict[str, dict[str, Any]]  # work id -> its evidence (``lookupbook``)


@dataclass
class Waiting:
    """A page whose items wait for the index, kept in the outbox meanwhile."""

    page: str
    ticket: int  # the index flush that carries its items
    since: float  # when it was done (time.monotonic)


class Done(Enum):
    ACK = "acknowledged plainly, nothing to wait for"
    HAND_OFF = "handed off, waits for its flush"


@dataclass
class Delivery:
    """What an index flush's delivery asks of the scheduler, in this order."""

    hold: Evidence  # the lookups of the pages delivered, to write before anything below
    acked: list[str]  # delivered before their hand-off went out: now plain acknowledgements
    handed: list[str]  # handed off: their outbox entries go


class PageBook:
    def __init__(self) -> None:
        self.held: set[str] = set()  # leased by this worker, not acknowledged
        self.parsed: list[str] = []  # done since the last renewal (not what kills a worker)
        self._scraped: dict[str, tuple[str, list[Any]]] = {}  # page -> (URL, items)
        self.waiting: list[Waiting] = []
        self._to_hold: dict[str, Evidence] = {}  # a waiting page's lookups, held once delivered
        self.acks: list[str] = []  # done and delivered, not yet sent
        self.handoffs: list[tuple[str, bytes]] = []  # (page, outbox entry) not yet sent
        self.last_delivered = 0  # the last index flush delivered
        self._flush_asked = False  # a flush asked for since the last delivery

    @property
    def idle(self) -> bool:
        """No page leased here nor waiting for the index."""
        return not self.held and not self.waiting

    @property
    def unsent(self) -> bool:
        return bool(self.acks or self.handoffs)

    def leased(self, page: str) -> None:
        self.held.add(page)

    def scraped(self, page: str, url: str, item: Any) -> None:
        if page in self.held:
            self._scraped.setdefault(page, (url, []))[1].append(item)

    def dropped(self, page: str) -> None:
        """Done, but not a lease of this worker (any more)."""
        self._scraped.pop(page, None)

    def done(self, page: str, ticket: int, hold: Evidence, now: float) -> Done:
        """A held page done, its items in index flush ``ticket`` (0: none). Acknowledged
        plainly (its lookups to be held first), or handed off to wait for the flush."""
        url, scraped = self._scraped.pop(page, ("", []))
        self.parsed.append(page)
        if ticket <= self.last_delivered:
            self.acks.append(page)
            return Done.ACK
        self._wait(page, ticket, hold, now)
        self.handoffs.append((page, entry(url, scraped)))
        return Done.HAND_OFF

    def adopted(self, page: str, ticket: int, hold: Evidence, now: float) -> None:
        self._wait(page, ticket, hold, now)

    def _wait(self, page: str, ticket: int, hold: Evidence, now: float) -> None:
        self.waiting.append(Waiting(page, ticket, now))
        if hold:
            self._to_hold[page] = hold

    def flush_wanted(self) -> bool:
        """True once per delivery while pages wait: ask the index for a flush now."""
        if self.waiting and not self._flush_asked:
            self._flush_asked = True
            return True
        return False

    def delivered(self, number: int) -> Delivery:
        """Index flush ``number`` ended: the pages waiting for it or an earlier one are
        delivered."""
        self.last_delivered = max(self.last_delivered, number)
        self._flush_asked = False
        ready = [w for w in self.waiting if w.ticket <= number]
        hold: Evidence = {}
        for waiting in ready:  # in page order: a later page's evidence includes the earlier's
            hold.update(self._to_hold.pop(waiting.page, {}))
        if not ready:
            return Delivery(hold, [], [])
        self.waiting = [w for w in self.waiting if w.ticket > number]
        unsent = {page for page, _ in self.handoffs}.intersection(w.page for w in ready)
        if unsent:
            self.handoffs = [h for h in self.handoffs if h[0] not in unsent]
        acked = [w.page for w in ready if w.page in unsent]
        self.acks.extend(acked)
        return Delivery(hold, acked, [w.page for w in ready if w.page not in unsent])

    def to_send(self) -> tuple[list[str], list[tuple[str, bytes]]]:
        """The acknowledgements and hand-offs for one call, taken out of the book."""
        acks, self.acks = self.acks, []
        handoffs, self.handoffs = self.handoffs, []
        return acks, handoffs

    def sent(self, acks: list[str], handoffs: list[tuple[str, bytes]]) -> None:
        self.held.difference_update(acks)
        self.held.difference_update(page for page, _ in handoffs)

    def renewal(self) -> tuple[list[str], list[str]]:
        """The leases to renew, and the pages parsed since the last renewal."""
        parsed, self.parsed = self.parsed, []
        return sorted(self.held), parsed

    def closed(self) -> tuple[list[str], list[str]]:
        """At close, once the pipelines have closed: what they had is in the index or
        dead-lettered, so what was to be handed off is simply done (the outbox and the
        lookups are cleared as the worker leaves). Returns the acknowledgements to send
        and the leases to hand back."""
        self.acks.extend(page for page, _ in self.handoffs)
        self.handoffs = []
        self.waiting = []
        self._to_hold = {}
        acks, self.acks = self.acks, []
        return acks, sorted(self.held.difference(acks))
