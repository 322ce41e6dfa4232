"""The search UI and JSON API of Scholar Index, over the ``works``/``researchers`` aliases.

Small modules, one job each:

- ``facets``: the facets (name, field, how a URL value is read) in display order.
- ``params``: ``SearchRequest``, a validated search (query, filters, sort, page) and its URL.
- ``query``: pure functions building OpenSearch request bodies.
- ``highlight``: crawled text to safe HTML with ``<mark>`` around the matches.
- ``results``: OpenSearch responses to result objects the templates and the API show.
- ``http_errors``: the service's exceptions and the one place OpenSearch errors become them.
- ``service``: ``SearchService``, the only code that talks to OpenSearch (reads only).
- ``inputs``: query parameters read into a ``SearchRequest`` (one reader for page and API).
- ``pages``/``api``: the HTML routes and the JSON routes (``/api/search``, ...).
- ``templating``: the Jinja2 environment (autoescape always on).
- ``app``: the FastAPI app: wires the service to the routes, answers errors.
- ``cli``: the ``scholarindex serve`` command.
"""
