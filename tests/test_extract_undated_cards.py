"""Paper cards without a date are cards of their own, in every markup.

A card's meta line may carry no date (``68.9AI``, ``DCCode``, ``LG``) or be missing
altogether; see the rules in crawler/extract/layouts/papercards.py. Pages are built card
by card (tests/support/cards.py) and rendered by the fixtures' renderer.
"""

from __future__ import annotations

import json

import pytest

from bench.scholar_cards import measure, scholar_csv
from crawler.extract import ProblemKind, parse_profile
from fixtures import render
from fixtures.cards import MARKUPS, TODAY, Card, card_page, rendered

WORK_KEYS = "title abstract type year date venue category score authors authors_truncated code"

DATED = [
    Card("BEAM: Binary Expert Activation Masking for Dynamic Routing in MoE",
         "Juntong Wu, Jialiang Cheng, Qishen Yin et al.",
         "Mixture-of-Experts architectures enhance the efficiency of large language models "
         "by activating only a subset of experts per token.",
         score="68.9", category="AI", date="May 14"),
    Card("EDiT: A Local-SGD-Based Efficient Distributed Training Method for Large Language "
         "Models", "Jialiang Cheng, Ning Gao, Yun Yue et al.",
         "Distributed training methods are crucial for large language models (LLMs).",
         category="DC", date="Dec 10, 2024", code=True),
    Card("Machine Learning Regression based Single Event Transient Modeling Method for "
         "Circuit-Level Simulation", "ChangQing Xu, Yi Liu, XinFang Liao et al.",
         "In this paper, a novel machine learning regression based single event transient "
         "(SET) modeling method is proposed.", category="LG", date="May 22, 2021"),
]
# Undated cards, one of each shape: meta line without a date (score and tag, tag and
# Code, tag alone, score and Code, an archive-style tag), or no meta line at all;
# with and without an abstract.
UNDATED = {
    "score_tag": Card("Sparse Routing for Mixture-of-Experts Inference at Scale",
                      "Mei Tanaka, Hiroshi Sato", "We study sparse routing.",
                      score="68.9", category="AI"),
    "tag_code": Card("Straggler-Tolerant Local SGD", "Lars Berg et al.",
                     "Local SGD methods suffer from stragglers; we bound their effect.",
                     category="DC", code=True),
    "tag_only_no_abstract": Card("A Note on Gradient Compression", "Olga Ivanova",
                                 category="LG"),
    "score_code": Card("Benchmarking Long-Context Retrieval", "Ravi Iyer, Ana García",
                       "A benchmark of long-context retrieval across twelve models.",
                       score="72", code=True),
    "archive_tag": Card("Graph Neural Networks for Program Repair", "Sofia Rossi et al.",
                        "We repair programs with graph neural networks.", category="cs.LG"),
    "no_meta": Card("Attention Is All You Need Again", "Noah Kim, Emma Walker",
                    "The dominant sequence transduction models are recurrent."),
    "no_meta_no_abstract": Card("Deep Learning", "Yann LeCun, Yoshua Bengio, Geoffrey Hinton"),
}


def works(page) -> list[dict]:
    return [{key: getattr(w, key) for key in WORK_KEYS.split()} for w in page.works]


def expected(cards: list[Card]) -> list[dict]:
    return [{"type": None, "venue": None, **card.expected()} for card in cards]


def parse(cards: list[Card], markup: str, listed: int | None = None):
    body, content_type = rendered(card_page(cards, listed=listed), markup)
    return parse_profile("https://papercards.example/authors/ada-quispe", body, content_type,
                         TODAY)


@pytest.mark.parametrize("markup", MARKUPS)
@pytest.mark.parametrize("shape", sorted(UNDATED))
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_an_undated_card_is_its_own_listing(markup: str, shape: str, where: str) -> None:
    at = {"start": 0, "middle": 1, "end": len(DATED)}[where]
    cards = [*DATED[:at], UNDATED[shape], *DATED[at:]]
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    assert not page.truncated and not page.ambiguous and page.researcher.complete
    undated = page.works[at]
    assert undated.date is None and undated.year is None


@pytest.mark.parametrize("markup", MARKUPS)
def test_dated_and_undated_cards_mixed(markup: str) -> None:
    u = UNDATED
    cards = [u["no_meta"], DATED[0], u["tag_only_no_abstract"], u["score_code"], DATED[1],
             u["no_meta_no_abstract"], u["tag_code"], DATED[2], u["archive_tag"], u["score_tag"]]
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    assert not page.truncated and not page.ambiguous
    assert page.researcher.listed_count == len(page.works) == 10


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_page_of_undated_cards_only(markup: str) -> None:
    cards = list(UNDATED.values())
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    assert not page.truncated and not page.ambiguous


# A table's last cell "72" before a row whose score cell is empty reads, as text, exactly
# like that row's score: no rule can tell them apart (a known limit, kept visible).
TABLE_SCORE_LIMIT = pytest.mark.xfail(strict=True, reason="an abstract '72' before a score-less "
                                      "table row reads as that row's score")


@pytest.mark.parametrize(("abstract", "markup"), [
    pytest.param(abstract, markup, marks=TABLE_SCORE_LIMIT if (abstract, markup) == ("72", "table")
                 else ())
    for abstract in ("68.9AI", "DCCode", "LG", "Code", "72") for markup in MARKUPS])
def test_an_abstract_that_reads_as_an_undated_meta_line_does_not_split(
        abstract: str, markup: str) -> None:
    cards = [DATED[0], Card(DATED[1].title, DATED[1].authors, abstract, category="DC",
                            date="Dec 10, 2024"), DATED[2]]
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    # Also beside an undated card elsewhere on the page (the count leaves one place).
    cards = [*cards, UNDATED["no_meta"]]
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    assert not page.ambiguous


@pytest.mark.parametrize("markup", MARKUPS)
def test_an_abstract_that_reads_as_a_date_line_stays_text(markup: str) -> None:
    cards = [DATED[0], Card(DATED[1].title, DATED[1].authors, "Dec 10, 2024", category="DC",
                            date="Dec 10, 2024"), DATED[2]]
    page = parse(cards, markup)
    assert works(page) == expected(cards)
    [problem] = page.of_kind(ProblemKind.DATE_IN_TEXT)
    assert "reads as a date line" in str(problem)


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_met_count_never_splits_an_abstract_that_reads_as_a_card(markup: str) -> None:
    """Abstract lines that read as a title and an author list stay the abstract."""
    lookalike = Card(DATED[1].title, DATED[1].authors, "Abstract text begins here.",
                     category="DC", date="Dec 10, 2024")
    page_cards = [DATED[0], lookalike, DATED[2]]
    built = card_page(page_cards)
    # The abstract gets two more lines, "Deep Learning" / "Yann LeCun, Yoshua Bengio",
    # which read as a title and its authors.
    extra = [render.Line(text, "abstract", (), 1) for text in
             ("Deep Learning", "Yann LeCun, Yoshua Bengio")]
    at = next(i for i, line in enumerate(built.lines) if line.text == lookalike.abstract) + 1
    built.lines[at:at] = extra
    body, content_type = rendered(built, markup)
    page = parse_profile("https://papercards.example/authors/x", body, content_type, TODAY)
    assert [w.title for w in page.works] == [c.title for c in page_cards]
    abstract = page.works[1].abstract
    assert abstract is not None
    assert abstract.split("\n")[-2:] == ["Deep Learning", "Yann LeCun, Yoshua Bengio"] \
        or markup == "table"  # one cell: the table's abstract is one line
    assert not page.ambiguous


@pytest.mark.parametrize("markup", MARKUPS)
def test_more_lookalike_starts_than_places_is_counted_as_ambiguous(markup: str) -> None:
    """Two bare title + authors pairs for one missing card: a guess, and said so."""
    cards = [DATED[0], UNDATED["no_meta_no_abstract"], UNDATED["no_meta"], DATED[1]]
    page = parse(cards, markup, listed=3)
    assert page.ambiguous
    assert [w.title for w in page.works][:1] == [DATED[0].title]
    assert len(page.works) == 3
    problem = str(page.ambiguities[0])
    assert problem.startswith("ambiguous card split: ")  # the text logs and reports show
    assert "3 papers announced, 2 dated cards, 2 possible undated cards for 1 places" in problem


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_card_led_by_a_meta_line_outranks_a_bare_title_and_authors(markup: str) -> None:
    cards = [DATED[0], UNDATED["no_meta_no_abstract"], UNDATED["tag_code"], DATED[1]]
    page = parse(cards, markup, listed=3)
    titles = [w.title for w in page.works]
    assert titles == [DATED[0].title, UNDATED["tag_code"].title, DATED[1].title]
    assert not page.ambiguous


def test_structured_data_names_the_card_that_the_count_leaves_room_for() -> None:
    """JSON-LD lists the page's articles: its headline outranks a look-alike pair."""
    cards = [DATED[0], UNDATED["no_meta_no_abstract"], UNDATED["no_meta"], DATED[1]]
    built = card_page(cards, listed=3)
    # The page's structured data lists the second undated card, not the first.
    data = render.jsonld_data(built)
    data["@graph"] = [n for n in data["@graph"]
                      if n.get("headline") != UNDATED["no_meta_no_abstract"].title]
    script = json.dumps(data).replace("<", "\\u003c")
    body = render.render_lines(built, f'<script type="application/ld+json">{script}</script>')
    page = parse_profile("https://papercards.example/authors/x", body.encode(), "text/html",
                         TODAY)
    assert [w.title for w in page.works] == [DATED[0].title, UNDATED["no_meta"].title,
                                             DATED[1].title]
    assert not page.ambiguous


# Undated cards without abstracts whose title lines read, at a glance, as author lists:
# a title cut short ends in "…" as a cut list does, a venue glued after a title ends a
# sentence inside it, and "X and the Y of Z" splits into three capitalised "names".
TITLES_LIKE_NAMES = {
    "cut_short": [Card("Query Decomposition and View Maintenance for Query…", "Dan Suciu"),
                  Card("Implementation and Analysis of a Parallel Collecti…", "Dan Suciu")],
    "venue_glued": [Card("Standards", "Andrew Eisenberg"),
                    Card("Standards. In ACM SIGMOD Record", "Andrew Eisenberg")],
    "function_words": [Card("Technology and the Future of Commerce and Finance (Abstract)",
                            "David Elliot Shaw")] * 2,
}


@pytest.mark.parametrize("markup", MARKUPS)
@pytest.mark.parametrize("shape", sorted(TITLES_LIKE_NAMES))
def test_a_title_that_reads_like_names_still_starts_its_card(markup: str, shape: str) -> None:
    for cards in ([DATED[0], *TITLES_LIKE_NAMES[shape]], TITLES_LIKE_NAMES[shape]):
        page = parse(cards, markup)
        assert works(page) == expected(cards)
        assert not page.truncated


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_short_page_stays_truncated_when_no_card_start_is_found(markup: str) -> None:
    page = parse(DATED, markup, listed=5)
    assert works(page) == expected(DATED)
    assert page.truncated and not page.ambiguous and not page.researcher.complete


SCHOLAR = scholar_csv()


@pytest.mark.skipif(not SCHOLAR.exists(), reason=f"{SCHOLAR} not found: set ER_DATA_DIR to "
                    "the folder holding dblp-scholar/ (default: ../shared/data/er beside the "
                    "repository)")
def test_real_scholar_records_as_cards_come_back_or_are_reported() -> None:
    """3,000 real records (about half without a year) as card pages in two markups.

    The full table (``python -m bench.scholar_cards``) gives the figures in
    docs/extraction.md; this sample holds the same bar: nearly every title read back, and a page
    read wrong is reported (ambiguous or truncated) on all but a few pages, whose
    records are junk (an author line that reads as no list of names).
    """
    for markup in ("spans", "table"):
        counts = measure(SCHOLAR, 3000, markup)
        assert counts["undated"] > 1000
        assert counts["titles_read_back"] >= 0.99 * counts["cards"]
        assert counts["pages_wrong_unreported"] <= 0.03 * counts["pages"]
