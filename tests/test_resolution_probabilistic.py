"""bench.er.probabilistic: comparison levels, EM on data whose answer is known,
the product's clustering reused, and the offline evaluator's fs and hybrid resolvers."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from bench.er import probabilistic as fs
from bench.er.data import available, load
from scholarindex.core.resolution import Atom, resolve
from scholarindex.core.resolution.cluster import _pool
from scholarindex.core.resolution.decide import decide_features, features

needs_bib = pytest.mark.skipif(not available("bib-cytology"), reason="ER data not found")


def fields(title: str, owner: str = "Jim Gray", authors: tuple[str, ...] = (),
           years: tuple[int, ...] = (2001,), venues: tuple[str, ...] = ()) -> fs.Fields:
    return fs.fields_of(features(Atom("w", (title,), authors, False, (owner,), years, venues)))


# --- comparison levels ------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "level"), [
    ("Efficient query processing", "Efficient Query Processing.", "exact"),
    ("Efficient query processing over uncertain data",
     "Efficient query procesing over uncertain data", "jw>=0.97"),
    ("Mining association rules between sets of items in large databases",
     "Mining association rules between sets of items in very large databases", "jw>=0.92"),
    ("Query processing over uncertain data", "Processing queries on uncertain data streams",
     "jw>=0.85 or token-sort>=0.8"),
    ("Query optimization for XML", "Query optimization for XML: a survey of the field",
     "token-set>=0.9"),
    ("Query optimization for XML", "A theory of nested relations", "else"),
])
def test_title_levels(a: str, b: str, level: str) -> None:
    assert fs.TITLE_LEVELS[fs.compare(fields(a), fields(b))[fs.TITLE]] == level


def test_a_generic_title_alike_has_its_own_level_and_unalike_stays_unalike() -> None:
    assert fs.compare(fields("Editor's Notes"), fields("Editor's notes"))[fs.TITLE] == (
        fs.TITLE_GENERIC)
    assert fs.compare(fields("Editor's Notes"),
                      fields("Query optimization for XML"))[fs.TITLE] == 0


def test_year_levels_and_a_missing_year_says_nothing() -> None:
    assert fs.year_level(frozenset({2001}), frozenset({2001, 1999})) == 2
    assert fs.year_level(frozenset({2001}), frozenset({2002})) == 1
    assert fs.year_level(frozenset({2001}), frozenset({2004})) == 0
    assert fs.year_level(frozenset({2001}), frozenset()) == fs.NULL


def test_venue_levels() -> None:
    assert fs.venue_level(["sigmod conference"], ["sigmod conference"]) == 2
    assert fs.venue_level(["vldb"], ["vldb journal"]) == 1
    assert fs.venue_level(["vldb"], ["sigmod record"]) == 0
    assert fs.venue_level([], ["vldb"]) == fs.NULL


def test_author_levels_layout_a_prints_only_its_owner() -> None:
    owner_only = fields("A title of some length", owner="Jim Gray")
    other_owner = fields("A title of some length", owner="Pat Helland")
    card = fields("A title of some length", owner="Pat Helland",
                  authors=("Pat Helland", "Jim Gray"))
    stranger = fields("A title of some length", owner="Ann Smith",
                      authors=("Ann Smith", "Bob Jones"))
    assert fs.author_level(owner_only, other_owner) == fs.NULL  # co-authors' profiles
    assert fs.author_level(owner_only, card) == 1
    assert fs.author_level(other_owner, card) == 1
    assert fs.author_level(card, fields("x y z", owner="Jim Gray",
                                        authors=("Jim Gray", "Pat Helland"))) == 2
    assert fs.author_level(owner_only, stranger) == 0  # the owner missing from a list


# --- estimation ---------------------------------------------------------------------------

TRUE_M = ((0.02, 0.03, 0.05, 0.1, 0.2, 0.55, 0.05), (0.05, 0.15, 0.8), (0.1, 0.1, 0.8),
          (0.1, 0.5, 0.4))
TRUE_U = ((0.97, 0.012, 0.008, 0.004, 0.002, 0.002, 0.002), (0.6, 0.25, 0.15),
          (0.5, 0.2, 0.3), (0.9, 0.09, 0.01))


def synthetic(pairs: int, share: float, seed: int = 7) -> Counter[tuple[int, ...]]:
    """Comparison vectors drawn from known m and u (a field missing a tenth of the time)."""
    rng = random.Random(seed)
    vectors: Counter[tuple[int, ...]] = Counter()
    for _ in range(pairs):
        source = TRUE_M if rng.random() < share else TRUE_U
        vectors[tuple(fs.NULL if k and rng.random() < 0.1
                      else rng.choices(range(len(p)), weights=p)[0]
                      for k, p in enumerate(source))] += 1
    return vectors


def test_em_recovers_m_and_the_share_of_matches_with_u_known() -> None:
    patterns = synthetic(40_000, 0.2)
    m, share, iterations = fs.em(patterns, fs.initial_m(), TRUE_U, 0.1,
                                 range(len(fs.COMPARISONS)), iterations=200, tolerance=1e-7)
    assert share == pytest.approx(0.2, abs=0.02)
    for found, truth in zip(m, TRUE_M, strict=True):
        assert found == pytest.approx(truth, abs=0.03)
    assert 1 < iterations <= 200


def test_em_fixes_what_it_does_not_train_and_ignores_what_it_does_not_use() -> None:
    patterns = synthetic(20_000, 0.3)
    start = fs.initial_m()
    m, _, _ = fs.em(patterns, start, TRUE_U, 0.1, (fs.YEAR,), use=(fs.TITLE, fs.YEAR),
                    iterations=200, tolerance=1e-7)
    assert m[fs.TITLE] == start[fs.TITLE] and m[fs.AUTHORS] == start[fs.AUTHORS]
    assert m[fs.YEAR] == pytest.approx(TRUE_M[fs.YEAR], abs=0.05)


def test_u_from_random_pairs_is_the_share_of_each_level() -> None:
    u = fs.level_distribution([(0, 2, fs.NULL, 0), (0, 0, fs.NULL, 0), (1, 2, 0, fs.NULL)])
    assert sum(u[fs.TITLE]) == pytest.approx(1.0)
    assert u[fs.TITLE][0] > u[fs.TITLE][1] > u[fs.TITLE][2]  # half a pair on unseen levels
    assert u[fs.YEAR][2] == pytest.approx(2.5 / 4.5)


def test_a_weight_is_the_prior_plus_each_levels_log_ratio() -> None:
    model = fs.Model(TRUE_M, TRUE_U, 0.01, 0.2, (1, 1, 1))
    weight = model.match_weight((5, 2, fs.NULL, 1))
    expected = (math.log2(0.01 / 0.99) + math.log2(0.55 / 0.002) + math.log2(0.8 / 0.15)
                + math.log2(0.5 / 0.09))  # the venue, missing, weighs nothing
    assert weight == pytest.approx(expected, abs=1e-5)
    assert fs.probability(weight) == pytest.approx(2 ** weight / (1 + 2 ** weight))


# --- resolution -----------------------------------------------------------------------------

def listing(work_id: str, title: str, owner: str, year: int = 2001) -> Atom:
    return Atom(work_id, (title,), (), False, (owner,), (year,), ("VLDB",))


def card(work_id: str, title: str, authors: tuple[str, ...], year: int = 2001) -> Atom:
    return Atom(work_id, (title,), authors, False, (authors[0],), (year,))


WORLD = [
    listing("a1", "Integrating Triggers and Declarative Constraints in SQL Database Systems",
            "Roberta Cochrane", 1996),
    card("a2", "Integrating triggers and declarative constraints in SQL database sytems",
         ("Hamid Pirahesh", "Roberta Cochrane"), 1996),
    listing("b1", "Mariposa: A Wide-Area Distributed Database System", "Carl Staelin"),
    card("b2", "Mariposa: a wide-area distributed databse system",
         ("Michael Stonebraker", "Carl Staelin")),
    listing("c1", "Editor's Notes", "Ling Liu", 2002),
    listing("c2", "Editor's notes", "Ling Liu", 2003),
    card("d1", "Query Optimization for Object Databases", ("Ann Smith", "Bob Jones"), 1999),
    card("d2", "Query Optimization for Relational Databases", ("Cy Young",), 1995),
]


def test_resolve_with_the_rule_is_the_products_resolve() -> None:
    pooled = _pool(WORLD)
    feats = [features(a) for a in pooled]
    hooked = fs.resolve_with(pooled, feats, lambda i, j: decide_features(feats[i], feats[j]))
    assert hooked == resolve(WORLD)


def test_probabilistic_resolution_joins_printings_and_keeps_papers_apart() -> None:
    linkage = fs.link(WORLD)
    assert linkage.model.prior > 0 and set(linkage.model.weights()) == {
        name for name, _ in fs.COMPARISONS}
    clusters = set(linkage.resolve(0.5).clusters)
    assert ("a1", "a2") in clusters and ("b1", "b2") in clusters
    assert ("d1",) in clusters and ("d2",) in clusters
    assert all(len(c) <= 2 for c in clusters)
    # Every threshold gives a partition of the same atoms.
    for threshold in fs.THRESHOLDS:
        assert sorted(w for c in linkage.resolve(threshold).clusters for w in c) == sorted(
            a.work_id for a in WORLD)


def test_the_hybrid_above_certainty_is_the_rule() -> None:
    assert fs.link(WORLD).hybrid(threshold=1.5) == resolve(WORLD)


def test_the_result_does_not_depend_on_the_atoms_order() -> None:
    shuffled = WORLD[::-1]
    assert fs.link(shuffled).resolve(0.5) == fs.link(WORLD).resolve(0.5)


# --- the offline evaluator -----------------------------------------------------------------

@needs_bib
def test_the_scoreboard_prints_a_table_a_threshold_for_fs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.er.scoreboard import main as scoreboard
    out = tmp_path / "board.json"
    assert scoreboard(["--data", "bib-cytology", "--limit", "150", "--resolver", "fs",
                       "--threshold", "0.5", "--threshold", "0.99", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fs, match probability >= 0.5" in printed and "match probability >= 0.99" in printed
    saved = json.loads(out.read_text("utf-8"))
    assert saved["resolver"] == "fs" and len(saved["rows"]) == 2
    result = saved["results"]["bib-cytology"]
    assert set(result["fs_by_threshold"]) == {"0.5", "0.99"}
    assert 0 < result["fs"]["f1"] <= 1 and result["fs_model"]["prior"] > 0


@needs_bib
def test_evaluate_scores_the_hybrid_at_each_threshold() -> None:
    from bench.er.evaluate import evaluate
    result = evaluate(load("bib-cytology", limit=150), "hybrid", blocking_figures=False,
                      thresholds=(0.9,))
    assert list(result["hybrid_by_threshold"]) == ["0.9"]
    assert 0 < result["hybrid"]["f1"] <= 1
