"""Components for scheduled runs (see docs/deploy/).

* ``verdict.RunVerdict``: judges the run; the ``crawl`` command exits with its code.
* ``report.RunReport``: logs the run's summary and writes it as JSON (RUN_REPORT).
* ``incremental.IncrementalMiddleware``: skips pages unchanged since the last good run.
* ``records.RecordCounts``: counts a page item as its researcher and listings.
* ``itemsignals.ItemSignals``: the one receiver of the item signals for the two above.
* ``cpu.CpuAccounting``: the crawl's CPU time (reactor thread, process) in the stats.
* ``jobdir.JobdirReset``: lets one JOBDIR serve a schedule (resume, or start afresh).
"""
