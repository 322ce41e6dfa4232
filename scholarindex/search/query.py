"""OpenSearch request bodies for the search page, researcher pages and autocomplete.

Pure functions of a ``SearchRequest`` (or an id, or typed text): easy to test
without a cluster, and the only place the query language is spoken.

Facets: the query text selects the candidate works; each facet's selected values
combine with OR (one ``terms`` clause), facets with AND. The hits get every
filter as a ``post_filter``; each facet's counts are taken over the query and every
*other* facet's filters (a ``filter`` aggregation holding them, or the bare terms
when there are none), so the count shown next to a value is exactly the total you
get by adding that value.

The query part, its match levels and the ranking rule are ``scholarindex.search.matching``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from scholarindex.indexing.indices import alias_name
from scholarindex.search import matching
from scholarindex.search.facets import FACET_BY_NAME, FACETS, Facet
from scholarindex.search.matching import read_as_printed
from scholarindex.search.params import SearchRequest

# OpenSearch marks matches with these private-use characters, not HTML tags: the search
# UI escapes the fragment first and only then turns them into <mark> (scholarindex.webui.highlight).
MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
# What a result needs; ``listings`` (every profile's copy) stays on the server.
SOURCE_FIELDS = (
    "work_id", "title", "abstract", "year", "date", "venues", "types", "categories",
    "sources", "has_code", "authors", "profiles", "profile_count", "arxiv_id",
    "arxiv.id", "arxiv.pdf_url", "arxiv.primary_category", "arxiv.doi",
)
TEXT_MATCHES = "text_matches"  # the aggregation counting works the text matches, unfiltered
SELECTED_SUFFIX = "__selected"  # a top-level facet's aggregation of its selected values
SORT_CLAUSES: Mapping[str, list[Any]] = {
    # work_id last: a total order, so pages never repeat or skip a hit.
    "relevance": ["_score", {"year": {"order": "desc", "missing": "_last"}},
                  {"work_id": "asc"}],
    "newest": [{"year": {"order": "desc", "missing": "_last"}},
               {"date": {"order": "desc", "missing": "_last"}}, "_score", {"work_id": "asc"}],
}
HIGHLIGHT: Mapping[str, Any] = {
    # Sentinel tags, no encoder: the fragments come back as raw text and
    # scholarindex.webui.highlight escapes them itself before turning sentinels into <mark>.
    "pre_tags": [MARK_OPEN],
    "post_tags": [MARK_CLOSE],
    "fields": {
        "title": {"number_of_fragments": 0},
        "abstract": {"fragment_size": 220, "number_of_fragments": 2},
    },
}
RESEARCHER_WORKS = 200  # works listed on a researcher page
COAUTHORS = 100  # co-author profiles listed on a researcher page
NAMESAKES = 50  # profiles on other sites whose name is checked for a cross-site link
SUGGEST_FIELDS = {
    "works": ("title.sayt", "title.sayt._2gram", "title.sayt._3gram"),
    "researchers": ("name.sayt", "name.sayt._2gram", "name.sayt._3gram"),
}
_BARE_OPERATOR = re.compile(r"(?<!\S)(OR|AND)(?!\S)")


def query_text(q: str) -> str:
    """The user's text in simple_query_string syntax: ``OR`` becomes ``|``, ``AND`` ``+``.

    simple_query_string only knows ``|`` and ``+``; people type ``OR``. Inside quotes
    the words stay words.
    """
    parts = q.split('"')
    for i in range(0, len(parts), 2):  # even parts are outside quotes
        parts[i] = _BARE_OPERATOR.sub(lambda m: "|" if m.group(1) == "OR" else "+", parts[i])
    return '"'.join(parts)


def text_query(q: str, level: str = "all") -> dict[str, Any]:
    """The full-text part at match ``level`` (``webui.matching``); every work without text."""
    printed = read_as_printed(q)
    return matching.text_query(printed, query_text(printed), level)


def facet_clause(facet: Facet, values: Iterable[Any]) -> dict[str, Any]:
    """One facet's filter: any of its selected values (OR within a facet)."""
    return {"terms": {facet.field: list(values)}}


def all_of(clauses: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Every clause must hold (AND across facets); everything when there is none."""
    clauses = list(clauses)
    return {"bool": {"filter": clauses}} if clauses else {"match_all": {}}


def facet_aggs(filters: Mapping[str, dict[str, Any]],
               selected: Mapping[str, tuple[Any, ...]]) -> dict[str, Any]:
    """Per facet: its terms counted over the query and every other facet's filters.

    A facet with other facets' filters to apply gets a ``filter`` aggregation holding
    them, its terms inside. A facet with none (every facet when nothing is selected)
    gets its terms at the top level: the same counts without a filter that matches
    every work, which an engine may evaluate document by document over the whole
    index before it counts. ``selected`` values get their own ``include``
    terms aggregation (``<facet>__selected`` at the top level) so they are always
    shown with a count, even when they are not among the top values.
    """
    aggs: dict[str, Any] = {}
    for facet in FACETS:
        others = [clause for name, clause in filters.items() if name != facet.name]
        chosen = selected.get(facet.name, ())
        wanted = chosen and facet.name != "has_code"  # has_code's two values are always shown
        if not others:
            aggs[facet.name] = _terms(facet)
            if wanted:
                aggs[facet.name + SELECTED_SUFFIX] = _terms(facet, include=chosen)
            continue
        inner: dict[str, Any] = {"values": _terms(facet)}
        if wanted:
            inner["selected"] = _terms(facet, include=chosen)
        aggs[facet.name] = {"filter": all_of(others), "aggs": inner}
    return aggs


def _terms(facet: Facet, include: tuple[Any, ...] = ()) -> dict[str, Any]:
    terms: dict[str, Any] = {"field": facet.field, "size": len(include) or facet.size}
    if include:
        terms["include"] = list(include)
    if facet.by_key_desc:
        terms["order"] = {"_key": "desc"}
    agg: dict[str, Any] = {"terms": terms}
    if facet.name == "researcher":
        agg["aggs"] = profile_label_agg()
    return agg


def profile_label_agg() -> dict[str, Any]:
    """One work per researcher bucket, to read the profile's name from (no second request)."""
    return {"profile": {"top_hits": {"size": 1, "_source": ["profiles.id", "profiles.name"]}}}


# A new printing the writer judged another work's, until the resolution pass decides
# (``scholarindex.indexing.unresolved``): searches leave it out, hits, counts and facets.
HIDDEN = "hidden_by"


def visible(query: dict[str, Any]) -> dict[str, Any]:
    """``query`` without the works hidden until the resolution pass."""
    return {"bool": {"must": [query], "must_not": [{"exists": {"field": HIDDEN}}]}}


def search_body(request: SearchRequest, level: str = "all") -> dict[str, Any]:
    """The search page's request at match ``level``: hits, total, highlights, every facet's
    counts, and ``matched``: how many works the text matches before any filter (a text
    that matches nothing is asked again at the next level)."""
    filters = {name: facet_clause(FACET_BY_NAME[name], values)
               for name, values in request.filters.items()}
    body: dict[str, Any] = {
        "query": visible(text_query(request.q, level)),
        "from": request.offset,
        "size": request.size,
        "track_total_hits": True,
        "sort": SORT_CLAUSES[request.sort],
        "_source": list(SOURCE_FIELDS),
        "aggs": facet_aggs(filters, request.filters),
    }
    if filters:
        # Aggregations see the query before the post_filter: this counts the text alone
        # (every work has one work_id; a value_count costs far less than a filter).
        body["aggs"][TEXT_MATCHES] = {"value_count": {"field": "work_id"}}
        body["post_filter"] = all_of(filters.values())
    if request.q:
        body["highlight"] = dict(HIGHLIGHT)
    return body


def text_matches(response: Mapping[str, Any]) -> int:
    """How many works a ``search_body`` response's text matched, before any filter."""
    counted = (response.get("aggregations") or {}).get(TEXT_MATCHES)
    if counted is not None:
        return int(counted.get("value") or 0)
    total = (response.get("hits") or {}).get("total") or {}
    return int(total.get("value", 0) if isinstance(total, Mapping) else total)


def researcher_works_body(researcher_id: str) -> dict[str, Any]:
    """A researcher's works, newest first, and the other profiles on those works."""
    return {
        "query": {"term": {"profiles.id": researcher_id}},
        "size": RESEARCHER_WORKS,
        "track_total_hits": True,
        "sort": SORT_CLAUSES["newest"],
        "_source": list(SOURCE_FIELDS),
        "aggs": {
            "coauthors": {
                "terms": {"field": "profiles.id", "size": COAUTHORS,
                          "exclude": [researcher_id]},
                "aggs": profile_label_agg(),
            },
        },
    }


def namesakes_body(name: str, source: str) -> dict[str, Any]:
    """Profiles on sites other than ``source`` whose name shares a word with ``name``.

    Deliberately loose (any word, best match first): ``scholarindex.webui.cross_site`` applies the
    strict name rule to what comes back.
    """
    return {
        "size": NAMESAKES,
        "_source": ["id", "name", "url", "source"],
        "query": {"bool": {
            "must": [{"match": {"name": {"query": name}}}],
            "filter": [{"exists": {"field": "source"}}],
            "must_not": [{"term": {"source": source}}],
        }},
    }


def shared_works_body(researcher_id: str, other_ids: Iterable[str]) -> dict[str, Any]:
    """How many works list ``researcher_id`` together with each of ``other_ids``."""
    others = sorted(set(other_ids))
    return {
        "size": 0,
        "query": {"term": {"profiles.id": researcher_id}},
        "aggs": {"shared": {"terms": {"field": "profiles.id", "include": others,
                                      "size": max(1, len(others))}}},
    }


def suggest_searches(text: str, prefix: str, limit: int) -> list[dict[str, Any]]:
    """An ``msearch`` body: titles and researcher names that start like ``text``.

    search_as_you_type with a ``bool_prefix`` multi_match: every word must match,
    the last one as a prefix ("load bal" finds "Load Balancing ...").
    """
    body: list[dict[str, Any]] = []
    for index, fields in SUGGEST_FIELDS.items():
        source = ["title"] if index == "works" else ["name"]
        body.append({"index": alias_name(prefix, index)})
        body.append({
            "size": limit,
            "_source": source,
            "query": (visible if index == "works" else dict)(
                {"multi_match": {"query": text, "type": "bool_prefix",
                                 "operator": "and", "fields": list(fields)}}),
        })
    return body
