"""OpenSearch responses to the objects the templates render and the API returns.

Everything here is a pure function of a response. Text stays text (the templates
escape it); the only HTML is the highlight markup built by ``scholarindex.webui.highlight``.
External links are kept only when they are http(s): a crawled ``javascript:``
URL never becomes an ``href``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import Markup
from typing_extensions import TypedDict  # pydantic reads only this one on Python 3.11

from scholarindex.core.arxiv_categories import category_label
from scholarindex.search.facets import FACETS, Facet
from scholarindex.search.matching import read_as_printed
from scholarindex.search.params import SearchRequest
from scholarindex.search.query import SELECTED_SUFFIX, text_matches
from scholarindex.webui.highlight import SNIPPET_CHARS, join_fragments, mark, plain


def safe_url(url: Any) -> str | None:
    """``url`` if it is an absolute http(s) URL, else None (never a script or data URL)."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url.strip()


# The API's hit, stated once: ``Hit.to_json`` builds it (mypy checks every key and type)
# and ``/api/search``'s schema and answer are read from it (webui.api). Keys are in the
# order /api/search answers them; /api/researchers returns ``to_json``'s dicts as built.


class ProfileJSON(TypedDict):
    """A profile a hit was listed on."""

    id: str
    name: str
    url: str | None
    source: str | None


class LinksJSON(TypedDict):
    """A hit's external links (http(s) only)."""

    arxiv: str | None
    pdf: str | None
    doi: str | None


class HighlightJSON(TypedDict):
    """Escaped text with <mark> around matches: safe to insert as HTML."""

    title: str
    abstract: str


class HitJSON(TypedDict):
    """One hit: the fields docs/interfaces.md names, display fields, highlight HTML."""

    id: str
    title: str
    year: int | None
    authors: list[str]
    profiles: list[ProfileJSON]
    arxiv_id: str | None
    date: str | None
    abstract: str | None
    venues: list[str]
    types: list[str]
    categories: list[str]
    category_labels: dict[str, str]
    sources: list[str]
    has_code: bool
    links: LinksJSON
    highlight: HighlightJSON


@dataclass(frozen=True)
class Profile:
    """A researcher profile a work was listed on."""

    id: str
    name: str
    url: str | None  # the crawled profile page, when it is an http(s) URL
    source: str | None

    def to_json(self) -> ProfileJSON:
        """As the API shows it."""
        return {"id": self.id, "name": self.name, "url": self.url, "source": self.source}


@dataclass(frozen=True)
class Hit:
    """One work as a result line."""

    id: str
    title: str
    title_html: Markup
    abstract: str | None
    snippet_html: Markup  # highlighted fragments, or the abstract's start
    year: int | None
    date: str | None
    venues: list[str]
    types: list[str]
    categories: list[str]
    sources: list[str]
    has_code: bool
    authors: list[str]
    profiles: list[Profile]
    arxiv_id: str | None
    arxiv_url: str | None
    pdf_url: str | None
    doi_url: str | None

    @property
    def category_labels(self) -> dict[str, str]:
        """Each category as it reads on a page ("Machine Learning (cs.LG)"; a tag as printed)."""
        return {code: category_label(code) for code in self.categories}

    @property
    def abstract_is_long(self) -> bool:
        """True when the snippet cannot show the whole abstract (the page offers it folded)."""
        return len(self.abstract or "") > SNIPPET_CHARS

    def to_json(self) -> HitJSON:
        """The API's hit (``HitJSON``)."""
        return {
            "id": self.id, "title": self.title, "year": self.year, "date": self.date,
            "authors": self.authors, "profiles": [p.to_json() for p in self.profiles],
            "arxiv_id": self.arxiv_id, "abstract": self.abstract, "venues": self.venues,
            "types": self.types, "categories": self.categories,
            "category_labels": self.category_labels, "sources": self.sources,
            "has_code": self.has_code,
            "links": {"arxiv": self.arxiv_url, "pdf": self.pdf_url,
                      "doi": self.doi_url},
            # Escaped text with <mark> around matches: safe to insert as HTML.
            "highlight": {"title": str(self.title_html), "abstract": str(self.snippet_html)},
        }


@dataclass(frozen=True)
class FacetValue:
    """One value of a facet with its count (over the query and every other facet's filters)."""

    value: Any
    count: int
    label: str
    selected: bool

    def to_json(self) -> dict[str, Any]:
        """``{"value", "count"}`` (docs/interfaces.md), plus a display label and the state."""
        return {"value": self.value, "count": self.count, "label": self.label,
                "selected": self.selected}


@dataclass(frozen=True)
class FacetResult:
    """One facet's values; ``total_without`` is the total if this facet's filter went away."""

    facet: Facet
    values: list[FacetValue]
    total_without: int


@dataclass(frozen=True)
class SearchResult:
    """What one search found."""

    request: SearchRequest
    total: int
    hits: list[Hit]
    facets: list[FacetResult]
    took_ms: int | None = None
    match: str = "all"  # the match level that answered (scholarindex.search.matching.LEVELS)

    @property
    def read_as(self) -> str:
        """The query as it was searched: entities and LaTeX read as they print."""
        return read_as_printed(self.request.q)

    @property
    def loosened(self) -> bool:
        """True when no work had every word and a looser level answered."""
        return self.match != "all" and bool(self.request.q)

    @property
    def pages(self) -> int:
        """Pages that can be shown (the depth cap included)."""
        return min(math.ceil(self.total / self.request.size), self.request.last_page)

    @property
    def capped(self) -> bool:
        """True when there are more hits than pages can reach."""
        return self.total > self.pages * self.request.size

    def facet(self, name: str) -> FacetResult:
        """The result of the facet called ``name``."""
        return next(f for f in self.facets if f.facet.name == name)

    def to_json(self) -> dict[str, Any]:
        """The ``/api/search`` body: total, hits, facets (docs/interfaces.md), and the request."""
        request = self.request
        return {
            "total": self.total,
            "hits": [hit.to_json() for hit in self.hits],
            "facets": {f.facet.name: [v.to_json() for v in f.values] for f in self.facets},
            "q": request.q, "sort": request.sort, "page": request.page,
            "size": request.size, "pages": self.pages,
            # Which level answered: "all" (every word), "most", or "fuzzy" (webui.matching).
            "match": self.match, "query_read_as": self.read_as,
        }


@dataclass(frozen=True)
class Coauthor:
    """Another profile that lists works with this researcher."""

    id: str
    name: str
    shared: int  # works both profiles list
    works: list[tuple[str, str]] = field(default_factory=list)  # (id, title) of shared works

    def to_json(self) -> dict[str, Any]:
        """As the API shows it."""
        return {"id": self.id, "name": self.name, "shared": self.shared,
                "works": [{"id": i, "title": t} for i, t in self.works]}


@dataclass(frozen=True)
class AlsoOn:
    """The same person's profile on another site (the evidence rule: ``webui.cross_site``)."""

    id: str
    name: str
    url: str | None  # the crawled profile page, when it is an http(s) URL
    source: str
    shared_works: int  # works both profiles list

    def to_json(self) -> dict[str, Any]:
        """As the API shows it."""
        return {"id": self.id, "name": self.name, "url": self.url, "source": self.source,
                "shared_works": self.shared_works}


# Researcher fields shown on the page, in order, with their labels.
RESEARCHER_FIELDS = (
    ("bio", "Bio"), ("role", "Role"), ("affiliation", "Affiliation"), ("field", "Field"),
    ("source", "Source site"), ("trust_score", "Trust score"), ("trust_label", "Trust"),
    ("verification_level", "Verification level"), ("claimed", "Claimed"),
    ("open_to_collaborate", "Open to collaborate"), ("works_count", "Works (as listed)"),
    ("followers", "Followers"), ("topics_count", "Topics"),
    ("collaborators_count", "Close collaborators"), ("h_index", "h-index"),
    ("papers_count", "Papers (as listed)"), ("citations", "Citations"),
    ("novelty_pct", "Novelty %"), ("ai_score", "AI score"), ("last_seen", "Last crawled"),
)


@dataclass(frozen=True)
class ResearcherPage:
    """A researcher profile, their works and the profiles they share works with."""

    id: str
    name: str
    url: str | None
    fields: list[tuple[str, str, Any]]  # (key, label, value), non-empty ones only
    works: list[Hit]
    works_total: int
    coauthors: list[Coauthor]
    also_on: list[AlsoOn] = field(default_factory=list)  # the same person on other sites

    def to_json(self) -> dict[str, Any]:
        """The ``/api/researchers/{id}`` body."""
        return {
            "id": self.id, "name": self.name, "url": self.url,
            "fields": {key: value for key, _, value in self.fields},
            "works_total": self.works_total,
            "works": [hit.to_json() for hit in self.works],
            "coauthors": [c.to_json() for c in self.coauthors],
            "also_on": [a.to_json() for a in self.also_on],
        }


@dataclass(frozen=True)
class Suggestion:
    """One autocomplete entry."""

    kind: str  # "work" or "researcher"
    id: str
    text: str


# --- parsing ---------------------------------------------------------------------------

def parse_hit(raw: Mapping[str, Any]) -> Hit:
    """One hit of a works search (with or without highlight)."""
    src = raw.get("_source") or {}
    highlight = raw.get("highlight") or {}
    title = plain(src.get("title")) or "(untitled)"
    abstract = src.get("abstract")
    arxiv = src.get("arxiv") or {}
    arxiv_id = src.get("arxiv_id")
    title_html = mark(highlight["title"][0]) if highlight.get("title") else mark(title)
    if highlight.get("abstract"):
        snippet = join_fragments(highlight["abstract"], abstract)
    else:
        snippet = mark(plain(abstract, SNIPPET_CHARS))
    arxiv_url = f"https://arxiv.org/abs/{quote(arxiv_id)}" if arxiv_id else None
    doi = arxiv.get("doi")
    pdf_url = safe_url(arxiv.get("pdf_url")) or (
        f"https://arxiv.org/pdf/{quote(arxiv_id)}" if arxiv_id else None)
    return Hit(
        id=str(raw.get("_id") or src.get("work_id")),
        title=title, title_html=title_html, abstract=abstract, snippet_html=snippet,
        year=src.get("year"), date=src.get("date"),
        venues=_strings(src.get("venues")), types=_strings(src.get("types")),
        categories=_strings(src.get("categories")), sources=_strings(src.get("sources")),
        has_code=src.get("has_code") is True, authors=_strings(src.get("authors")),
        profiles=[_profile(p) for p in src.get("profiles") or () if isinstance(p, Mapping)
                  and p.get("id")],
        arxiv_id=arxiv_id, arxiv_url=arxiv_url, pdf_url=pdf_url,
        doi_url=f"https://doi.org/{quote(doi, safe='/')}" if isinstance(doi, str) and doi else None,
    )


def parse_search(response: Mapping[str, Any], request: SearchRequest,
                 match: str = "all") -> SearchResult:
    """A ``search_body`` response, asked at match level ``match``."""
    hits = response.get("hits") or {}
    total = hits.get("total") or {}
    aggs = response.get("aggregations") or {}
    return SearchResult(
        request=request,
        total=int(total.get("value", 0) if isinstance(total, Mapping) else total),
        hits=[parse_hit(h) for h in hits.get("hits") or ()],
        facets=[_facet(facet, _facet_agg(aggs, facet), request, text_matches(response))
                for facet in FACETS],
        took_ms=response.get("took"), match=match,
    )


def parse_researcher(doc: Mapping[str, Any], works: Mapping[str, Any],
                     also_on: Iterable[AlsoOn] = ()) -> ResearcherPage:
    """A researcher document (``_source``), its ``researcher_works_body`` response and
    the same person's profiles on other sites."""
    researcher_id = str(doc.get("id"))
    hits = [parse_hit(h) for h in (works.get("hits") or {}).get("hits") or ()]
    total = ((works.get("hits") or {}).get("total") or {}).get("value", len(hits))
    buckets = ((works.get("aggregations") or {}).get("coauthors") or {}).get("buckets") or ()
    shared: dict[str, list[tuple[str, str]]] = {}
    for hit in hits:
        for profile in hit.profiles:
            if profile.id != researcher_id:
                shared.setdefault(profile.id, []).append((hit.id, hit.title))
    coauthors = [
        Coauthor(id=b["key"], name=_profile_name(b) or b["key"], shared=b["doc_count"],
                 works=shared.get(b["key"], []))
        for b in buckets
    ]
    coauthors.sort(key=lambda c: (-c.shared, c.name.casefold(), c.id))
    fields = [(key, label, doc[key]) for key, label in RESEARCHER_FIELDS
              if doc.get(key) not in (None, "")]
    return ResearcherPage(id=researcher_id, name=str(doc.get("name") or researcher_id),
                          url=safe_url(doc.get("url")), fields=fields, works=hits,
                          works_total=int(total), coauthors=coauthors,
                          also_on=list(also_on))


def parse_suggestions(responses: Iterable[Mapping[str, Any]], limit: int) -> list[Suggestion]:
    """An autocomplete ``msearch`` response: researchers first (short, precise), then titles."""
    found: dict[str, list[Suggestion]] = {"work": [], "researcher": []}
    for response in responses:
        for hit in (response.get("hits") or {}).get("hits") or ():
            src = hit.get("_source") or {}
            if "name" in src:
                found["researcher"].append(Suggestion("researcher", hit["_id"], plain(src["name"])))
            elif "title" in src:
                found["work"].append(Suggestion("work", hit["_id"], plain(src["title"])))
    return (found["researcher"] + found["work"])[:limit]


def _facet_agg(aggs: Mapping[str, Any], facet: Facet) -> Mapping[str, Any]:
    """A facet's aggregation as ``_facet`` reads it: a top-level terms aggregation
    (``search.query.facet_aggs``: no other facet's filter) is put in the filter's shape."""
    agg = aggs.get(facet.name) or {}
    if "buckets" not in agg:
        return agg
    return {"values": agg, "selected": aggs.get(facet.name + SELECTED_SUFFIX) or {}}


def _facet(facet: Facet, agg: Mapping[str, Any], request: SearchRequest,
           text_total: int) -> FacetResult:
    chosen = request.filters.get(facet.name, ())
    buckets = list((agg.get("values") or {}).get("buckets") or ())
    buckets += (agg.get("selected") or {}).get("buckets") or ()
    counts: dict[Any, int] = {}
    labels: dict[Any, str] = {}
    for bucket in buckets:
        value = _bucket_value(facet, bucket)
        counts[value] = bucket["doc_count"]
        name = _profile_name(bucket) if facet.name == "researcher" else None
        labels[value] = name or facet.value_label(value)
    for value in chosen:  # a selected value always shows, even with nothing left to count
        counts.setdefault(value, 0)
        labels.setdefault(value, facet.value_label(value))
    if facet.by_key_desc:
        order = sorted(counts, key=lambda v: v, reverse=True)
    else:
        order = sorted(counts, key=lambda v: (-counts[v], labels[v].casefold(), str(v)))
    values = [FacetValue(v, counts[v], labels[v], v in chosen) for v in order]
    # Without a filter aggregation, nothing but the text narrows this facet's works.
    return FacetResult(facet, values, int(agg.get("doc_count", text_total)))


def _bucket_value(facet: Facet, bucket: Mapping[str, Any]) -> Any:
    if facet.name == "has_code":
        # Booleans aggregate as 1/0 with key_as_string "true"/"false".
        return str(bucket.get("key_as_string", bucket["key"])).lower() in ("true", "1")
    return bucket["key"]


def _profile_name(bucket: Mapping[str, Any]) -> str | None:
    """The name of the profile a researcher bucket counts, read from its top hit."""
    for hit in ((bucket.get("profile") or {}).get("hits") or {}).get("hits") or ():
        for profile in (hit.get("_source") or {}).get("profiles") or ():
            if isinstance(profile, Mapping) and profile.get("id") == bucket["key"]:
                return plain(profile.get("name")) or None
    return None


def _profile(raw: Mapping[str, Any]) -> Profile:
    return Profile(id=str(raw["id"]), name=plain(raw.get("name")) or str(raw["id"]),
                   url=safe_url(raw.get("url")), source=raw.get("source"))


def _strings(values: Any) -> list[str]:
    if not isinstance(values, list):
        return []
    return [plain(v) for v in values if isinstance(v, str)]
