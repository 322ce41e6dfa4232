"""The search UI and JSON API of Scholar Index, over the ``works``/``researchers`` aliases.

Small modules, one job each:

- ``facets``: the facets (name, field, how a URL value is read) in display order.
- ``params``: ``SearchRequest``, a validated search (query, filters, sort, page) and its URL.
- ``query``: pure functions building OpenSearch request bodies.
- ``highlight``: crawled text to safe HTML with ``<mark>`` around the matches.
- ``results``: OpenSearch responses to result objects the templates and the API show.
- ``errors``: the service's exceptions and the one place OpenSearch errors become them.
- ``service``: ``SearchService``, the only code that talks to OpenSearch (reads only).
- ``app``: the FastAPI app (thin routes, templates, JSON API, error pages).
- ``cli``: the ``scholarindex serve`` command.
- ``bench_data``/``bench_search``: fixture and synthetic data for tests and the latency benchmark.
"""
