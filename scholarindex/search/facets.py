"""The facets of the search page, in display order.

A facet's ``name`` is its URL parameter and its key in the API's ``facets`` object
(docs/interfaces.md: facet filters are named after the facets); ``field`` is the keyword
field of ``index_mappings/works.json`` it filters and counts on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scholarindex.core.arxiv_categories import category_label
from scholarindex.core.flags import as_bool

MAX_VALUE_CHARS = 512  # the mappings' ignore_above: longer values are never indexed


def _text(value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError("empty value")
    if len(text) > MAX_VALUE_CHARS:
        raise ValueError(f"longer than {MAX_VALUE_CHARS} characters")
    return text


def _year(value: str) -> int:
    text = value.strip()
    if not text.isdigit() or not 1000 <= int(text) <= 9999:
        raise ValueError("not a four-digit year")
    return int(text)


def _flag(value: str) -> bool:
    text = value.strip()
    if not text:
        raise ValueError("empty value")
    return as_bool(text, False)  # "true"/"false"/"1"/"0"/...; anything else is a ValueError


@dataclass(frozen=True)
class Facet:
    """One facet: where it filters and counts, how to read and show its values."""

    name: str
    field: str
    label: str
    size: int  # values shown (selected values are always shown too)
    parse: Callable[[str], Any] = _text
    by_key_desc: bool = False  # years read best newest first; the rest by count

    def format(self, value: Any) -> str:
        """A typed value as it goes into a URL (``true``, ``2024``, ``CV``)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def value_label(self, value: Any) -> str:
        """How a value reads on the page when no better label is known."""
        if self.name == "has_code":
            return "Has code" if value else "No code listed"
        if self.name == "category":  # arXiv's codes read with their names; tags as printed
            return category_label(str(value))
        return str(value)


FACETS: tuple[Facet, ...] = (
    Facet("year", "year", "Year", 30, _year, by_key_desc=True),
    Facet("category", "categories", "Category", 30),
    Facet("author", "authors", "Author", 20),
    Facet("researcher", "profiles.id", "Researcher profile", 20),
    Facet("venue", "venues", "Venue", 20),
    Facet("type", "types", "Type", 10),
    Facet("source", "sources", "Source site", 10),
    Facet("has_code", "has_code", "Code", 2, _flag),
)
FACET_BY_NAME: dict[str, Facet] = {facet.name: facet for facet in FACETS}
