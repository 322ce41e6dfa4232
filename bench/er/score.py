"""Pairwise precision, recall and F1 of a clustering against gold pairs; blocking's figures.

A clustering is a list of clusters of record keys (``"ACM:304586"``); records in
no cluster are alone. Predicted pairs are the pairs of records in one cluster;
for a data set of two tables only pairs across them count (a record and another
of its own table: the gold of clean-clean benchmarks lists no such pair, so it is
neither right nor wrong). Precision = true predicted / predicted, recall = true
predicted / gold, F1 their harmonic mean; 0 where a denominator is 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PairScore:
    precision: float
    recall: float
    f1: float
    predicted: int
    true_positives: int
    gold: int

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}

    def line(self) -> str:
        return (f"P {self.precision:.4f}  R {self.recall:.4f}  F1 {self.f1:.4f}  "
                f"({self.true_positives} of {self.predicted} predicted pairs true, "
                f"{self.gold} gold)")


def source_of(key: str) -> str:
    return key.split(":", 1)[0]


def predicted_pairs(clusters: Iterable[Sequence[str]], cross_source: bool
                    ) -> set[tuple[str, str]]:
    pairs = set()
    for cluster in clusters:
        members = sorted(set(cluster))
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if not cross_source or source_of(a) != source_of(b):
                    pairs.add((a, b))
    return pairs


def pairwise(clusters: Iterable[Sequence[str]], gold: set[tuple[str, str]],
             cross_source: bool) -> PairScore:
    predicted = predicted_pairs(clusters, cross_source)
    true = len(predicted & gold)
    precision = true / len(predicted) if predicted else 0.0
    recall = true / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PairScore(precision, recall, f1, len(predicted), true, len(gold))


@dataclass(frozen=True)
class BlockingScore:
    """Pair completeness: the share of gold pairs a matcher can still find (both records
    in one atom, or their atoms a candidate pair); reduction ratio: 1 - candidate atom
    pairs / all atom pairs."""

    pair_completeness: float
    reduction_ratio: float
    candidate_pairs: int
    atom_pairs: int
    gold_reachable: int
    gold: int

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}


def blocking(candidates: Iterable[tuple[int, int]], atom_of: dict[str, int], atoms: int,
             gold: set[tuple[str, str]]) -> BlockingScore:
    """``atom_of``: record key -> index of its atom (records lost by the parser absent)."""
    pairs = {(min(i, j), max(i, j)) for i, j in candidates}
    reachable = 0
    for a, b in gold:
        i, j = atom_of.get(a), atom_of.get(b)
        if i is not None and j is not None and (i == j or (min(i, j), max(i, j)) in pairs):
            reachable += 1
    total = atoms * (atoms - 1) // 2
    return BlockingScore(reachable / len(gold) if gold else 0.0,
                         1 - len(pairs) / total if total else 0.0, len(pairs), total,
                         reachable, len(gold))
