"""The Jinja2 environment: autoescape on for every template, whatever its name.

Starlette's default escapes only ``.html``-like names; crawled text is untrusted,
so here escaping is unconditional and an undefined name is an error, not "".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from fastapi.templating import Jinja2Templates

from scholarindex.search.facets import FACET_BY_NAME, FACETS
from scholarindex.search.params import DEFAULT_SIZE, MAX_QUERY_CHARS, SORTS, SearchRequest

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
SORT_LABELS = {"relevance": "Relevance", "newest": "Newest first"}


def search_url(q: str = "", **filters: Any) -> str:
    """The URL of a fresh search (``search_url(author="Chao Jin")``) for links in results."""
    # Cut to the limit: a link built from a long title must not become a 400.
    return SearchRequest(q=q[:MAX_QUERY_CHARS],
                         filters={k: (v,) for k, v in filters.items()}).url()


def researcher_url(researcher_id: str) -> str:
    """The researcher page's path (the id quoted: ids come from the index, untrusted)."""
    return f"/researchers/{quote(researcher_id, safe='')}"


def make_templates() -> Jinja2Templates:
    """Templates from ``scholarindex/webui/templates`` with autoescape forced on."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        facets=FACETS, facet_by_name=FACET_BY_NAME, sorts=SORTS, sort_labels=SORT_LABELS,
        max_query_chars=MAX_QUERY_CHARS, default_size=DEFAULT_SIZE, search_url=search_url,
        researcher_url=researcher_url,
    )
    return Jinja2Templates(env=env)
