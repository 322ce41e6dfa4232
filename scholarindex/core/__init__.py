"""The rules every part of Scholar Index shares, with no Scrapy and no I/O.

Items, work and researcher identity, text and name folding, exit codes, stat
keys, enrichment statuses and the retry policy live here once; the libraries
(``indexing``, ``enrichment``), the Scrapy project (``crawler``, ``pipelines``)
and the tools on top (``ops``, ``webui``) import them. See docs/architecture.md.
"""
