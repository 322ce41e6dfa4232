"""Verification: the right arXiv entry is attached, near-misses never are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scholarindex.core.names import same_person, shared_authors
from scholarindex.enrichment.matching import (
    Thresholds,
    distinctive_words,
    title_containment,
    title_similarity,
    verify,
)
from scholarindex.enrichment.models import Listing

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"


def _meta(entry: dict) -> dict:
    return {"id": entry["id"].rsplit("v", 1)[0], "title": entry["title"],
            "authors": entry["authors"], "published": entry["published"],
            "updated": entry["updated"]}


ALL = [_meta(e) for name in ("papers.json", "decoys.json")
       for e in json.loads((FIXTURES / name).read_text("utf-8"))["entries"]]


def entry(arxiv_id: str, title: str, year: int, authors: list[str],
          updated: int | None = None) -> dict:
    return {"id": arxiv_id, "title": title, "authors": authors,
            "published": f"{year}-03-01T00:00:00+00:00",
            "updated": f"{updated or year}-03-01T00:00:00+00:00"}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("J. Cheng", "Jialiang Cheng", True),
        ("Cheng, Jialiang", "Jialiang Cheng", True),
        ("Cheng Jialiang", "Jialiang Cheng", True),
        ("Jia-Liang Cheng", "Jialiang Cheng", True),
        ("José Luis Peñalver", "Jose L. Penalver", True),
        ("Tomás Ferreira", "Tomas Ferreira", True),
        ("Yinmin Zhong", "Yin Min Zhong", True),
        ("T. S. Eugene Ng", "Tze Sing Eugene Ng", True),
        ("JD Ullman", "Jeffrey D. Ullman", True),  # initials glued, as Google Scholar prints
        ("Ullman, JD", "Jeffrey D. Ullman", True),
        ("PA Bernstein", "Philip A. Bernstein", True),
        ("KD Ullman", "Jeffrey D. Ullman", False),
        ("LI WEI", "Wei Li", True),  # all capitals: "LI" stays a name, family name first
        ("LI WEI", "Lan Wei", False),
        ("Jun Cheng", "Jialiang Cheng", False),
        ("Cheng", "Jialiang Cheng", False),
        ("Chao Jin", "Xin Jin", False),
        ("Haibin Lin", "Lin Chen", False),
    ],
)
def test_same_person_tolerates_initials_accents_and_order(a: str, b: str, same: bool) -> None:
    assert same_person(a, b) is same
    assert same_person(b, a) is same


def test_shared_authors_agrees_with_same_person_pair_by_pair() -> None:
    # shared_authors parses each name once rather than once per pair: same answer.
    names = ["J. Cheng", "Cheng, Jialiang", "Cheng Jialiang", "Jun Cheng", "Cheng", "",
             "José Luis Peñalver", "Jose L. Penalver", "Chao Jin", "Xin Jin", "Lin Chen",
             "Haibin Lin", "O'Brien, K.", "Kate O'Brien", "et al."]
    for known in ([], names[:5], names[5:], names[::2], names):
        for authors in ([], names[:7], names[7:], names[1::2], names):
            expected = [n for n in known if any(same_person(n, a) for a in authors)]
            assert shared_authors(known, authors) == expected


@pytest.mark.parametrize(
    ("title", "year", "people", "expected"),
    [
        # Seed papers: found despite case, a later version's plural, a first version a year early.
        ("Accelerated Large Batch Optimization of BERT Pretraining in 54 minutes", 2020,
         ["Haibin Lin"], "2006.13484"),
        ("SRT: Accelerating Reinforcement Learning via Speculative Rollout with Tree-Structured "
         "Cache", 2026, ["Haibin Lin"], "2602.13316"),
        ("GluonCV and GluonNLP: Deep Learning in Computer Vision and Natural Language Processing",
         2020, ["Haibin Lin"], "1907.04433"),
        ("RESNEST: SPLIT ATTENTION NETWORKS", 2020, ["Priya Raghunathan", "Hang Zhang"],
         "2004.08955"),
        ("m3BERT: a modern, multilingual, Matryoshka bidirectional encoder", 2025,
         ["Tomás Ferreira", "Jian Jiao"], "2609.02281"),
        ("Parity declustering for fault–tolerant storage systems via t-designs", 2014,
         ["Chao Jin"], "1301.6412"),
        ("EDiT: A Local-SGD-Based Efficient Distributed Training Method for Large Language "
         "Models", 2024, ["J. Cheng"], "2412.10047"),
        # The real paper wins over a same-title reproduction four years later.
        ("TwinBERT: Distilling Knowledge to Twin-Structured BERT Models for Efficient Retrieval",
         2020, ["Jian Jiao"], "2002.06275"),
        # Near-misses: nothing may be attached.
        ("ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement "
         "Learning Systems", 2025, ["José Luis Peñalver"], None),  # similar title, other people
        ("Machine Learning Regression based Single Event Transient Modeling Method for "
         "Circuit-Level Simulation", 2021, ["Jialiang Cheng", "Yi Liu"], None),  # years apart
        ("Is Network the Bottleneck of Distributed Training?", 2020, ["Haibin Lin"], None),
        ("Is Network the Bottleneck of Distributed Inference?", 2022, ["Kadri Tamm"], None),
        ("Parity Declustering for Fault-Tolerant Storage Systems", 2025,
         ["Mateus Oliveira"], None),  # a seed title extends it
        ("ResNeSt: Split-Attention Networks for Low-Light Image Enhancement", 2025,
         ["Priya Raghunathan", "Anjali Mehta"], None),  # extends a seed title
        ("Hybrid-ARQ with Age of Information: A Unified Explicit Result", 2023,
         ["José Luis Peñalver"], None),  # the same words reordered
        ("Cross-Modal ASR Post-Processing System for Speaker Diarization", 2023,
         ["Tomás Ferreira", "Chao Jin"], None),  # shares a prefix and the owner
    ],
)
def test_verify_against_fixture_entries(title: str, year: int, people: list[str],
                                        expected: str | None) -> None:
    verdict = verify(Listing.of("w", title, year, people), ALL)
    assert (verdict.match or {}).get("id") == expected, verdict.reason


def test_extension_by_same_authors_same_year_is_rejected() -> None:
    listing = Listing.of("w", "Taming Sparsely Activated Transformer with Stochastic Experts",
                         2022, ["Jian Jiao"])
    decoy = entry("2203.09940", "Taming Sparsely Activated Transformer with Stochastic Experts "
                  "for Multilingual Machine Translation", 2022, ["Simiao Zuo", "Jian Jiao"])
    verdict = verify(listing, [decoy])
    assert verdict.match is None
    assert "title" in verdict.reason


def test_prefix_title_with_shared_owner_and_year_is_rejected() -> None:
    """Only the title check stands between this decoy and a wrong id."""
    listing = Listing.of("w", "Cross-Modal ASR Post-Processing System for Error Correction and "
                         "Utterance Rejection", 2022, ["Chao Jin"])
    decoy = entry("2110.07401", "Cross-Modal ASR Post-Processing System for Error Correction",
                  2021, ["Chao Jin", "Rongjun Li"])
    verdict = verify(listing, [decoy])
    assert verdict.match is None
    assert "title" in verdict.reason or "extends" in verdict.reason


def test_subtitle_variants() -> None:
    base = "NGAME: Negative Mining-aware Mini-batching for Extreme Classification"
    listing = Listing.of("w", base, 2022, ["Jian Jiao"])
    for variant, accepted in [
        ("NGAME: Negative Mining-Aware Mini-Batching for Extreme Classification", True),
        ("NGAME - negative mining aware mini batching for extreme classification", True),
        ("NGAME: Negative Mining-aware Mini-batching for Extreme Multi-label Classification",
         True),  # one word added by a revision
        ("NGAME: Negative Mining-aware Mini-batching for Extreme Classification at Web Scale",
         False),
        ("NGAME: Siamese Negative Sampling for Dense Retrieval", False),
    ]:
        verdict = verify(listing, [entry("2207.04452", variant, 2022, ["Jian Jiao"])])
        assert (verdict.match is not None) is accepted, (variant, verdict.reason)


def test_year_uses_published_or_updated_within_one() -> None:
    title = "Taming Sparsely Activated Transformer with Stochastic Experts"
    listing = Listing.of("w", title, 2023, ["Jian Jiao"])
    assert verify(listing, [entry("x", title, 2021, ["Jian Jiao"], updated=2022)]).match
    assert not verify(listing, [entry("x", title, 2020, ["Jian Jiao"], updated=2021)]).match


def test_listing_without_year_needs_a_near_identical_title() -> None:
    people = ["Jian Jiao"]
    exact = entry("x", "Taming Sparsely Activated Transformer with Stochastic Experts", 2021,
                  people)
    close = entry("y", "Taming Sparsely Activated Transformers with Stochastic Expert Mixtures",
                  2021, people)
    listing = Listing.of("w", "Taming Sparsely Activated Transformer with Stochastic Experts",
                         None, people)
    assert verify(listing, [exact]).match
    assert not verify(listing, [close]).match


def test_two_equally_good_candidates_are_ambiguous() -> None:
    title = "ByteComp: Revisiting Gradient Compression in Distributed Training"
    listing = Listing.of("w", title, 2022, ["Haibin Lin"])
    twins = [entry("2205.14465", title, 2022, ["Haibin Lin"]),
             entry("2205.99999", title, 2022, ["Haibin Lin", "Someone Else"])]
    twins[1]["authors"] = ["Haibin Lin"]
    verdict = verify(listing, twins)
    assert verdict.match is None
    assert "ambiguous" in verdict.reason


def test_no_candidates_and_documented_threshold() -> None:
    assert verify(Listing.of("w", "Anything at all here", 2020, ["A B"]), []).reason == (
        "no arXiv entry with this title")
    assert Thresholds().title == 0.90
    assert title_similarity("ResNeSt: Split-Attention Networks",
                            "ResNeSt: Split-Attention Networks for Low-Light Image "
                            "Enhancement") < 0.75
    assert title_similarity("m3BERT: A Modern, Multi-lingual, Matryoshka Bidirectional Encoder",
                            "m3BERT: a modern, multilingual, Matryoshka bidirectional "
                            "encoder") == 1.0


# --- renamed papers: an earlier title on the profile, the latest on arXiv ------------------

EARLIER = "Elastic Expert Placement for Sparse Mixture-of-Experts Training"
RENAMED = ("ElasticMoE: Adaptive Expert Placement for Efficient Sparse Mixture-of-Experts "
           "Training at Scale")


def test_renamed_paper_is_matched_on_strong_evidence() -> None:
    assert title_similarity(EARLIER, RENAMED) < 0.90  # the title rule alone misses it
    assert title_containment(EARLIER, RENAMED) == 5 / 6  # "elastic" became "elasticmoe"
    listing = Listing.of("w", EARLIER, 2024, ["Chao Jin", "Someone Else"])
    renamed = entry("2410.00001", RENAMED, 2025, ["C. Jin", "Ada Arxivson"])
    verdict = verify(listing, [renamed])
    assert verdict.match == renamed and "renamed" in verdict.reason


def test_same_title_by_other_people_or_years_apart_is_refused() -> None:
    listing = Listing.of("w", EARLIER, 2024, ["Chao Jin"])
    others = entry("1905.00002", EARLIER, 2024, ["Marta Kowalski"])
    years_apart = entry("1905.00003", EARLIER, 2019, ["Chao Jin"])
    renamed = entry("2410.00001", RENAMED, 2025, ["Chao Jin"])
    for decoy in (others, years_apart):
        assert verify(listing, [decoy]).match is None
    # With the renamed paper among the candidates, it is the one attached.
    assert verify(listing, [others, years_apart, renamed]).match == renamed
    # A renamed title needs the year too, and a year at all.
    assert verify(listing, [entry("2410.00001", RENAMED, 2026, ["Chao Jin"])]).match is None
    assert verify(Listing.of("w", EARLIER, None, ["Chao Jin"]), [renamed]).match is None


def test_short_generic_titles_are_not_matched_by_containment() -> None:
    listing = Listing.of("w", "Deep Learning for Graphs", 2020, ["Jian Jiao"])
    survey = entry("2001.00004", "Deep Learning on Graphs: A Survey", 2020, ["Jian Jiao"])
    assert title_containment("Deep Learning for Graphs", survey["title"]) == 1.0
    assert len(distinctive_words("Deep Learning for Graphs")) < Thresholds().renamed_min_words
    assert verify(listing, [survey]).match is None


def test_a_different_paper_sharing_most_words_needs_an_author() -> None:
    listing = Listing.of("w", EARLIER, 2024, ["Chao Jin"])
    stranger = entry("2410.00005", RENAMED, 2024, ["Marta Kowalski", "Oren Ben-David"])
    verdict = verify(listing, [stranger])
    assert verdict.match is None and "no author in common" in verdict.reason


@pytest.mark.parametrize(("listed", "arxiv", "accepted"), [
    # Four of five distinctive words kept, one changed: 0.80, at the threshold.
    ("Speculative Rollouts for Reinforcement Learning Training",
     "Speculative Decoding for Reinforcement Learning Post-Training", True),
    ("Fast Speculative Rollouts for Reinforcement Learning",
     "Faster Speculative Rollouts in Reinforcement Learning", True),
    # Three of five kept, one dropped and one changed: 0.60.
    ("Fast Speculative Rollouts for Reinforcement Learning",
     "Speculative Decoding in Reinforcement Learning", False),
    # Six of eight: 0.75, below the threshold.
    ("Cross-Modal ASR Post-Processing System for Speaker Diarization",
     "Cross-Modal ASR Post-Processing System for Error Correction and Utterance Rejection",
     False),
    # The listed words wrapped in a much longer title: another paper.
    ("Expert Placement Sparse Training",
     "Expert Placement for Sparse Training of Vision Language Models with Adaptive Routing "
     "Caches", False),
    # A follow-up extending the title by a phrase is refused as before.
    ("Taming Sparsely Activated Transformer with Stochastic Experts",
     "Taming Sparsely Activated Transformer with Stochastic Experts for Multilingual Machine "
     "Translation", False),
])
def test_renamed_near_misses_on_both_sides(listed: str, arxiv: str, accepted: bool) -> None:
    verdict = verify(Listing.of("w", listed, 2022, ["Jian Jiao"]),
                     [entry("2201.00006", arxiv, 2022, ["Jian Jiao"])])
    assert (verdict.match is not None) is accepted, verdict.reason
