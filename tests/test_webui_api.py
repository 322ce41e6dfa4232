"""``/api/*`` over the fixture pages, parsed and indexed for real into the test cluster."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from engine.cluster import free_port
from scholarindex.indexing.client import build_client
from scholarindex.search.errors import InvalidRequest
from scholarindex.search.facets import FACETS
from scholarindex.search.params import MAX_PAGE, SearchRequest
from scholarindex.webui.inputs import YEAR_PATTERN, search_request
from scholarindex.webui.results import HitJSON, ProfileJSON
from scholarindex.webui.service import SearchService
from tests.support.search_site import SCRIPT_TEXT, FixtureSite, app_for
from tests.support.settings import opensearch_config_with

FACET_NAMES = [f.name for f in FACETS]
# Where each facet's values sit in an API hit, to check filters against the hits themselves.
HIT_VALUES = {
    "year": lambda h: [h["year"]],
    "category": lambda h: h["categories"],
    "author": lambda h: h["authors"],
    "researcher": lambda h: [p["id"] for p in h["profiles"]],
    "venue": lambda h: h["venues"],
    "type": lambda h: h["types"],
    "source": lambda h: h["sources"],
    "has_code": lambda h: [h["has_code"]],
}


def param(value: object) -> str:
    """A facet value as a URL parameter (JSON true -> "true")."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def all_hits(site: FixtureSite, **params: object) -> list[dict]:
    """Every hit of a search (the fixture index is small: one page of 50)."""
    body = site.search(size=50, **params)
    assert body["total"] <= 50
    return body["hits"]


def test_search_answers_with_the_contract_shape(site):
    body = site.search(q="relibra")
    assert body["total"] == 2
    for hit in body["hits"]:
        assert {"id", "title", "year", "authors", "profiles", "arxiv_id"} <= set(hit)
        assert "ReLibra" in hit["title"]
    shared = next(h for h in body["hits"] if len(h["profiles"]) == 2)
    assert {p["name"] for p in shared["profiles"]} == {"Chao Jin", "Yinmin Zhong"}
    assert set(body["facets"]) == set(FACET_NAMES)
    for values in body["facets"].values():
        assert all({"value", "count"} <= set(v) for v in values)


@pytest.mark.parametrize("base", [
    {},
    {"q": "learning"},
    {"source": "bzpeer"},
    {"q": "network OR systems", "year": ["2022", "2020"]},
])
def test_facet_count_equals_total_when_filtering_by_it(site, base):
    """For every facet value shown: its count is the total you get by adding it."""
    body = site.search(**base)
    checked = 0
    for name, values in body["facets"].items():
        for value in values:
            if value["selected"]:
                continue
            params = {**base}
            params[name] = [*_as_list(base.get(name)), param(value["value"])]
            if base.get(name):
                continue  # adding to a facet already filtered ORs: not the count's meaning
            total = site.search(**params)["total"]
            assert total == value["count"], (name, value)
            checked += 1
    assert checked >= 10


def _as_list(value: object) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("name", FACET_NAMES)
def test_filters_select_exactly_the_works_that_have_the_value(site, name):
    """Checked against the documents themselves, not against the cluster's counts."""
    everything = all_hits(site)
    assert len(everything) == site.works
    for value in site.search()["facets"][name]:
        expected = {h["id"] for h in everything if value["value"] in HIT_VALUES[name](h)}
        got = {h["id"] for h in all_hits(site, **{name: param(value["value"])})}
        assert got == expected, (name, value["value"])
        assert value["count"] == len(expected)


def test_values_of_one_facet_or_and_facets_and(site):
    everything = all_hits(site)
    years = {2026, 2025}
    either = {h["id"] for h in all_hits(site, year=[str(y) for y in years])}
    assert either == {h["id"] for h in everything if h["year"] in years}
    both = {h["id"] for h in all_hits(site, year=[str(y) for y in years], source="papercards")}
    assert both == {h["id"] for h in everything
                    if h["year"] in years and "papercards" in h["sources"]}
    assert both and both < either
    # The counts agree: source's count for papercards is computed under the year filter.
    facets = site.search(year=[str(y) for y in years])["facets"]
    papercards = next(v for v in facets["source"] if v["value"] == "papercards")
    assert papercards["count"] == len(both)
    # The year facet ignores its own filter: it still offers every year.
    assert len(facets["year"]) == len(site.search()["facets"]["year"])


def test_selected_value_is_marked_and_kept_when_nothing_matches(site):
    facets = site.search(q="relibra", year="2019")["facets"]
    year = {v["value"]: v for v in facets["year"]}
    assert year[2019]["selected"] and year[2019]["count"] == 0
    # The other years still count the query's works: a way out of the empty result.
    assert sum(v["count"] for v in facets["year"]) == site.search(q="relibra")["total"] == 2


@pytest.mark.parametrize(("q", "titles"), [
    ('"expert replication"', {"ReLibra: Routing-Replay-Guided Load Balancing for MoE "
                              "Training in Reinforcement Learning"}),
    # Only one of the two ReLibra abstracts mentions Megatron-LM.
    ("relibra -megatron", {"ReLibra: Routing-Replay-Guided Load Balancing for MoE Training "
                           "in Reinforcement Learning Systems"}),
])
def test_simple_query_syntax(site, q, titles):
    assert {h["title"] for h in all_hits(site, q=q)} == titles


def test_or_widens_and_plain_words_narrow(site):
    relibra = site.search(q="relibra")["total"]
    beam = site.search(q="beam")["total"]
    assert site.search(q="relibra OR beam")["total"] == relibra + beam
    assert site.search(q="relibra beam")["total"] == 0


def test_names_are_searched(site):
    hits = all_hits(site, q="Kadri Tamm")
    assert hits and all(any(p["name"] == "Kadri Tamm" for p in h["profiles"]) for h in hits)


def test_newest_first(site):
    years = [h["year"] or 0 for h in all_hits(site, sort="newest")]
    assert years == sorted(years, reverse=True)


def test_pages_do_not_overlap(site):
    first = [h["id"] for h in site.search(sort="newest", size=10)["hits"]]
    second = [h["id"] for h in site.search(sort="newest", size=10, page=2)["hits"]]
    both = [h["id"] for h in site.search(sort="newest", size=20)["hits"]]
    assert first + second == both
    assert site.search(page=6)["hits"] == []  # past the end (42 works) but within the cap


def test_one_hit_shape_serves_the_api_and_the_page(site):
    """The API's hit is the page's hit (the service's ``Hit``) as ``HitJSON``, key for key,
    in ``HitJSON``'s order; the page shows the same data for it."""
    api_hit = site.search(q="relibra")["hits"][0]
    page_hit = site.http.app.state.service.search(SearchRequest(q="relibra")).hits[0]
    assert api_hit == page_hit.to_json()
    assert list(api_hit) == list(HitJSON.__annotations__)
    assert all(list(p) == list(ProfileJSON.__annotations__) for p in api_hit["profiles"])
    html = site.http.get("/", params={"q": "relibra"}).text
    article = html[html.index(f'id="hit-{api_hit["id"]}"'):]
    article = article[:article.index("</article>")]
    assert api_hit["highlight"]["title"] in article
    for profile in api_hit["profiles"]:
        assert f'href="/researchers/{profile["id"]}">{profile["name"]}</a>' in article
    assert f'<span class="year">{api_hit["year"]}</span>' in article
    # The researcher API's works are the same hits (without a query, nothing is marked).
    researcher = site.http.get(f"/api/researchers/{api_hit['profiles'][0]['id']}").json()
    work = next(w for w in researcher["works"] if w["id"] == api_hit["id"])
    assert {**work, "highlight": None} == {**api_hit, "highlight": None}


def test_highlight_is_escaped_html(site):
    hit = site.search(q="script")["hits"][0]
    assert hit["abstract"].count(SCRIPT_TEXT) == 1  # the raw text, as data
    html = hit["highlight"]["abstract"]
    assert "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt;" in html
    assert "<script" not in html


@pytest.mark.parametrize(("params", "status"), [
    ({"q": "x" * 301}, 422),
    ({"page": MAX_PAGE + 1}, 422),
    ({"page": 30, "size": 50}, 400),  # from + size past 1000
    ({"year": "last year"}, 400),
    ({"sort": "random"}, 422),
])
def test_bad_parameters_are_4xx_json(site, params, status):
    response = site.http.get("/api/search", params=params)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["message"]
    assert "Traceback" not in response.text


def test_suggest_finds_titles_and_researchers(site):
    body = site.http.get("/api/suggest", params={"q": "reli"}).json()
    assert body["suggestions"][0]["text"].startswith("ReLibra")
    assert body["suggestions"][0]["url"].startswith("/?q=ReLibra")
    people = site.http.get("/api/suggest", params={"q": "kad"}).json()["suggestions"]
    assert people[0] == {"kind": "researcher", "id": site.researchers["Kadri Tamm"],
                         "text": "Kadri Tamm",
                         "url": f"/researchers/{site.researchers['Kadri Tamm']}"}
    assert site.http.get("/api/suggest", params={"q": "r"}).json()["suggestions"] == []
    assert site.http.get("/api/suggest", params={"q": "x" * 101}).status_code == 422


def test_researcher_api_lists_coauthors_both_ways(site):
    chao, yinmin = site.researchers["Chao Jin"], site.researchers["Yinmin Zhong"]
    body = site.http.get(f"/api/researchers/{chao}").json()
    assert body["name"] == "Chao Jin" and body["works_total"] == 5
    coauthor = next(c for c in body["coauthors"] if c["id"] == yinmin)
    assert coauthor["name"] == "Yinmin Zhong" and coauthor["shared"] == 1
    assert coauthor["works"][0]["title"].startswith("ReLibra")
    back = site.http.get(f"/api/researchers/{yinmin}").json()
    assert [c["name"] for c in back["coauthors"]] == ["Chao Jin"]


def test_unknown_researcher_is_404_json(site):
    response = site.http.get("/api/researchers/no-such-id")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_every_route_is_read_only(site):
    for route in site.http.app.routes:
        methods = getattr(route, "methods", None) or {"GET"}
        assert methods <= {"GET", "HEAD"}, route
    response = site.http.post("/api/search", json={"q": "x"})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_openapi_documents_the_search_api(site):
    spec = site.http.get("/openapi.json").json()
    params = {p["name"] for p in spec["paths"]["/api/search"]["get"]["parameters"]}
    assert {"q", "sort", "page", *FACET_NAMES} <= params
    assert "/api/researchers/{researcher_id}" in spec["paths"]
    assert site.http.get("/docs").status_code == 200


# Years on both sides of the schema's line: inside it, and just outside (the range's ends,
# a fifth digit, spaces and other scripts' digits the year facet alone would read).
YEARS_IN = ["2024", "1000", "9999", "2019", ""]
YEARS_OUT = ["0999", "999", "10000", "0000", "last year", "20a4", "-2024", "+2024", " 2024",
             "2024 ", "2024\n", "   ", "\u0662\u0660\u0662\u0664", "\uff12\uff10\uff12\uff14",
             "2.024", "2_024"]


def year_endpoints(spec: dict) -> dict[str, dict]:
    """Each path of the schema that takes ``year``, with the schema of one value."""
    found = {}
    for path, operations in spec["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", ()):
                if parameter["name"] == "year":
                    array = next(s for s in parameter["schema"]["anyOf"] if s["type"] == "array")
                    found[path] = array["items"]
    return found


def schema_allows(item: dict, value: str) -> bool:
    """``value`` against a string schema's ``pattern`` and ``maxLength`` (ECMA's "$" is the
    end: ``fullmatch`` reads it so)."""
    return (re.fullmatch(item["pattern"], value) is not None
            and len(value) <= item.get("maxLength", len(value)))


def test_openapi_declares_the_years_the_api_accepts(site):
    endpoints = year_endpoints(site.http.get("/openapi.json").json())
    assert "/api/search" in endpoints
    for path, item in endpoints.items():
        assert item["type"] == "string" and item["pattern"] == "^([1-9][0-9]{3})?$"
        assert item["maxLength"] == 4
        assert "{" not in path  # no path parameter to fill in
        for value in YEARS_IN + YEARS_OUT:
            response = site.http.get(path, params={"year": value})
            expected = 200 if schema_allows(item, value) else 400
            assert (value in YEARS_IN) == (expected == 200), value
            assert response.status_code == expected, (path, value, response.text[:200])
            if expected == 400:
                assert response.json()["error"]["code"] == "invalid_request"
        # One bad value among good ones is refused too.
        assert site.http.get(path, params={"year": ["2024", "0999"]}).status_code == 400


@given(st.one_of(st.text(max_size=8), st.from_regex(r"\s?[0-9]{3,5}\s?", fullmatch=True)))
def test_the_year_reader_accepts_exactly_what_the_schema_allows(value):
    item = {"pattern": YEAR_PATTERN, "maxLength": 4}
    try:
        search_request(year=[value])
    except InvalidRequest:
        assert not schema_allows(item, value)
    else:
        assert schema_allows(item, value)


# --- OpenSearch down or failing ------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/search?q=x", "/api/suggest?q=relibra",
                                  "/api/researchers/abc"])
def test_opensearch_down_is_a_503_json_error(path):
    http = TestClient(app_for(opensearch_config_with(
        OPENSEARCH_URL=f"http://127.0.0.1:{free_port()}", OPENSEARCH_TIMEOUT=2)))
    response = http.get(path)
    assert response.status_code == 503
    assert response.json() == {"error": {
        "code": "service_unavailable",
        "message": "Search is unavailable right now. Please try again in a minute."}}


def test_a_cluster_error_is_retried_once_then_a_503(own_site, fault_proxy):
    site = own_site
    http = TestClient(app_for(replace(site.config, url=fault_proxy.url, timeout=5)))
    fault_proxy.fail_next(1, status=503)
    assert http.get("/api/search", params={"q": "relibra"}).json()["total"] == 2
    fault_proxy.fail_next(2, status=503)
    response = http.get("/api/search", params={"q": "relibra"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    fault_proxy.fail_next(1, status=400)  # our request refused: not retried, not the user's fault
    assert http.get("/api/search", params={"q": "relibra"}).status_code == 500


def test_browsing_works_uncached_when_the_cluster_refuses_index_stats(own_site, fault_proxy):
    # A search-only user may not read _stats: the first call of a browse is that read.
    service = SearchService(build_client(replace(own_site.config, url=fault_proxy.url,
                                                 timeout=5)), own_site.config.prefix)
    fault_proxy.fail_next(1, status=403)
    assert service.search(SearchRequest()).total == own_site.works
    assert service.browse_cache is None  # off for good, searches unaffected
    assert service.search(SearchRequest(sort="newest")).total == own_site.works


def test_a_timeout_is_a_503_and_not_retried(own_site, fault_proxy):
    site = own_site
    http = TestClient(app_for(replace(site.config, url=fault_proxy.url, timeout=0.5)))
    fault_proxy.delay_next(1, 2.0)
    # Only the first request is slow: a retry would have answered 200. The user already
    # waited a whole timeout, so the service gives up at once.
    response = http.get("/api/search", params={"q": "relibra"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"


def test_a_missing_index_is_a_503(opensearch_config):
    http = TestClient(app_for(replace(opensearch_config, prefix="nothing_indexed_yet_")))
    assert http.get("/api/search").status_code == 503
    assert http.get("/api/researchers/abc").status_code == 503
    assert http.get("/api/suggest", params={"q": "relibra"}).status_code == 503
    assert http.get("/").status_code == 503
