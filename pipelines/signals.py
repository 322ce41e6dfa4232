"""Signals between the crawl's components.

``work_enriched``: sent (on the reactor thread) when the arXiv lookup for a work
has an outcome. Handler keyword arguments: ``work_id: str``, ``arxiv: dict | None``
(the matched record; keys as in ``indexing.documents.ARXIV_FIELDS``), ``status: str``
(``pending``, ``done``, ``none`` or ``error``), ``reason: str | None``. The index
pipeline turns it into an enrichment patch of that work's document.

    crawler.signals.send_catch_log(work_enriched, work_id=..., arxiv=..., status="done",
                                   reason=None)
"""

work_enriched = object()
