"""The crawl's Scrapy extensions (``EXTENSIONS`` in crawler/settings.py).

* ``verdict.RunVerdict``: judges the run; the ``crawl`` command exits with its code.
* ``report.RunReport``: logs the run's summary and writes it as JSON (RUN_REPORT).
* ``records.RecordCounts``: counts a page item as its researcher and listings.
* ``itemsignals.ItemSignals``: the one receiver of the item signals for the two above.
* ``cpu.CpuAccounting``: the crawl's CPU time (reactor thread, process) in the stats.
* ``gctuning.GcTuning``: the garbage collector's thresholds for the crawl.
* ``jobdir.JobdirReset``: lets one JOBDIR serve a schedule (resume, or start afresh).
* ``resolution.WorkResolution``: one work document per paper when a crawl finished.

The incremental middleware is in ``crawler/middlewares/``; the distributed crawl's
page tracker in ``crawler/distributed/``.
"""
