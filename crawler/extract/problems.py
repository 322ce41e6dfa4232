"""What was odd about a page: a kind for the code to select by, a message for people.

The crawl counts problems by kind (``profiles/untitled``, ``profiles/ambiguous``,
``profiles/encoding_problem``) and logs each problem's message with the page's URL;
the message is the whole text, so a log or report reads it as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ProblemKind(Enum):
    """What kind of thing went wrong; the value names it in reprs and debugging only."""

    ENCODING = "encoding"  # the bytes and the declared charset disagree
    NO_LIST = "no list"  # no listings section found: no works read
    UNTITLED = "untitled listing"  # a listing without a title of its own, left out
    DATE_IN_TEXT = "date in text"  # a line of a card's text reads as a date line; kept as text
    AMBIGUOUS = "ambiguous"  # the listings were split by a guess
    NO_NAME = "no researcher name"  # no researcher, so no items
    CUT_LISTING = "cut listing"  # a page that stops early: its last listing left out
    TRUNCATED = "truncated"  # fewer listings read than the page announces


# Slots: a page's problems cross the parse pool's pipe with its items.
@dataclass(frozen=True, slots=True)
class PageProblem:
    kind: ProblemKind
    message: str  # the whole text, as logs, stats and the run report show it

    def __str__(self) -> str:
        return self.message
