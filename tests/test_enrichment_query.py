"""Titles to plain ASCII words, and batched ``ti:`` queries."""

from __future__ import annotations

import pytest

from scholarindex.enrichment.query import (
    batches,
    build_query,
    encoded_length,
    is_queryable,
    query_key,
    searchable_key,
)
from standins.arxiv import BadQueryError, parse_fielded, parse_query


@pytest.mark.parametrize(
    ("title", "key"),
    [
        ("Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs",
         "parity declustering for fault tolerant storage systems via t designs"),
        ("Parity declustering for fault–tolerant storage systems via t-designs",
         "parity declustering for fault tolerant storage systems via t designs"),
        (r"Scalable Inference for $\alpha$-Stable Lévy Processes with \textit{Heavy-Tailed} Noise",
         "scalable inference for alpha stable levy processes with heavy tailed noise"),
        ("Scalable inference for α-stable Levy processes with heavy-tailed noise",
         "scalable inference for alpha stable levy processes with heavy tailed noise"),
        ("Graph Neural Networks & Program Synthesis: A Survey",
         "graph neural networks and program synthesis a survey"),
        ('The "Counterfactual" Shapley’s Value', "the counterfactual shapley value"),
        ("Shapley's Value and ALICE'S Theorem", "shapley value and alice theorem"),
        (r"Effects of \"{o}ffnung and \'{e}t\'e on Ørsted", "effects of offnung and ete on orsted"),
        ("Códigos correctores de errores", "codigos correctores de errores"),
        ("RESNEST: SPLIT ATTENTION NETWORKS", "resnest split attention networks"),
    ],
)
def test_title_key_is_plain_ascii_words(title: str, key: str) -> None:
    assert query_key(title) == key


def test_titles_without_enough_words_are_not_searched() -> None:
    assert not is_queryable(query_key("BEAM"))
    assert not is_queryable(query_key("中文标题"))
    assert is_queryable(query_key("ResNeSt: Split-Attention Networks"))


def test_query_ors_quoted_phrases_that_arxiv_accepts() -> None:
    keys = [query_key('A "quoted" title – with dashes'), query_key("Lévy $\\beta$-processes")]
    query = build_query(keys)
    assert query == '(ti:"a quoted title with dashes" OR ti:"levy beta processes")'
    assert query.isascii()
    assert parse_query(query)  # the stand-in's arXiv grammar takes it
    assert build_query(keys[:1]) == 'ti:"a quoted title with dashes"'


def test_a_raw_title_would_have_broken_the_query() -> None:
    with pytest.raises(BadQueryError):
        parse_query('ti:"Lévy processes"')
    with pytest.raises(BadQueryError):
        parse_query('(ti:"a "quoted" title" OR ti:"other")')


def test_batches_respect_count_and_url_length() -> None:
    keys = [f"title number {i} about distributed training systems" for i in range(45)]
    by_count = list(batches(keys, batch_size=20, max_query_chars=10_000))
    assert [len(b) for b in by_count] == [20, 20, 5]
    by_length = list(batches(keys, batch_size=20, max_query_chars=400))
    assert all(encoded_length(build_query(b)) <= 400 for b in by_length)
    assert [k for b in by_length for k in b] == keys
    long_one = ["word " * 200]
    assert list(batches(long_one, batch_size=20, max_query_chars=100)) == [long_one]


def test_fallback_clauses_batch_into_one_query_the_stand_in_takes() -> None:
    clauses = ["(ti:placement AND ti:training AND au:jin)", "(ti:bottleneck AND au:lin)"]
    query = build_query(clauses)
    assert query == f"({clauses[0]} OR {clauses[1]})"
    assert parse_fielded(query) == [
        (frozenset({"placement", "training"}), (frozenset({"jin"}),)),
        (frozenset({"bottleneck"}), (frozenset({"lin"}),)),
    ]
    for bad in ["(ti:a AND", "ti:a AND nonsense", "(ti:a AND au:b))", 'ti:"" AND au:x',
                "(ti:a AND au:Lévy)"]:
        with pytest.raises(BadQueryError):
            parse_fielded(bad)


@pytest.mark.parametrize("title", [
    "Graph Neural Networks & Program Synthesis: A Survey", "BEAM", "  BEAM  ", "", "--",
    "α-β", "$x$", "Shapley's", "Deep  Learning", "Über-Learning\tfor\nGraphs", "a b",
])
def test_searchable_key_is_the_key_of_a_queryable_title(title: str) -> None:
    key = query_key(title)
    assert searchable_key(title) == (key if is_queryable(key) else None)
