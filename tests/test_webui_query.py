"""The search UI's pure parts: request validation, URL state, query bodies, highlighting."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from markupsafe import Markup

from scholarindex.search.errors import InvalidRequest
from scholarindex.search.facets import FACETS
from scholarindex.search.params import MAX_PAGE, MAX_QUERY_CHARS, SearchRequest
from scholarindex.search.query import (
    MARK_CLOSE,
    MARK_OPEN,
    TEXT_MATCHES,
    query_text,
    search_body,
    text_query,
    visible,
)
from scholarindex.webui.highlight import join_fragments, mark, plain
from scholarindex.webui.results import parse_hit, safe_url


def _roundtrip(request: SearchRequest) -> SearchRequest:
    """Parse a request's URL back the way the app does."""
    params = parse_qs(urlsplit(request.url()).query)
    return SearchRequest.from_strings(
        q=params.pop("q", [""])[0], sort=params.pop("sort", ["relevance"])[0],
        page=int(params.pop("page", ["1"])[0]), size=int(params.pop("size", ["10"])[0]),
        filters=params)


# --- requests and URLs -----------------------------------------------------------------

def test_url_holds_the_whole_state_and_reads_back_the_same():
    request = SearchRequest.from_strings(
        "load  balancing", {"year": ["2026", "2025"], "has_code": ["true"], "author": ["Chao Jin"]},
        sort="newest", page=3, size=20)
    assert request.q == "load balancing"
    assert request.filters["year"] == (2026, 2025)
    assert request.filters["has_code"] == (True,)
    assert _roundtrip(request) == request
    assert SearchRequest().url() == "/"


def test_toggling_a_value_adds_or_removes_it_and_goes_back_to_page_one():
    request = SearchRequest(q="x", filters={"year": (2024,)}, page=4)
    added = request.toggled("year", 2025)
    assert added.filters["year"] == (2024, 2025) and added.page == 1
    removed = added.toggled("year", 2024)
    assert removed.filters["year"] == (2025,)
    assert "year" not in removed.toggled("year", 2025).filters
    assert request.without_filters().filters == {}
    assert request.without_query().q == "" and request.without_query().filters


@pytest.mark.parametrize("kwargs", [
    {"q": "x" * (MAX_QUERY_CHARS + 1)},
    {"page": MAX_PAGE + 1},
    {"page": 0},
    {"page": 30, "size": 50},  # from + size past 1000
    {"size": 51},
    {"sort": "random"},
    {"filters": {"colour": ("red",)}},
    {"filters": {"author": tuple(f"a{i}" for i in range(21))}},
])
def test_limits_are_enforced(kwargs):
    with pytest.raises(InvalidRequest):
        SearchRequest(**kwargs)


@pytest.mark.parametrize(("facet", "value"), [
    ("year", "abc"), ("year", "99"), ("year", "2024.5"), ("has_code", "maybe"),
    ("author", "x" * 600),
])
def test_bad_filter_values_are_invalid_requests(facet, value):
    with pytest.raises(InvalidRequest):
        SearchRequest.from_strings(filters={facet: [value]})


def test_empty_filter_values_are_ignored():
    assert SearchRequest.from_strings(filters={"year": ["", " "]}).filters == {}


# --- query bodies ----------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "sent"), [
    ("moe OR lévy", "moe | lévy"),
    ("a AND b", "a + b"),
    ('"this OR that" OR other', '"this OR that" | other'),
    ("ORACLE or ORnot", "ORACLE or ORnot"),
    ("-survey relibra", "-survey relibra"),
])
def test_or_and_and_become_simple_query_string_operators_outside_quotes(typed, sent):
    assert query_text(typed) == sent


def test_text_query_is_simple_query_string_never_query_string():
    query = text_query('"load balancing" -megatron')
    [match] = query["bool"]["must"]  # the ranking clauses are "should": they never match alone
    sqs = match["simple_query_string"]
    assert sqs["default_operator"] == "and"
    assert "title^3" in sqs["fields"] and "abstract" in sqs["fields"]
    assert '"query_string"' not in json.dumps(query)
    assert text_query("  ") == {"match_all": {}}


def test_each_facet_is_counted_with_every_other_facets_filters_only():
    request = SearchRequest(q="x", filters={"year": (2024, 2025), "category": ("LG",)})
    body = search_body(request)
    year_clause = {"terms": {"year": [2024, 2025]}}  # OR within the facet: one terms clause
    category_clause = {"terms": {"categories": ["LG"]}}
    assert body["post_filter"] == {"bool": {"filter": [year_clause, category_clause]}}
    aggs = body["aggs"]
    assert set(aggs) == {f.name for f in FACETS} | {TEXT_MATCHES}
    assert aggs[TEXT_MATCHES] == {"value_count": {"field": "work_id"}}  # the text alone
    assert aggs["year"]["filter"] == {"bool": {"filter": [category_clause]}}
    assert aggs["category"]["filter"] == {"bool": {"filter": [year_clause]}}
    assert aggs["venue"]["filter"] == {"bool": {"filter": [year_clause, category_clause]}}
    # Selected values are always counted, even when not among the top values.
    assert aggs["year"]["aggs"]["selected"]["terms"]["include"] == [2024, 2025]
    # Filters never narrow the counted set; only works hidden until the pass are left out.
    assert body["query"] == visible(text_query("x"))


def test_no_filter_means_no_post_filter_and_no_query_means_no_highlight():
    body = search_body(SearchRequest())
    assert "post_filter" not in body and "highlight" not in body
    # Nothing to apply: each facet's terms at the top level, no filter that matches all.
    assert body["aggs"] == {f.name: {"terms": body["aggs"][f.name]["terms"],
                                     **({"aggs": body["aggs"][f.name]["aggs"]}
                                        if f.name == "researcher" else {})}
                            for f in FACETS}
    one = search_body(SearchRequest(filters={"year": (2024,)}))["aggs"]
    assert "filter" not in one["year"]  # the only filtered facet: counted over the text alone
    assert one["year__selected"]["terms"]["include"] == [2024]
    assert one["venue"]["filter"] == {"bool": {"filter": [{"terms": {"year": [2024]}}]}}
    paged = search_body(SearchRequest(q="x", page=3, size=20))
    assert (paged["from"], paged["size"]) == (40, 20)
    assert paged["highlight"]["pre_tags"] == [MARK_OPEN]


# --- highlighting and escaping ---------------------------------------------------------

def test_mark_escapes_crawled_html_before_adding_marks():
    fragment = f"such as <{MARK_OPEN}script{MARK_CLOSE}>alert(1)</{MARK_OPEN}script{MARK_CLOSE}>"
    html = mark(fragment)
    assert isinstance(html, Markup)
    assert html == ("such as &lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt;")


@pytest.mark.parametrize("fragment", [
    f"{MARK_CLOSE}a{MARK_OPEN}b", f"{MARK_OPEN}{MARK_OPEN}a{MARK_CLOSE}{MARK_CLOSE}",
    f"a{MARK_OPEN}b", "<mark>fake</mark>",
])
def test_marks_are_always_balanced_and_only_ours(fragment):
    html = str(mark(fragment))
    assert html.count("<mark>") == html.count("</mark>")
    assert "<mark>fake" not in html


def test_fragments_get_ellipses_where_text_was_left_out():
    whole = "First sentence. The middle one has the word. Last sentence."
    assert join_fragments([f"The middle one has the {MARK_OPEN}word{MARK_CLOSE}."], whole) == (
        "… The middle one has the <mark>word</mark>. …")
    assert join_fragments([f"First {MARK_OPEN}sentence{MARK_CLOSE}."], "First sentence.") == (
        "First <mark>sentence</mark>.")
    assert plain("one two three four", 9) == "one two …"


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<b>x</b>", "/relative",
    "//host/path", "ftp://host/file", None, 42,
])
def test_only_http_urls_become_links(url):
    assert safe_url(url) is None


def test_hostile_document_fields_stay_text():
    hit = parse_hit({"_id": "w1", "_source": {
        "title": '<img src=x onerror="alert(1)">', "abstract": "<script>alert(1)</script>",
        "profiles": [{"id": "r1", "name": "<b>Eve</b>", "url": "javascript:alert(1)"}],
        "arxiv": {"pdf_url": "javascript:alert(1)"}, "arxiv_id": None,
    }})
    assert hit.title_html == "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"
    assert hit.snippet_html == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert hit.profiles[0].url is None and hit.pdf_url is None
    assert hit.profiles[0].name == "<b>Eve</b>"  # text; the template escapes it
