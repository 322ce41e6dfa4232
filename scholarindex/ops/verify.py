"""Is the new index as good as the live one? Counts, facet counts, sample queries.

``snapshot`` measures one index: the document count, every facet's top values
with their counts (plus the count of the rest), and for a few sample queries
the number of matches, the first ids in a fixed order (year, then id) and the
top ids by relevance. ``compare`` says where two snapshots differ.

Facets and queries are the search page's own (``webui.facets``, ``scholarindex.search.query``),
so "the same" means the same for the people searching. Sample queries are made
from the live data: titles, a title's first words, an author's name, and browsing
without text.

Relevance scores are not compared as numbers, and the relevance top ids are
compared as sets with a little slack: term statistics differ between an index
and its fresh copy (a live index still counts the old versions of updated
documents, and a copy written in slices merges its segments differently), which moves
near-ties. What
must match exactly is which documents a query finds. The ranked queries score with the
whole index's term statistics (``dfs_query_then_fetch``): with several shards each
shard otherwise scores with its own, and a tie between works on two shards (an author's
works, every one matching the name alike) breaks one way on the live index and the
other way on its copy, whose shards hold other deleted versions.

While a crawl writes, the live index moves under the check. Both snapshots are
taken with ``exclude``: the ids changed since they were copied (the change feed),
so the comparison is over documents that are settled in both indices; the
excluded ones are copied again right after.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.search.facets import FACETS
from scholarindex.search.query import SORT_CLAUSES, text_query

# Per index: the keyword-like fields people filter on, counted value by value.
FACET_FIELDS: Mapping[str, tuple[str, ...]] = {
    "works": tuple(facet.field for facet in FACETS),
    "researchers": ("source", "field", "trust_label", "verification_level", "claimed",
                    "open_to_collaborate"),
}
ID_FIELD = {"works": "work_id", "researchers": "id"}
FACET_VALUES = 100  # top values compared per facet; the rest compared as one sum
TOP_HITS = 10  # ids compared per sample query
_SLACK = 5  # relevance: a top id may sit this many places lower in the other index
SAMPLE_DOCS = 4
_TIMEOUT = 600.0


@dataclass(frozen=True)
class SampleQuery:
    """One sample search: a label for messages and the query clause."""

    label: str
    query: dict[str, Any]


@dataclass
class Snapshot:
    """What ``snapshot`` measured on one index."""

    index: str
    count: int
    facets: dict[str, tuple[list[tuple[Any, int]], int]] = field(default_factory=dict)
    # label -> (matches, first ids in the fixed order, top ids by relevance)
    queries: dict[str, tuple[int, list[str], list[str]]] = field(default_factory=dict)


@dataclass
class Differences:
    """Where two snapshots differ; empty lists mean the same."""

    count: str | None = None
    facets: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def blocking(self, accept_differences: bool) -> list[str]:
        """The differences that stop a switch: counts always, the rest unless accepted."""
        found = [self.count] if self.count else []
        if not accept_differences:
            found += self.facets + self.queries
        return found

    def all(self) -> list[str]:
        """Every difference, one line each."""
        return ([self.count] if self.count else []) + self.facets + self.queries


def exclusion(exclude: Iterable[str]) -> dict[str, Any]:
    """A filter leaving out the given ids (everything when there are none)."""
    ids = sorted(exclude)
    if not ids:
        return {"match_all": {}}
    return {"bool": {"must_not": [{"ids": {"values": ids}}]}}


def sample_queries(client: OpenSearch, index: str, name: str,
                   exclude: Iterable[str] = ()) -> list[SampleQuery]:
    """Queries built from a few documents of ``index`` (the same ones on every run)."""
    id_field = ID_FIELD[name]
    body = {"size": SAMPLE_DOCS, "query": exclusion(exclude), "sort": [{id_field: "asc"}],
            "_source": ["title", "authors", "name"]}
    with translate_errors(f"sample {index}"):
        hits = client.search(index=index, body=body)["hits"]["hits"]
    queries = [SampleQuery("(browse everything)", {"match_all": {}})]
    for hit in hits:
        source = hit.get("_source") or {}
        text = source.get("title") or source.get("name")
        if not isinstance(text, str) or not text.strip():
            continue
        words = text.split()
        queries.append(SampleQuery(text, _text_query(name, text)))
        if len(words) > 2:
            queries.append(SampleQuery(" ".join(words[:2]), _text_query(name, " ".join(words[:2]))))
        authors = source.get("authors") or []
        if authors and isinstance(authors[0], str):
            queries.append(SampleQuery(authors[0], _text_query(name, authors[0])))
    return queries


def _text_query(name: str, text: str) -> dict[str, Any]:
    if name == "works":
        return text_query(text)
    return {"match": {"name": {"query": text}}}


def _relevance(name: str) -> list[Any]:
    if name == "works":
        return list(SORT_CLAUSES["relevance"])
    return ["_score", {"id": "asc"}]


def _fixed_order(name: str) -> list[Any]:
    if name == "works":
        return [{"year": {"order": "desc", "missing": "_last"}}, {"work_id": "asc"}]
    return [{"id": "asc"}]


def snapshot(client: OpenSearch, index: str, name: str, queries: Iterable[SampleQuery],
             exclude: Iterable[str] = ()) -> Snapshot:
    """Count, facet counts and sample-query top hits of ``index``, without ``exclude``."""
    keep = exclusion(exclude)
    with translate_errors(f"count {index}"):
        count = int(client.count(index=index, body={"query": keep},
                                 request_timeout=_TIMEOUT)["count"])
    aggs = {f"f{i}": {"terms": {"field": name_, "size": FACET_VALUES}}
            for i, name_ in enumerate(FACET_FIELDS[name])}
    with translate_errors(f"facet counts {index}"):
        answer = client.search(index=index, body={"size": 0, "query": keep, "aggs": aggs},
                               request_timeout=_TIMEOUT)
    facets = {}
    for i, facet_field in enumerate(FACET_FIELDS[name]):
        agg = answer["aggregations"][f"f{i}"]
        buckets = [(b.get("key_as_string", b["key"]), int(b["doc_count"])) for b in agg["buckets"]]
        facets[facet_field] = (buckets, int(agg.get("sum_other_doc_count", 0)))
    shot = Snapshot(index, count, facets)
    for sample in queries:
        found = {"bool": {"filter": [sample.query, keep]}}
        scored = {"bool": {"must": [sample.query], "filter": [keep]}}
        with translate_errors(f"sample query {index}"):
            first = client.search(index=index, request_timeout=_TIMEOUT, body={
                "size": TOP_HITS, "_source": False, "track_total_hits": True,
                "query": found, "sort": _fixed_order(name)})["hits"]
            ranked = client.search(index=index, request_timeout=_TIMEOUT,
                                   search_type="dfs_query_then_fetch", body={
                "size": TOP_HITS + _SLACK, "_source": False, "query": scored,
                "sort": _relevance(name)})["hits"]["hits"]
        shot.queries[sample.label] = (int(first["total"]["value"]),
                                      [h["_id"] for h in first["hits"]],
                                      [h["_id"] for h in ranked])
    return shot


def compare(old: Snapshot, new: Snapshot) -> Differences:
    """Where ``new`` differs from ``old``."""
    found = Differences()
    if old.count != new.count:
        found.count = f"document count: {old.index} has {old.count}, {new.index} has {new.count}"
    for facet_field, (old_buckets, old_rest) in old.facets.items():
        new_buckets, new_rest = new.facets.get(facet_field, ([], 0))
        if old_buckets != new_buckets or old_rest != new_rest:
            found.facets.append(f"facet {facet_field}: {_bucket_diff(old_buckets, new_buckets)}")
    for label, (old_total, old_first, old_ranked) in old.queries.items():
        new_total, new_first, new_ranked = new.queries.get(label, (0, [], []))
        if (old_total, old_first) != (new_total, new_first):
            found.queries.append(
                f"query {label[:60]!r} finds {old_total} on {old.index} {_ids(old_first)}, "
                f"{new_total} on {new.index} {_ids(new_first)}")
        elif not (_within(old_ranked, new_ranked) and _within(new_ranked, old_ranked)):
            found.queries.append(
                f"query {label[:60]!r} ranks {_ids(old_ranked)} first on {old.index}, "
                f"{_ids(new_ranked)} on {new.index}")
    return found


def _within(these: list[str], those: list[str]) -> bool:
    """Every top id of ``these`` is among the top ids (plus slack) of ``those``."""
    return set(these[:TOP_HITS]) <= set(those[:TOP_HITS + _SLACK])


def _ids(ids: list[str]) -> str:
    shown = ids[:5]
    return "[" + ", ".join(shown) + (", ..." if len(ids) > 5 else "") + "]"


def _bucket_diff(old: list[tuple[Any, int]], new: list[tuple[Any, int]]) -> str:
    before, after = dict(old), dict(new)
    parts = [f"{key!s} {before.get(key, 0)}->{after.get(key, 0)}"
             for key in dict.fromkeys([*before, *after])
             if before.get(key, 0) != after.get(key, 0)]
    if not parts:
        return "the counts beyond the top values differ"
    return ", ".join(parts[:5]) + (f" (+{len(parts) - 5} more)" if len(parts) > 5 else "")
