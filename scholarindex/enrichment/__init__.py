"""arXiv enrichment: find each work on arXiv, verify it, and attach its metadata.

A library, no Scrapy: the crawl's pipeline and ``scholarindex`` both use it.

The parts, each in its own module:

* ``query``: titles reduced to plain ASCII words (``scholarindex.core.text.words``) and batched
  into one ``(ti:"..." OR ti:"...")`` query;
* ``matching``: pure verification of candidates (title, year, authors through
  ``scholarindex.core.names``);
* ``config``, ``errors``, ``models``, ``metadata``: settings, exceptions, the values
  passed around, and an arXiv entry as a document's ``arxiv`` object;
* ``cache``, ``ratelimit``: the SQLite cache and the cross-process request slot,
  both in ``ARXIV_CACHE_DIR``;
* ``client``: the ``arxiv`` package behind one error boundary (timeouts, retries);
* ``oaipmh``, ``mirror``, ``harvest``: a local mirror of arXiv harvested over
  OAI-PMH (SQLite, full-text index over titles), consulted before the query API;
* ``resolver``: cache, mirror, batch lookups and verification for a list of listings;
* ``service``: the background ``Enricher`` the Scrapy pipeline feeds;
* ``pending``: ``enrich_pending`` for the ops CLI.
"""

from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable, BadQuery, EnrichmentError
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.pending import enrich_pending
from scholarindex.enrichment.service import Enricher

__all__ = [
    "ArxivUnavailable",
    "BadQuery",
    "Enricher",
    "EnrichmentConfig",
    "EnrichmentError",
    "Listing",
    "Outcome",
    "enrich_pending",
]
