"""Paper-card (layout B) pages built card by card, in every markup, with the items they must give.

The fixtures' renderer (``fixtures/render.py``) reads a plain-text page line by
line and needs a dated meta line to find each card; these pages are built from
``Card`` specs instead, so cards without a date, without a meta line or without an
abstract can be placed anywhere, and rendered by the same renderer as the fixtures.
The expected fields come from the specs, not from the parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from fixtures import render

TODAY = date(*render.CRAWL_DATE)
MARKUPS = ("txt", *render.MARKUPS)
HEADER_STATS = ("h-index3", "9papers", "28citations", "Novelty40%", "AI Score45")


@dataclass(frozen=True)
class Card:
    title: str
    authors: str  # as printed: "A, B et al."
    abstract: str | None = None
    score: str | None = None  # as printed: "68.9", "72"
    category: str | None = None  # "AI", "cs.LG"
    date: str | None = None  # as printed: "May 14", "Dec 10, 2024"
    code: bool = False

    @property
    def meta_pieces(self) -> tuple[str, ...]:
        return tuple(piece for piece in (self.score, self.category, self.date,
                                         "Code" if self.code else None) if piece)

    def expected(self) -> dict:
        """The work fields the parser must give for this card."""
        iso = render.iso_date(self.date) if self.date else None
        score = None if self.score is None else (
            float(self.score) if "." in self.score else int(self.score))
        truncated = self.authors.endswith(" et al.")
        return {"title": self.title, "abstract": self.abstract, "date": iso,
                "year": int(iso[:4]) if iso else None, "category": self.category,
                "score": score, "authors": self.authors.removesuffix(" et al.").split(", "),
                "authors_truncated": truncated, "code": self.code}


def card_page(cards: list[Card], name: str = "Ada Quispe", listed: int | None = None,
              stem: str = "papercards_built") -> render.Page:
    """A paper-card page: header, ``N Papers`` (``listed``, else the number of cards), cards."""
    lines = [render.Line(name, "name"), render.Line("AI", "field")]
    for stat in HEADER_STATS:
        pieces = next(filter(None, (render._match(p, stat) for p in render.B_STATS)))
        lines.append(render.Line(stat, "stat", pieces))
    lines.append(render.Line(f"{len(cards) if listed is None else listed} Papers", "listed"))
    for work, card in enumerate(cards):
        if card.meta_pieces:
            lines.append(render.Line("".join(card.meta_pieces), "meta", card.meta_pieces, work))
        lines.append(render.Line(card.title, "title", (), work))
        lines.append(render.Line(card.authors, "authors", (), work))
        if card.abstract:
            lines.append(render.Line(card.abstract, "abstract", (), work))
    return render.Page(stem, "papercards", lines)


def rendered(page: render.Page, markup: str) -> tuple[bytes, str]:
    """The page's body and content type in one markup ("txt": the plain text)."""
    if markup == "txt":
        return "\n\n".join(line.text for line in page.lines).encode(), "text/plain"
    return render.render_page(page, markup).encode(), "text/html"


# Undated cards of a few shapes, for tests beyond the parser's own.
UNDATED_SAMPLE = (
    Card("Sparse Routing for Mixture-of-Experts Inference", "Mei Tanaka, Hiroshi Sato",
         "We study sparse routing.", score="68.9", category="AI"),
    Card("Deep Learning", "Yann LeCun, Yoshua Bengio, Geoffrey Hinton"),
    Card("Attention Is All You Need Again", "Noah Kim, Emma Walker",
         "The dominant sequence transduction models are recurrent."),
)
