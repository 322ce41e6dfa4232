"""A small judged query set on the fixture index: each query, the works it must rank
first (in order), and the match level that must answer (``scholarindex.search.matching``).

The fixture pages go through the real parser and writer into the test cluster; the
queries go through ``/api/search`` as a visitor's would.
"""

from __future__ import annotations

import pytest

from tests.support.search_site import FixtureSite

RELIBRA = ("ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement "
           "Learning")
RELIBRA_SYSTEMS = RELIBRA + " Systems"  # the near-miss title, a year older
PARITY_2013 = "Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs"
PARITY_2025 = "Parity Declustering for Fault-Tolerant Storage Systems"
CALIBRATED = "Calibrated Uncertainty for Graph Neural Networks under Distribution Shift"
GNN_SURVEY = "Graph neural networks and program synthesis: a survey"
LEVY = ("Scalable Inference for $\\alpha$-Stable Lévy Processes with \\textit{Heavy-Tailed} "
        "Noise: Evidence from Võrtsjärv Lake Sediments")
HARQ_2023 = "Hybrid-ARQ with Age of Information: A Unified Explicit Result"
HARQ_2022 = "Age of Information with Hybrid-ARQ: A Unified Explicit Result"

# (query, expected first titles in order, or a set when their order is free; level)
JUDGED: list[tuple[str, list[str] | set[str], str]] = [
    # The exact name: the 2026 paper first, the near-miss title second.
    ("ReLibra", [RELIBRA, RELIBRA_SYSTEMS], "all"),
    # A typo in a one-word query: nothing has the word, the spelling-tolerant level does.
    ("relibar", [RELIBRA, RELIBRA_SYSTEMS], "fuzzy"),
    # A typo among other words: most words still match.
    ("relibar load balancing", [RELIBRA, RELIBRA_SYSTEMS], "most"),
    ("Calibrated Uncertanity for Graph Neural Networks", [CALIBRATED], "most"),
    # A title cut short mid-word: the paper whose title holds every other word first.
    ("Parity Declustering for Fault-Tolerant Storage Systems via t-des", [PARITY_2013], "most"),
    # ... and cut short at a word: the title that is exactly those words is still found.
    ("Parity Declustering for Fault-Tolerant", {PARITY_2013, PARITY_2025}, "all"),
    # Words together in a title beat the same words scattered over abstracts.
    ("graph neural networks", {GNN_SURVEY, CALIBRATED}, "all"),
    ("Hybrid-ARQ with Age of Information", [HARQ_2023, HARQ_2022], "all"),
    ("Is Network the Bottleneck of Distributed Inference",
     ["Is Network the Bottleneck of Distributed Inference?"], "all"),
    ("Is Network the Bottleneck of Distributed Inference in 2022",
     ["Is Network the Bottleneck of Distributed Inference?",
      "Is Network the Bottleneck of Distributed Training?"], "most"),
    # HTML entities and LaTeX read as they print; accents folded.
    # (α is a word of its own in one index and "alpha" in another: any level may answer.)
    ("Scalable inference for &#945;-stable L&eacute;vy processes", [LEVY], ""),
    ("$\\alpha$-Stable Levy Processes", [LEVY], "all"),
    # A person named in the query: their work first, accents folded, initials read.
    ("Penalver erasure codes", ["Erasure Codes for Cold Storage: Lessons from a Decade of "
                                "Deployment"], "all"),
    ("K. Tamm depth completion", ["Depth Completion from Sparse LiDAR with Confidence "
                                  "Propagation"], "most"),
    ("Tomas Ferreira speaker diarization", ["Cross-Modal ASR Post-Processing System for "
                                            "Speaker Diarization"], "all"),
    ("Raghunathan depth", ["Self-Supervised Monocular Depth under Adverse Weather"], "all"),
]


@pytest.mark.parametrize(("q", "expected", "level"), JUDGED, ids=[j[0] for j in JUDGED])
def test_judged_queries_rank_the_expected_works_first(site: FixtureSite, q: str,
                                                      expected: list[str] | set[str],
                                                      level: str) -> None:
    body = site.search(q=q)
    titles = [hit["title"] for hit in body["hits"]]
    if level:
        assert body["match"] == level, titles
    if isinstance(expected, set):
        assert set(titles[:len(expected)]) == expected, titles
    else:
        assert titles[:len(expected)] == expected, titles


def test_a_strict_match_never_falls_back(site: FixtureSite) -> None:
    # Every word matches one work: the looser levels (which would add the other
    # ReLibra and more) are not asked.
    body = site.search(q="relibra megatron")
    assert body["match"] == "all" and body["total"] == 1


def test_text_that_matches_only_outside_the_filters_asks_to_drop_a_filter(site) -> None:
    body = site.search(q="relibra", year="2019")
    assert body["total"] == 0 and body["match"] == "all"  # not loosened into other works


def test_nothing_close_is_still_nothing(site: FixtureSite) -> None:
    body = site.search(q="qwxzv jjkkq")
    assert body["total"] == 0 and body["hits"] == []
