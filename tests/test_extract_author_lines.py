"""Paper cards keep their author lines however the line is printed.

The rule for an author line is in ``crawler/extract/values.py`` (``read_authors``);
rule 8 of ``crawler/extract/layouts/papercards.py`` gives a one-word title back to its card.
Pages are built card by card (``fixtures/cards.py``) and rendered in every markup.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from crawler.extract import parse_profile
from fixtures.cards import MARKUPS, TODAY, Card, card_page, rendered

DATED = Card("EDiT: A Local-SGD-Based Efficient Distributed Training Method",
             "Jialiang Cheng, Ning Gao", "Distributed training methods are crucial.",
             category="DC", date="Dec 10, 2024")


def parse(cards: list[Card], markup: str, listed: int | None = None):
    body, content_type = rendered(card_page(cards, listed=listed), markup)
    return parse_profile("https://papercards.example/authors/ada-quispe", body, content_type,
                         TODAY)


@pytest.mark.parametrize("markup", MARKUPS)
def test_entities_printed_in_an_author_line_are_read_as_their_characters(markup: str) -> None:
    """A page that escaped its data twice shows ``Lud&#228;scher``: one name, not two."""
    cards = [Card("Data Integration Systems", "Chaitan Baru, Bertram Lud&#228;scher",
                  date="Jan 1, 1999"),
             Card("Query Processing", "Jos&eacute; A. Blakeley", "An abstract.",
                  date="Jan 1, 2001"),
             Card("Objects in Databases", "M. Tamer &#214;zsu, Adriana Mu&#241;oz et al.")]
    page = parse(cards, markup)
    assert [(w.title, w.authors, w.authors_truncated) for w in page.works] == [
        ("Data Integration Systems", ["Chaitan Baru", "Bertram Ludäscher"], False),
        ("Query Processing", ["José A. Blakeley"], False),
        ("Objects in Databases", ["M. Tamer Özsu", "Adriana Muñoz"], True),
    ]
    assert page.works[1].abstract == "An abstract."
    assert not page.truncated and not page.ambiguous


# A bibliography that lower-cases everything, titles too; no dates: every card is found by
# its title + author line alone.
LOWER_CASE = [
    Card("gambling in a rigged casino: the adversarial multi-armed bandit problem,",
         "p. auer, n. cesa-bianchi, y. freund, and r. e. schapire,"),
    Card("cryptographic primitives based on hard learning problems.",
         "a. blum, m. furst, m. j. kearns, and richard j. lipton."),
    Card("weakly learning dnf and characterizing statistical query learning.",
         "blum, a., furst, m., jackson, j., kearns, m., mansour, y., & rudich, s."),
    Card("the computational complexity of machine learning.", "m. kearns."),
    Card("toward efficient agnostic learning.", "kearns, m.j. and l.g. valiant."),
]
LOWER_CASE_AUTHORS = [
    ["p. auer", "n. cesa-bianchi", "y. freund", "r. e. schapire"],
    ["a. blum", "m. furst", "m. j. kearns", "richard j. lipton"],
    ["blum, a.", "furst, m.", "jackson, j.", "kearns, m.", "mansour, y.", "rudich, s."],
    ["m. kearns"],
    ["kearns, m.j.", "l.g. valiant"],
]


@pytest.mark.parametrize("markup", MARKUPS)
def test_lower_case_author_lines_find_their_undated_cards(markup: str) -> None:
    page = parse(LOWER_CASE, markup)
    assert [w.title for w in page.works] == [c.title for c in LOWER_CASE]
    assert [w.authors for w in page.works] == LOWER_CASE_AUTHORS
    assert all(w.date is None and w.abstract is None for w in page.works)
    assert not page.truncated and not page.ambiguous


@pytest.mark.parametrize("markup", MARKUPS)
def test_lower_case_cards_beside_dated_ones(markup: str) -> None:
    cards = [LOWER_CASE[0], DATED, *LOWER_CASE[1:3]]
    page = parse(cards, markup)
    assert [w.title for w in page.works] == [c.title for c in cards]
    assert [w.authors for w in page.works] == [LOWER_CASE_AUTHORS[0], ["Jialiang Cheng",
                                               "Ning Gao"], *LOWER_CASE_AUTHORS[1:3]]
    assert not page.truncated and not page.ambiguous


@pytest.mark.parametrize("markup", MARKUPS)
def test_and_or_ampersand_and_a_closing_period(markup: str) -> None:
    cards = [Card("Boosting the Margin", "Yoav Freund and Robert E. Schapire.",
                  date="Jan 1, 1998"),
             Card("Bagging Predictors", "Ana Silva & Bo Li", "We bag.", date="Jan 1, 1996"),
             Card("Similarity Search", "Christos Faloutsos, Caetano Traina, Jr.",
                  date="Jan 1, 2000")]
    page = parse(cards, markup)
    assert [w.authors for w in page.works] == [["Yoav Freund", "Robert E. Schapire"],
                                               ["Ana Silva", "Bo Li"],
                                               ["Christos Faloutsos", "Caetano Traina, Jr."]]
    assert page.works[1].abstract == "We bag."


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_one_word_title_without_authors_is_not_the_next_cards_tag(markup: str) -> None:
    """``Jan 1, 2003`` / ``Reports`` / ``Jan 1, 2003``: "Reports" is a title (rule 8)."""
    cards = [Card("Book reviews", "", date="Jan 1, 2003"),
             Card("Reports", "", date="Jan 1, 2003"),
             Card("Special topic section on peer to peer data management", "",
                  date="Jan 1, 2003"),
             Card("Standards", "", date="Jan 1, 2002"),
             Card("Articles", "Avigdor Gal", date="Jan 1, 2002")]
    page = parse(cards, markup)
    assert [(w.title, w.category, w.date) for w in page.works] == [
        (c.title, None, "2003-01-01" if "2003" in (c.date or "") else "2002-01-01") for c in cards]
    assert [w.authors for w in page.works] == [[], [], [], [], ["Avigdor Gal"]]
    assert not page.truncated and not page.ambiguous and not page.problems


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_tag_on_its_own_line_still_leads_its_card(markup: str) -> None:
    """Rule 8 leaves a tag written as tags are (``LG``) to the card it leads."""
    cards = [Card("Reports", "", date="Jan 1, 2003"),
             Card("Sparse Routing", "Mei Tanaka", category="LG", date="May 22, 2021")]
    page = parse(cards, markup)
    assert [(w.title, w.category) for w in page.works] == [("Reports", None),
                                                           ("Sparse Routing", "LG")]


# A page whose author lines read like titles, and name the page's own person (rule 9).
OWNER_NAMED = [
    Card("data filtering and distribution modeling algorithms for machine learning.",
         "yoav freund.", date="Jan 1, 1993"),
    Card("an improved boosting algorithm and its implications on learning complexity.",
         "yoav freund."),
    Card("boosting a weak learning algorithm by majority.", "yoav freund.",
         date="Jan 1, 1990"),
]


@pytest.mark.parametrize("markup", MARKUPS)
@pytest.mark.parametrize("owner", ["yoav freund.", "ieeexplore.ieee.org"])
def test_a_line_naming_the_pages_owner_finds_its_undated_card(markup: str, owner: str) -> None:
    cards = [replace(card, authors=owner) for card in OWNER_NAMED]
    body, content_type = rendered(card_page(cards, name=owner), markup)
    page = parse_profile("https://papercards.example/authors/owner", body, content_type, TODAY)
    assert [(w.title, w.year) for w in page.works] == [(c.title, int(c.date[-4:]) if c.date
                                                       else None) for c in cards]
    assert [w.authors for w in page.works] == [[owner.rstrip(".")]] * 3
    assert all(w.abstract is None for w in page.works)
    assert not page.truncated and not page.ambiguous


@pytest.mark.parametrize("markup", MARKUPS)
def test_on_another_persons_page_such_a_line_is_text(markup: str) -> None:
    """The same cards on a page of someone else: the undated card is not found, and the page
    says it fell short (a lone lower-case name reads like a title: ``read_authors``)."""
    body, content_type = rendered(card_page(OWNER_NAMED, name="Ada Quispe"), markup)
    page = parse_profile("https://papercards.example/authors/ada", body, content_type, TODAY)
    assert len(page.works) == 2 and page.truncated


@pytest.mark.parametrize("markup", MARKUPS)
def test_a_date_with_an_odd_year_still_leads_its_card(markup: str) -> None:
    """An index's data prints a year as 1806: the line is still the card's date, not a title
    (which would take the real title for its authors and lose the card, the count met)."""
    cards = [Card("Formalization and Verification of Event-driven Process Chains",
                  "WMP van der Aalst"),
             Card("Business Process Management: Models, Techniques, and Empirical Studies",
                  "WMP van der Aalst, J Desel, A Oberweis", date="Jan 1, 1806"),
             Card("The P2P Approach to Interorganizational Workflows",
                  "WMP van der Aalst, M Weske", date="Jan 1, 2001")]
    page = parse(cards, markup)
    assert [(w.title, w.year, w.authors) for w in page.works] == [
        (cards[0].title, None, ["WMP van der Aalst"]),
        (cards[1].title, 1806, ["WMP van der Aalst", "J Desel", "A Oberweis"]),
        (cards[2].title, 2001, ["WMP van der Aalst", "M Weske"])]
    assert not page.truncated and not page.ambiguous
