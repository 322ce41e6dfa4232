"""Scrapy signals the pipelines exchange.

``work_enriched``: arXiv enrichment finished for a work after the work's item
had already passed through the pipelines (the lookup ran in the background).
Sent on the reactor thread with ``send_catch_log(signal=work_enriched,
work_id=..., arxiv=..., status=..., reason=..., updated_at=...)``: ``arxiv`` is
the metadata dict or None; ``status`` is "done" (matched), "none" (verified:
not on arXiv) or "pending" (arXiv unavailable or the crawl ended first;
``reason`` says which); ``updated_at`` is when arXiv gave the answer (ISO 8601,
UTC; the same on a re-crawl served from the cache), None for "pending".
A work listed on several profiles gets one signal per answer, and a work once
"done" in a run is never sent "none" or "pending" afterwards.
"""

work_enriched = object()
