"""``enrich_pending``: finish the lookups a crawl left pending, synchronously.

For ``scholarindex enrich --pending`` (an ops command, not on a reactor): it
blocks for as long as arXiv's 3-second rule requires, sharing the request slot
and the cache with any crawl running on the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.resolver import build_resolver


def enrich_pending(listings: Iterable[Listing], config: EnrichmentConfig,
                   on_event: Callable[[str, int], None] | None = None) -> list[Outcome]:
    """One outcome per listing, in order; "pending" again only if arXiv is still down.

    Listings of the same work should be merged first (``Listing.merged``) so
    they are verified against all their evidence.
    """
    resolver, fetcher = build_resolver(config, on_event=on_event)
    try:
        return resolver.resolve(listings)
    finally:
        fetcher.close()
