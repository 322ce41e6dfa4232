"""The page layouts, and the order ``parse_profile`` tries them in.

``LAYOUTS`` is walked in order and the first layout whose ``recognise`` says yes
reads the page; a page no layout recognises gives no items. ``bzpeer`` comes
before ``papercards``: it looks for marks of its own site (a trust snapshot, a
verification level, ``N published items``), while ``papercards`` takes any page
with an h-index near citation or paper counts, which a BZPEER bio could hold.
A new layout goes after the ones with stricter tests than its own.

Each layout is one module here implementing ``base.Layout``; adding one is that
module, its place in ``LAYOUTS``, fixture pages and a test (the README's "Adding a
page layout"). ``register`` and ``unregister`` change the list at run time, for
tests: the parse pool's workers import this module afresh, so a layout the crawl
uses is listed here.
"""

from __future__ import annotations

from crawler.extract.layouts.base import Layout
from crawler.extract.layouts.bzpeer import BZPEER
from crawler.extract.layouts.papercards import PAPERCARDS
from crawler.extract.lines import PageText

LAYOUTS: list[Layout] = [BZPEER, PAPERCARDS]


def recognise(text: PageText) -> Layout | None:
    """The first layout in ``LAYOUTS`` that recognises the page, or None."""
    for layout in LAYOUTS:
        if layout.recognise(text):
            return layout
    return None


def register(layout: Layout, *, before: str | None = None) -> None:
    """Add ``layout`` last, or just before the layout whose ``source`` is ``before``."""
    sources = [known.source for known in LAYOUTS]
    if layout.source in sources:
        raise ValueError(f"a layout named {layout.source!r} is already registered")
    if before is not None and before not in sources:
        raise ValueError(f"no layout named {before!r} to register {layout.source!r} before")
    LAYOUTS.insert(len(LAYOUTS) if before is None else sources.index(before), layout)


def unregister(source: str) -> None:
    """Remove the layout named ``source`` (a test undoing its ``register``)."""
    LAYOUTS[:] = [layout for layout in LAYOUTS if layout.source != source]
