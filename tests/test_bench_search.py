"""The search benchmark's parts (latency, noisy-query sets), and a small run."""

from __future__ import annotations

import random

import pytest

from bench.er.data import Record, available, load
from bench.search import figures, queries, run
from bench.search_data import synthetic_works
from bench.search_quality import (
    DBLP_ACM,
    Pair,
    Query,
    one_typo,
    owner_query,
    pairs_of,
    query_sets,
    score,
)
from scholarindex.core.text import words
from scholarindex.search.params import SearchRequest


def test_synthetic_works_have_the_index_shape():
    docs = list(synthetic_works(50, seed=3))
    assert docs == list(synthetic_works(50, seed=3))  # reproducible
    assert len({d["work_id"] for d in docs}) == 50
    assert any(d["profile_count"] == 2 for d in docs)
    assert {"title", "abstract", "year", "authors", "profiles", "categories", "arxiv_id"} <= set(
        docs[0])


def test_queries_are_valid_requests_and_reproducible():
    made = queries(200, ("graph", "learning"), (2000, 2026), ["LG"])
    assert len(made) == 200 and all(isinstance(r, SearchRequest) for r in made)
    assert made == queries(200, ("graph", "learning"), (2000, 2026), ["LG"])
    assert any(r.filters for r in made) and any(r.sort == "newest" for r in made)


def test_percentiles():
    row = figures("x", [i / 1000 for i in range(1, 101)])  # 1..100 ms
    assert (row.p50, row.p95, row.max) == (50.0, 95.0, 100.0)


@pytest.mark.slow
def test_smoke_run_on_300_works(opensearch_config):
    rows = run(opensearch_config, works=300, count=10, log=lambda _: None)
    labels = [r.label for r in rows]
    assert labels == ["fixtures (42 works): SearchService.search",
                      "fixtures (42 works): GET / (HTML)",
                      "synthetic (300 works): SearchService.search"]
    for row in rows:
        assert row.count == 10 and 0 < row.p50 <= row.p95 <= row.max


# --- noisy queries (bench.search_quality) ------------------------------------------------

def _record(source: str, rid: str, title: str, authors: tuple[str, ...]) -> Record:
    return Record(source, rid, title, authors, ", ".join(authors), "", 2001)


def test_one_typo_is_one_edit_in_the_longest_word_and_keeps_its_first_letter():
    title = "Efficient management of replicated data"
    for seed in range(200):
        typo = one_typo(title, random.Random(seed))
        changed = [(a, b) for a, b in zip(title.split(), typo.split(), strict=True) if a != b]
        assert len(changed) == 1
        before, after = changed[0]
        assert before == "management" and after[0] == "m"
        assert _edits(before, after) == 1


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance (an adjacent swap is one edit)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def test_owner_queries_need_the_profile_owner_as_first_author():
    dblp = _record("DBLP", "d1", "Query Processing in Mobile Databases", ("Bertram Ludäscher",))
    acm = _record("ACM", "1", "Query processing in mobile databases: a survey",
                  ("Bertram Lud&#228;scher", "Other Person"))
    text = owner_query(Pair(dblp, acm), random.Random(1))
    assert text is not None and text.split()[0] == "Lud&#228;scher"  # as ACM prints it
    assert len(text.split()) == 4 and set(text.split()[1:]) <= set(words(acm.title))
    other = _record("ACM", "2", acm.title, ("Someone Else",))
    assert owner_query(Pair(dblp, other), random.Random(1)) is None


def test_scores_are_reciprocal_ranks_within_ten():
    rec = [_record("DBLP", str(i), f"t{i}", ("A B",)) for i in range(3)]
    sets = {"exact": [Query("exact", f"q{i}", r) for i, r in enumerate(rec)]}
    answers = {"q0": ["w0", "x"], "q1": ["x", "w1"], "q2": ["x"] * 10 + ["w2"]}
    [result] = score(sets, lambda r: f"w{r.id}", lambda q: (answers[q], answers[q], "all"))
    assert result.queries == 3 and result.at_one == 1
    assert result.mrr == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.levels == {"all": 3}


@pytest.mark.skipif(not available(DBLP_ACM), reason="DBLP-ACM data not found (ER_DATA_DIR)")
def test_query_sets_from_dblp_acm_are_reproducible_and_full():
    pairs = pairs_of(load(DBLP_ACM))
    assert len(pairs) == 2224
    sets = query_sets(pairs, 600, seed=7)
    assert {name: len(qs) for name, qs in sets.items()} == {"exact": 600, "typo": 600,
                                                           "owner": 600}
    assert sets == query_sets(pairs, 600, seed=7)
    assert all(q.expected.source == "DBLP" for qs in sets.values() for q in qs)
