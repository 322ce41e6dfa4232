"""The crawl's own signals, beside Scrapy's (``scrapy.signals``): every custom signal of
the project is defined here, so a component that sends one and a component that
handles it need only this module, not each other.

``page_failed``: sent by the spider's errback with ``request=``: the page is done, with
no items. The distributed crawl acknowledges the page's lease on it
(``crawler/distributed/``).

``run_verdict``: sent once per crawl, at ``spider_closed``, by the verdict extension
(``crawler.extensions.verdict``) with ``verdict`` (a ``Verdict``) and ``reason``. The
page state commits only an ok run; the run report records it.

``work_enriched``: sent (on the reactor thread) when the arXiv lookup for a work
has an outcome. Handler keyword arguments: ``work_id: str``, ``arxiv: dict | None``
(the matched record; keys as in ``scholarindex.indexing.documents.ARXIV_FIELDS``),
``status: str`` (``pending``, ``done``, ``none`` or ``error``), ``reason: str | None``. The index
pipeline turns it into an enrichment patch of that work's document.

    crawler.signals.send_catch_log(work_enriched, work_id=..., arxiv=..., status="done",
                                   reason=None)

Added by the arXiv stage (``pipelines.enrich``): it sends ``work_enriched`` only
for answers that arrive after the work's item passed (answers already in the
cache travel on the item's ``arxiv``/``enrichment`` instead), with one more
keyword, ``updated_at: str | None``: when arXiv gave the answer (ISO 8601, UTC;
the same on a re-crawl served from the cache; None for ``pending``). A work
listed on several profiles may get one signal per answer; a work once ``done``
in a run is never sent ``none`` or ``pending`` afterwards.

``index_ticket`` and ``index_delivered``: between the index pipeline
(``pipelines.index``) and whoever acknowledges work only once it is in the index (the
distributed crawl, ``crawler/distributed/``). Flushes are numbered 1, 2, ... as they
start. A handler of ``index_ticket`` (no keywords; the pipeline) returns the number of
the flush that carries every change buffered so far: the next flush when something
waits in the buffer (or is held through an outage), which the flush timer starts
without more items; else the last flush started. No handler (indexing off): nothing
to wait for. ``index_delivered`` (keyword
``number``) is sent when flush ``number`` ended with nothing held back (no outage):
every change buffered before that flush started is then in the index or in the
dead-letter file, so every ticket up to ``number`` is delivered.
``index_flush_soon`` (no keywords): flush what is buffered now, or as soon as the
flush in flight ends, without waiting for the timer or a full batch (the distributed
crawl, when its unacknowledged pages reach their bound).

``lookups_adopted`` (keyword ``evidence``: ``{"work_id", "listings": [work item fields]}``
per work, ``crawler.distributed.lookupbook``): the
distributed crawl hands the arXiv stage the lookups a dead worker of the job left
unanswered (``scholarindex.distributed.lookups``); their answers come as ``work_enriched``.

``items_adopted`` (keyword ``items``: page or record items as they left the pipelines
before the index stage): the distributed crawl hands the index pipeline the items a dead
worker of the job had handed to its own index stage and not delivered
(``scholarindex.distributed.outbox``); the pipeline buffers them as if they had come
through it, and ``index_ticket`` then names the flush that carries them.
"""

page_failed = object()
run_verdict = object()
work_enriched = object()
lookups_adopted = object()
items_adopted = object()
index_ticket = object()
index_flush_soon = object()
index_delivered = object()
