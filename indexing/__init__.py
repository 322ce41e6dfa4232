"""OpenSearch indexing for Scholar Index.

Small modules, one job each:

- ``config``: connection settings (``OpenSearchConfig``), from Scrapy settings or the environment.
- ``client``: the opensearch-py client and the one place its errors become ours.
- ``indices``: versioned indices behind aliases; mapping files; alias swaps.
- ``names``: author-name keys (case and accents folded) and the nicest spelling.
- ``documents``: pure functions turning listings, researchers and enrichment into documents.
- ``changes``: ``Change``, one item to merge into one document (what the writer and the
  dead-letter file carry).
- ``bulk``: ``BulkWriter``, read-merge-write with optimistic concurrency, retries, dead letter.
- ``deadletter``: the append-only JSONL dead-letter file.
- ``replay``: re-deliver a dead-letter file.
- ``scan``: every hit of a search (``helpers.scan``), failures as ``IndexUnavailable``.
"""
