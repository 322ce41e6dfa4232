"""The HTML pages over the indexed fixture pages: escaping, states, links, errors."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from bench.search_data import refresh
from engine.cluster import free_port
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import enrichment_change
from scholarindex.indexing.deadletter import DeadLetterFile
from tests.support.search_site import (
    SCRIPT_ESCAPED,
    SCRIPT_TEXT,
    FixtureSite,
    app_for,
    tags,
)
from tests.support.settings import LAYOUT, opensearch_config_with, writer_retry_with


def page(site: FixtureSite, url: str, status: int = 200) -> str:
    response = site.http.get(url)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def only_our_scripts(html: str) -> None:
    scripts = tags(html).find("script")
    assert scripts == [{"src": "/static/app.js", "defer": None}]
    assert SCRIPT_TEXT not in html


@pytest.mark.parametrize("url", ["/?q=untrusted", "/?q=calibrated+uncertainty",
                                 "/?author=Kadri+Tamm"])
def test_script_in_an_abstract_shows_as_text(site, url):
    html = page(site, url)
    only_our_scripts(html)
    assert SCRIPT_ESCAPED in html


def test_script_is_text_on_the_researcher_page_and_in_highlights(site):
    html = page(site, f"/researchers/{site.researchers['Kadri Tamm']}")
    only_our_scripts(html)
    assert SCRIPT_ESCAPED in html  # the full abstract, folded in <details>
    html = page(site, "/?q=script+alert")
    only_our_scripts(html)
    assert "&lt;<mark>script</mark>&gt;<mark>alert</mark>(1)&lt;/<mark>script</mark>&gt;" in html


def test_templates_escape_everything():
    from scholarindex.webui.templating import make_templates

    env = make_templates().env
    assert env.autoescape is True
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_empty_state_invites_a_search_and_still_offers_facets(site):
    html = page(site, "/")
    assert f"Search {site.works} works" in html
    assert 'class="hits"' not in html
    assert 'role="checkbox"' in html  # browse by facet
    assert tags(html).find("label")[0]["for"] == "q"


def test_results_show_highlights_metadata_and_profile_links(site):
    html = page(site, "/?q=relibra")
    assert "<mark>ReLibra</mark>: Routing-Replay-Guided" in html
    assert 'data-total="2">2</span> works for “relibra”' in html
    chao, yinmin = site.researchers["Chao Jin"], site.researchers["Yinmin Zhong"]
    links = {a.get("href") for a in tags(html).find("a")}
    assert {f"/researchers/{chao}", f"/researchers/{yinmin}"} <= links
    assert "/?author=Chao+Jin" in links
    assert 'class="venue">arXiv' in html and 'class="type">preprint' in html


def test_facet_links_toggle_values_and_keep_the_rest_of_the_state(site):
    html = page(site, "/?q=learning&sort=newest")
    boxes = [a for a in tags(html).find("a") if a.get("role") == "checkbox"]
    assert boxes and all(a["aria-checked"] == "false" for a in boxes)
    year = next(a for a in boxes if a["data-facet"] == "year")
    params = parse_qs(urlsplit(year["href"]).query)
    assert params == {"q": ["learning"], "year": [year["data-value"]], "sort": ["newest"]}
    filtered = page(site, year["href"])
    chosen = [a for a in tags(filtered).find("a")
              if a.get("role") == "checkbox" and a["aria-checked"] == "true"]
    assert [(a["data-facet"], a["data-value"]) for a in chosen] == [("year", year["data-value"])]
    # Its link now removes the value again.
    assert parse_qs(urlsplit(chosen[0]["href"]).query) == {"q": ["learning"], "sort": ["newest"]}


def test_no_results_suggest_dropping_each_filter(site):
    html = page(site, "/?q=relibra&year=2019&source=papercards")
    assert "No works match" in html
    drops = {a["href"]: a for a in tags(html).find("a") if a.get("href", "").startswith("/?")}
    assert "/?q=relibra&source=papercards" in drops  # without the year
    assert "/?q=relibra&year=2019" in drops  # without the source
    assert "/?q=relibra" in drops  # without any filter
    assert "/?year=2019&source=papercards" in drops  # without the text


def test_researcher_pages_link_coauthors_to_each_other(site):
    chao, yinmin = site.researchers["Chao Jin"], site.researchers["Yinmin Zhong"]
    html = page(site, f"/researchers/{chao}")
    assert "<h1>Chao Jin</h1>" in html
    assert f'href="/researchers/{yinmin}">Yinmin Zhong</a>' in html
    assert "ReLibra: Routing-Replay-Guided" in html
    assert f'href="/?researcher={chao}"' in html
    back = page(site, f"/researchers/{yinmin}")
    assert f'href="/researchers/{chao}">Chao Jin</a>' in back


def h1_texts(html: str) -> list[str]:
    """The text of every ``<h1>`` of a page, markup removed, whitespace collapsed."""
    return [" ".join(re.sub(r"<[^>]*>", "", inner).split())
            for inner in re.findall(r"<h1\b[^>]*>(.*?)</h1>", html, flags=re.S)]


@pytest.mark.parametrize(("url", "status", "title"), [
    ("/", 200, "Scholar Index"),  # the empty state
    ("/?q=relibra", 200, "Scholar Index"),  # results
    ("/?sort=newest", 200, "Scholar Index"),  # browsing everything
    ("/?author=Kadri+Tamm", 200, "Scholar Index"),  # browsing by a facet
    ("/?q=relibra&year=2019", 200, "Scholar Index"),  # no results
    ("/?sort=newest&page=50", 200, "Scholar Index"),  # past the last hit
    ("researcher:Chao Jin", 200, "Chao Jin"),
    ("/researchers/nobody", 404, "Not found"),
    ("/?year=last+year", 400, "That request did not work"),
    ("/no/such/page", 404, "Not found"),
])
def test_every_page_kind_has_exactly_one_meaningful_h1(site, url, status, title):
    if url.startswith("researcher:"):
        url = f"/researchers/{site.researchers[url.split(':', 1)[1]]}"
    assert h1_texts(page(site, url, status=status)) == [title]


def test_browsing_everything_pages_through_all_works(site):
    html = page(site, "/?sort=newest")
    assert f'data-total="{site.works}"' in html
    hrefs = [a.get("href") for a in tags(html).find("a")]
    assert "/?sort=newest&page=2" in hrefs  # the state, defaults left out
    last = page(site, "/?sort=newest&page=5")
    assert 'start="41"' in last and "showing 41–42" in last
    assert 'rel="next"' not in last and 'href="/?sort=newest&amp;page=4" rel="prev"' in last


def test_page_beyond_the_cap_is_a_friendly_400(site):
    deep = page(site, "/?page=51", status=400)
    assert "Traceback" not in deep and "page" in deep


def test_too_long_query_is_a_friendly_400(site):
    html = page(site, "/?q=" + "x" * 301, status=400)
    assert "That request did not work" in html
    assert "Traceback" not in html


def test_unknown_researcher_and_path_are_404_pages(site):
    assert "Not found" in page(site, "/researchers/nobody", status=404)
    assert "Not found" in page(site, "/no/such/page", status=404)


def test_security_headers(site):
    response = site.http.get("/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("url", ["/", "/?q=relibra", "/researchers/abc"])
def test_opensearch_down_is_a_friendly_503_page(url):
    port = free_port()
    http = TestClient(app_for(opensearch_config_with(OPENSEARCH_URL=f"http://127.0.0.1:{port}",
                                                     OPENSEARCH_TIMEOUT=2)))
    response = http.get(url)
    assert response.status_code == 503
    assert h1_texts(response.text) == ["Search is taking a break"]
    assert "Try again" in response.text
    for leak in ("Traceback", "opensearchpy", str(port), "ConnectionError"):
        assert leak not in response.text


def test_arxiv_links_appear_once_a_work_is_enriched(own_site, opensearch_client, tmp_path):
    site = own_site
    work_id = site.search(q="relibra -megatron")["hits"][0]["id"]
    before = site.search(q="relibra -megatron")["hits"][0]
    arxiv = {"id": "2601.01234v1", "title": "ReLibra", "doi": "10.1000/relibra",
             "pdf_url": "javascript:alert(1)",  # a hostile URL must not become a link
             "authors": ["J. L. Penalver", "Ada Arxivson"], "categories": ["cs.DC", "cs.LG"]}
    writer = BulkWriter(opensearch_client, site.config.prefix, DeadLetterFile(tmp_path / "dl"),
                        writer_retry_with(), layout=LAYOUT)
    assert writer.write([enrichment_change(work_id, status="done", arxiv=arxiv)]).delivered == 1
    refresh(opensearch_client, site.config.prefix)
    hit = site.search(q="relibra -megatron")["hits"][0]
    assert hit["arxiv_id"] == "2601.01234v1"
    assert hit["links"] == {"arxiv": "https://arxiv.org/abs/2601.01234v1",
                            "pdf": "https://arxiv.org/pdf/2601.01234v1",
                            "doi": "https://doi.org/10.1000/relibra"}
    html = page(site, "/?q=relibra+-megatron")
    hrefs = {a.get("href") for a in tags(html).find("a")}
    assert {"https://arxiv.org/abs/2601.01234v1", "https://arxiv.org/pdf/2601.01234v1",
            "https://doi.org/10.1000/relibra"} <= hrefs
    assert not any((h or "").startswith("javascript:") for h in hrefs)
    # arXiv's authors and categories join the work's own: in the hit, the facet, the cards.
    assert before["authors"] == ["José Luis Peñalver"]
    assert hit["authors"] == ["José Luis Peñalver", "Ada Arxivson"]  # one person, fullest name
    assert set(hit["categories"]) == {*before["categories"], "cs.DC", "cs.LG"}
    assert hit["category_labels"]["cs.LG"] == "Machine Learning (cs.LG)"
    facet = site.search(q="relibra -megatron")["facets"]["category"]
    assert {"value": "cs.LG", "count": 1, "label": "Machine Learning (cs.LG)",
            "selected": False} in facet
    assert site.search(category="cs.DC")["total"] == 1
    assert "Distributed, Parallel, and Cluster Computing (cs.DC)" in html.replace("&#39;", "'")
    researcher = page(site, f"/researchers/{site.researchers['José Luis Peñalver']}")
    assert "Machine Learning (cs.LG)" in researcher and "Ada Arxivson" in researcher
