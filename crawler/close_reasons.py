"""Why a crawl closed early, as Scrapy's close reason: the stage that stops the crawl
writes one, the verdict and the run report read it."""

from __future__ import annotations

from typing import Final

INDEX_UNAVAILABLE: Final = "opensearch_unavailable"  # the index stage gave up on OpenSearch
REDIS_UNAVAILABLE: Final = "redis_unavailable"  # the distributed scheduler lost Redis
