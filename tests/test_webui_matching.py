"""Match levels, query reading and the browse cache: pure parts, then over the fixture index."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI

from scholarindex.search.matching import (
    MOST_WORDS,
    QueryWords,
    loose_clause,
    loose_levels,
    ranking_clauses,
    read_as_printed,
)
from scholarindex.search.query import text_query
from scholarindex.webui.browse_cache import BrowseCache, index_state
from tests.support.search_site import FixtureSite, add_profiles, tags

# --- reading the query ----------------------------------------------------------------


@pytest.mark.parametrize(("typed", "read"), [
    ("&#961;-queries over streams", "ρ-queries over streams"),
    ("L&eacute;vy processes", "Lévy processes"),
    ("$\\alpha$-Stable processes", "alpha Stable processes"),
    ("\\textit{Heavy-Tailed} noise", "Heavy-Tailed noise"),
    ("relibra -megatron", "relibra -megatron"),  # a typed exclusion stays one
    ("AT&T networks", "AT&T networks"),  # not an entity: left alone
])
def test_queries_read_as_they_print(typed, read):
    assert read_as_printed(typed) == read


def test_words_leave_operators_out_and_keep_exclusions_apart():
    words = QueryWords.parse('"load balancing" OR routing -survey -"old stuff" Müller')
    assert words.words == ("load", "balancing", "routing", "müller")
    assert words.excluded == ("survey", "old", "stuff")


@pytest.mark.parametrize(("q", "levels"), [
    ("relibar", ("fuzzy",)), ("load balancnig", ("fuzzy",)),
    ("load balancing for moe", ("most", "fuzzy")), ("", ()), ('"" -x', ()),
])
def test_most_words_needs_three_words_to_mean_less_than_all(q, levels):
    assert loose_levels(q) == levels


def test_loose_levels_need_most_words_and_fuzz_only_at_the_fuzzy_level():
    words = QueryWords.parse("parity declustering storag -survey")
    most, fuzzy = loose_clause(words, "most"), loose_clause(words, "fuzzy")
    assert most["bool"]["minimum_should_match"] == MOST_WORDS
    assert "fuzziness" not in json.dumps(most) and '"prefix"' not in json.dumps(most)
    assert len(fuzzy["bool"]["should"]) == 3
    assert '"fuzziness": "AUTO"' in json.dumps(fuzzy)
    *first, last = fuzzy["bool"]["should"]
    assert any("prefix" in q for q in last["dis_max"]["queries"])  # the last word, as a prefix
    assert not any("prefix" in q for c in first for q in c["dis_max"]["queries"])
    assert most["bool"]["must_not"] == fuzzy["bool"]["must_not"] != []
    accented = loose_clause(QueryWords.parse("load balancing Pérez"), "fuzzy")
    assert '"prefix": {"title": {"value": "perez"' in json.dumps(accented)  # folded


def test_ranking_adds_phrase_pairs_names_and_initials_but_never_decides_matches():
    clauses = json.dumps(ranking_clauses(QueryWords.parse("J. Smith load balancing")))
    assert '"match_phrase": {"title": {"query": "j smith load balancing"' in clauses
    assert '"query": "load balancing", "slop": 1' in clauses
    assert '"prefix": {"profiles.name.text": {"value": "j"}}' in clauses
    query = text_query("J. Smith load balancing", "most")
    assert query["bool"]["should"] and len(query["bool"]["must"]) == 1
    assert text_query("", "fuzzy") == {"match_all": {}}


# --- the browse cache -----------------------------------------------------------------


def _stats(docs: int, ops: int, refreshes: int = 0, name: str = "w-v1") -> dict:
    return {"indices": {name: {"total": {
        "docs": {"count": docs}, "indexing": {"index_total": ops, "delete_total": 0},
        "refresh": {"total": refreshes}}}}}


def test_a_kept_answer_serves_only_the_same_request_at_the_same_index_state() -> None:
    cache = BrowseCache(max_entries=2)
    calls: list[int] = []

    def compute(n: int) -> Callable[[], dict[str, Any]]:
        def answer() -> dict[str, Any]:
            calls.append(n)
            return {"n": n}
        return answer

    state = index_state(_stats(10, 10))
    assert cache.get({"q": 1}, state, compute(1)) == {"n": 1}
    assert cache.get({"q": 1}, state, compute(2)) == {"n": 1}  # kept
    assert cache.get({"q": 1}, index_state(_stats(10, 11)), compute(3)) == {"n": 3}  # a write
    assert cache.get({"q": 1}, index_state(_stats(10, 11, 1)), compute(4)) == {"n": 4}  # refresh
    moved = index_state(_stats(10, 11, 1, name="w-v2"))  # a reindex moved the alias
    assert cache.get({"q": 1}, moved, compute(5)) == {"n": 5}
    cache.get({"q": 2}, moved, compute(6))
    cache.get({"q": 3}, moved, compute(7))  # the least recently used ({"q": 1}) goes
    assert cache.get({"q": 1}, moved, compute(8)) == {"n": 8}
    assert calls == [1, 3, 4, 5, 6, 7, 8]


# --- over the fixture index -----------------------------------------------------------


def test_every_answer_says_its_match_level_and_how_the_query_was_read(site: FixtureSite):
    body = site.search(q="L&eacute;vy")
    assert body["match"] == "all" and body["query_read_as"] == "Lévy" and body["total"] == 1
    assert site.search()["match"] == "all"


@pytest.mark.parametrize(("q", "level", "says"), [
    ("relibar", "fuzzy", "No exact match for “relibar”: showing the closest works"),
    ("relibra load balancnig", "most",
     "No work has every word of “relibra load balancnig”: showing results for most"),
    ("L&eacute;vy", "all", "Showing results for “Lévy”"),
])
def test_the_page_says_when_it_shows_something_else_than_every_word(site, q, level, says):
    response = site.http.get("/", params={"q": q})
    assert response.status_code == 200
    [note] = [p for p in tags(response.text).find("p") if p.get("class") == "match-note"]
    assert note["data-match"] == level
    assert says in " ".join(response.text.split())


def test_an_exact_match_shows_no_note(site: FixtureSite):
    assert 'class="match-note"' not in site.http.get("/", params={"q": "relibra"}).text


def test_browsing_sees_a_write_at_once(own_site: FixtureSite, tmp_path):
    app = own_site.http.app
    assert isinstance(app, FastAPI)
    cache = app.state.service.browse_cache
    before = own_site.search(size=1)
    hits = cache.hits
    assert own_site.search(size=1) == before
    assert cache.hits == hits + 1  # kept: the index did not change
    add_profiles(own_site, tmp_path, {"new": ("Ada Newcomer", "https://bzpeer.example/ada",
                                              "bzpeer", ["A Freshly Listed Paper"])})
    after = own_site.search(size=1)
    assert cache.hits == hits + 1  # asked again, not served from the cache
    assert after["total"] == before["total"] + 1
    assert after["facets"]["researcher"] != before["facets"]["researcher"]
