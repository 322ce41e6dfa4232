"""Structured data a page may carry: schema.org JSON-LD and ``citation_*`` meta tags.

Structured data is exact where visible text is ambiguous (where a name ends, which
authors a card lists), so it fills what the text leaves open. It never adds a
field that the page's layout does not have, and never overrides printed text
except the person's name, which the markup states without page chrome around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from crawler.extract.lines import PageText
from scholarindex.core.identity import title_key

PERSON_TYPES = {"Person", "ProfilePage"}
ARTICLE_TYPES = {"ScholarlyArticle", "Article", "CreativeWork", "Report", "Thesis", "Book"}


@dataclass
class StructuredArticle:
    title: str
    authors: list[str]
    date: str | None  # ISO date or year


def _types(node: dict) -> set[str]:
    kind = node.get("@type")
    return set(kind) if isinstance(kind, list) else {str(kind)}


def _text(value: object) -> str | None:
    if isinstance(value, dict):
        value = value.get("name")
    if isinstance(value, list):
        value = value[0] if value else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def person(page: PageText) -> dict:
    """Name and affiliation of the profile's person, from JSON-LD."""
    for node in page.jsonld:
        if "ProfilePage" in _types(node) and isinstance(node.get("mainEntity"), dict):
            node = node["mainEntity"]
        if _types(node) & {"Person"}:
            return {"name": _text(node.get("name")),
                    "affiliation": _text(node.get("affiliation") or node.get("worksFor"))}
    return {}


def articles(page: PageText) -> dict[str, StructuredArticle]:
    """Articles described by JSON-LD or citation_* tags, keyed by title key."""
    found: dict[str, StructuredArticle] = {}
    for node in _article_nodes(page.jsonld):
        title = _text(node.get("headline") or node.get("name"))
        if not title:
            continue
        raw_authors = node.get("author") or []
        raw_authors = raw_authors if isinstance(raw_authors, list) else [raw_authors]
        authors = [name for name in map(_text, raw_authors) if name]
        day = _text(node.get("datePublished"))
        found[title_key(title)] = StructuredArticle(title, authors, day)
    titles = page.meta.get("citation_title", [])
    if len(titles) == 1:
        dates = page.meta.get("citation_publication_date") or page.meta.get("citation_date")
        found[title_key(titles[0])] = StructuredArticle(
            titles[0], page.meta.get("citation_author", []),
            dates[0].replace("/", "-") if dates else None,
        )
    return found


def _article_nodes(nodes: list[dict]) -> list[dict]:
    out: list[dict] = []
    for node in nodes:
        if _types(node) & ARTICLE_TYPES:
            out.append(node)
        for key in ("mainEntity", "hasPart", "workExample", "itemListElement"):
            children = node.get(key)
            children = children if isinstance(children, list) else [children]
            for child in children:
                if isinstance(child, dict):
                    child = child.get("item", child)
                    out.extend(_article_nodes([child]))
    return out
