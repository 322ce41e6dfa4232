"""The work identity rule: one id per paper, different ids for different papers."""

import pytest

from scholarindex.core.identity import canonical_url, researcher_id, title_key, work_id
from scholarindex.core.names import name_key

RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"
PARITY = "Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs"


@pytest.mark.parametrize(
    "variant",
    [
        RELIBRA.upper(),
        RELIBRA.lower(),
        "ReLibra - Routing Replay Guided Load Balancing for MoE Training in Reinforcement Learning",
        "ReLibra: Routing–Replay–Guided Load Balancing for MoE Training in Reinforcement Learning.",
        "  ReLibra:   Routing-Replay-Guided  Load Balancing for MoE Training in Reinforcement "
        "Learning ",
        "ReLibra: Routing-Replay-Guided Load Balancing for \\textit{MoE} Training in "
        "Reinforcement Learning",
    ],
)
def test_same_paper_same_id(variant: str) -> None:
    assert work_id(variant) == work_id(RELIBRA)


@pytest.mark.parametrize(
    "variant",
    [
        "Parity declustering for fault–tolerant storage systems via t-designs",
        "Parity Declustering for Fault-Tolerant Storage Systems via $t$–designs",
        "PARITY DECLUSTERING FOR FAULT TOLERANT STORAGE SYSTEMS VIA T DESIGNS",
    ],
)
def test_latex_and_dashes_do_not_split_a_paper(variant: str) -> None:
    assert work_id(variant) == work_id(PARITY)


def test_accents_and_symbols_fold() -> None:
    assert work_id("Análisis de Señales en Zürich") == work_id("Analisis de Senales en Zurich")
    assert work_id("$\\alpha$-Divergence Bounds") == work_id("α-Divergence Bounds")
    assert work_id("Vision & Language Models") == work_id("Vision and Language Models")
    assert work_id("Ørsted’s Læring") == work_id("Orsted's Laering")


@pytest.mark.parametrize(
    "other",
    [
        RELIBRA + " Systems",  # extends the title
        "ReLibra: Routing-Replay-Guided Load Balancing for Dense Models",  # shares first words
        # reorders its words
        "Routing-Replay-Guided Load Balancing: ReLibra for MoE Training in Reinforcement "
        "Learning",
        "ReLibra 2: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement "
        "Learning",
    ],
)
def test_similar_titles_are_different_papers(other: str) -> None:
    assert work_id(other) != work_id(RELIBRA)


def test_title_key_is_readable() -> None:
    assert title_key("SRT: Tree-Structured Cache") == "srttreestructuredcache"


def test_researcher_id_ignores_scheme_slash_and_query() -> None:
    base = researcher_id("https://bzpeer.example/researchers/chao-jin")
    assert researcher_id("http://www.bzpeer.example/researchers/chao-jin/?utm=x#top") == base
    assert researcher_id("https://bzpeer.example/researchers/chao-jin/index.html") == base
    assert researcher_id("https://bzpeer.example/researchers/yinmin-zhong") != base
    assert canonical_url("HTTPS://BZPEER.example/a/") == "bzpeer.example/a"


def test_name_key_folds_case_accents_and_spacing() -> None:
    assert name_key("José  Pérez-García") == name_key("jose perez garcia")
    assert name_key("Chao Jin") != name_key("Chao Jing")
