"""OpenSearch indexing for Scholar Index: a library, no Scrapy.

Small modules, one job each:

- ``connection``: where and how to reach the cluster (``OpenSearchConfig.from_settings``).
- ``client``: the opensearch-py client and the one place its errors become ours.
- ``errors``: the package's exceptions (``IndexUnavailable``, ``InvalidItem``).
- ``indices``: versioned indices behind aliases, built from ``index_mappings/``.
- ``documents``: pure functions turning listings, researchers and enrichment into documents.
- ``changes``: ``Change``, one item to merge into one document (what the writer and the
  dead-letter file carry).
- ``batching``: when the crawl hands a batch to the writer (count, bytes, time).
- ``bulk``: ``BulkWriter``, read-merge-write with optimistic concurrency, retries, dead letters.
- ``process``: the writer in a child process, off the crawl's GIL.
- ``deadletter``: the append-only JSONL dead-letter file.
- ``replay``: re-deliver a dead-letter file.
- ``scan``: every hit of a search (``helpers.scan``), failures as ``IndexUnavailable``.
"""
