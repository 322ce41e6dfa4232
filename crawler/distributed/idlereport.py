"""What keeps an idle worker from closing, said once a minute while the engine got
nothing from its scheduler (``scheduler``): the Redis calls in line, its pages waiting
for the index, its leases, and what the last idle check found of the job."""

from __future__ import annotations

import time

from crawler.distributed.pagebook import PageBook
from scholarindex.distributed.frontier import FrontierState

_SAY_EVERY = 60.0  # seconds between two log lines on what an idle worker waits for


class IdleReport:
    def __init__(self) -> None:
        self.handed_at = time.monotonic()  # when the engine last got a request from here
        self._said_at = 0.0
        self.state: FrontierState | None = None  # what the last idle check found
        self.others_looking_up = 0  # live workers holding lookups (the last check)

    def handed(self) -> None:
        self.handed_at = time.monotonic()

    def checked(self, state: FrontierState, others_looking_up: int) -> None:
        self.state = state
        self.others_looking_up = others_looking_up

    def due(self, now: float) -> bool:
        """True once a minute while the engine got nothing from here."""
        if now - max(self.handed_at, self._said_at) < _SAY_EVERY:
            return False
        self._said_at = now
        return True

    def reasons(self, now: float, pages: PageBook, calls_queued: int,
                answered_at: float) -> list[str]:
        """What keeps the worker: ``calls_queued`` Redis calls in line, the last answered
        at ``answered_at`` (``calls.RedisCalls``); its pages; the job."""
        reasons = []
        if calls_queued:
            reasons.append(f"Redis: {calls_queued} call(s) in line, the last answered "
                           f"{now - answered_at:.0f} s ago")
        if pages.waiting:
            oldest = now - min(w.since for w in pages.waiting)
            reasons.append(f"{len(pages.waiting)} page(s) of this worker waiting for the index "
                           f"(oldest {oldest:.0f} s, flush {min(w.ticket for w in pages.waiting)}"
                           f"; delivered {pages.last_delivered})")
        held = len(pages.held)
        if held:
            reasons.append(f"{held} page(s) leased by this worker, not yet acknowledged")
        state = self.state
        if state is not None:
            if not state.seeded:
                reasons.append("the URL list, not yet all queued by a seeding worker")
            if state.queued:
                reasons.append(f"{state.queued} request(s) queued")
            if self.others_looking_up:
                reasons.append(f"arXiv lookups of {self.others_looking_up} other worker(s)")
            if state.leased > held:
                reasons.append(f"{state.leased - held} page(s) leased by other "
                               "workers (taken here if their leases expire)")
        return reasons
