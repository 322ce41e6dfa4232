"""What an incremental resolution pass reads: the changed works and their neighbours.

The document builder stores each work document's blocking keys (``blocking_keys``:
``scholarindex.indexing.atoms``) and marks a document whose evidence changed with the
keys of before and after (``resolve_pending``); a work deleted by an unlist leaves its
keys on its tombstone. This module reads them back through the index:

- ``pending``: the marked documents and tombstones (a search on the mark);
- ``counts``: how many documents hold each key (one terms aggregation; a pair, one
  search in an msearch), which is what
  blocking needs of the atoms it is not given (``blocking.candidate_pairs_from_titles``);
- ``holders``: the documents holding any of some keys (a terms query; the keys' counts
  size each search), and ``sources`` those of some ids: a pass reads a neighbour's
  stored keys first, its source only when it can pair with the change. A key more
  than ``blocking.MAX_POSTING`` documents hold is never asked for: blocking does not
  use it either (a posting or block past its cap pairs nothing), so a common word
  never pulls half the index in;
- ``nearest``: for each set of keys, the few documents sharing the most of them (ties
  broken by a title word a typo apart from one no document holds), by id and version;
- ``left_out``, ``near_holders``, ``near_counts``: of a leave-one-out block past the cap
  (``blocking.near_blocks``), the words its holders leave out (a terms aggregation over
  the block: each holder of one title holds the block's words and one more), and the
  holders, or how many, whose left-out word is one of some words.

Both also take a pair of rare words (``blocking.pair_keys``: ``"&:a b"``), which no
document stores (which pairs an atom files under depends on counts): its holders are
the documents holding both word keys.

Every request has the client's timeout; a failure raises ``IndexUnavailable``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from opensearchpy import OpenSearch

from scholarindex.core.resolution.blocking import is_pair_key, pair_key_words, word_key
from scholarindex.core.retry import is_retryable_status
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.scan import fetch_each, scan, scan_each

logger = logging.getLogger(__name__)

KEYS: Final = "blocking_keys"
TITLE: Final = "title"
# Terms an unheld word may stand for, a letter or two apart: a typo has few neighbours.
TITLE_EXPANSIONS: Final = 10
PENDING: Final = "resolve_pending"
MARKED: Final = {"exists": {"field": PENDING}}  # the documents marked for the pass
CHUNK = 4096  # keys a request names at most (terms queries and aggregations)
PAIR_CHUNK = 512  # pair keys a request names at most (two clauses each; searches of an msearch)
FETCH_HITS = 1_000  # documents one search of holders or ids answers at most
Version = tuple[str, int, int]  # a document's concrete index, sequence number and term
# The engine's default limit of buckets in one answer (``search.max_buckets``).
MAX_BUCKETS = 65_535


def pending(client: OpenSearch, index: str, source: list[str]
            ) -> Iterator[tuple[str, dict[str, Any], tuple[int, int]]]:
    """Every document of ``index`` marked for the pass: id, source, (seq_no, term)."""
    body = {"query": MARKED, "_source": [*source, PENDING],
            "seq_no_primary_term": True}
    for hit in scan(client, index, body):
        yield hit["_id"], hit["_source"], (hit["_seq_no"], hit["_primary_term"])


def counts(client: OpenSearch, index: str, keys: Iterable[str],
           enough: Mapping[str, int] | None = None) -> dict[str, int]:
    """The number of documents of ``index`` holding each key (0 for none).

    ``enough``: pair key -> a count at which counting it may stop, its answer then that
    count. A caller that only asks whether a block is past a cap need not count on
    through the thousands of documents a pair of common words has."""
    enough = enough or {}
    asked = sorted(set(keys))
    found = dict.fromkeys(asked, 0)
    pairs = [k for k in asked if is_pair_key(k)]
    stored = [k for k in asked if not is_pair_key(k)]
    # A pair is counted by a search of its own: a filters aggregation tests each of its
    # filters on every document any of them matches, which for pairs of common words
    # costs about five times as much.
    for start in range(0, len(pairs), PAIR_CHUNK):
        part = pairs[start:start + PAIR_CHUNK]
        body: list[dict[str, Any]] = []
        for key in part:
            body += [{"index": index},
                     {"size": 0, "track_total_hits": enough.get(key, True),
                      "query": _both(key)}]
        with translate_errors(f"count blocking pairs {index}"):
            answer = client.msearch(body=body)
        for key, response in zip(part, _answered(answer, f"count blocking pairs {index}"),
                                 strict=True):
            found[key] = int(response["hits"]["total"]["value"])
    for start in range(0, len(stored), CHUNK):
        names = stored[start:start + CHUNK]
        search = {"size": 0, "query": {"terms": {KEYS: names}},
                  "aggs": {"keys": {"terms": {"field": KEYS, "include": names,
                                              "size": len(names)}}}}
        with translate_errors(f"count blocking keys {index}"):
            answer = client.search(index=index, body=search)
        for bucket in answer["aggregations"]["keys"]["buckets"]:
            found[bucket["key"]] = int(bucket["doc_count"])
    return found


def holders(client: OpenSearch, index: str, keys: Mapping[str, int], source: list[str]
            ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every document of ``index`` holding one of ``keys`` (key -> the documents holding
    it, ``counts``): id and source. The counts size the searches (``fetch_each``); a
    count the index has outgrown costs a scroll, not a hit."""
    searches: list[tuple[dict[str, Any], int]] = []
    asked = sorted(keys)
    stored = [k for k in asked if not is_pair_key(k)]
    pairs = [k for k in asked if is_pair_key(k)]
    for part in _parts(stored, keys, CHUNK):
        searches.append(({"query": {"terms": {KEYS: part}}, "_source": source},
                         sum(keys[k] for k in part)))
    for part in _parts(pairs, keys, PAIR_CHUNK):
        searches.append(({"query": {"bool": {"should": [_both(k) for k in part],
                                              "minimum_should_match": 1}},
                          "_source": source}, sum(keys[k] for k in part)))
    for hit in fetch_each(client, index, searches):
        yield hit["_id"], hit["_source"]


def sources(client: OpenSearch, index: str, ids: Iterable[str], source: list[str]
            ) -> Iterator[tuple[str, dict[str, Any]]]:
    """The documents of ``index`` with these ids (those that exist): id and source."""
    asked = sorted(set(ids))
    searches = [({"query": {"ids": {"values": part}}, "_source": source}, len(part))
                for part in (asked[start:start + FETCH_HITS]
                             for start in range(0, len(asked), FETCH_HITS))]
    for hit in fetch_each(client, index, searches):
        yield hit["_id"], hit["_source"]


def _parts(keys: Sequence[str], counts: Mapping[str, int], most: int) -> Iterator[list[str]]:
    """``keys`` in runs of at most ``most`` keys and, but for a key alone, ``FETCH_HITS``
    documents by their counts."""
    part: list[str] = []
    hits = 0
    for key in keys:
        if part and (len(part) == most or hits + counts[key] > FETCH_HITS):
            yield part
            part, hits = [], 0
        part.append(key)
        hits += counts[key]
    if part:
        yield part


def nearest(client: OpenSearch, index: str, keys: Sequence[Iterable[str]], size: int,
            unheld: Sequence[str] | None = None, per_request: int = 100
            ) -> list[list[tuple[str, Version]]]:
    """For each set of keys, the ``size`` documents of ``index`` sharing the most of
    them, rarest first (a key's weight is the engine's inverse document frequency): id
    and version, no source (neighbours recur from one set to the next and one call to
    the next: the caller reads each version once). One ``msearch`` per ``per_request``
    sets.

    ``unheld`` (one a set): the words of its title few documents hold, likely typos. A
    misspelt word shares no key, so the paper's printing ties with every title that
    differs from it in that word alone (in a large crawl of a small vocabulary,
    dozens); a title holding the word a letter or two apart ranks first. Only those
    words are matched so: a fuzzy match of every word costs the engine more than
    the rest of the search."""
    found: list[list[tuple[str, Version]]] = []
    for start in range(0, len(keys), per_request):
        body: list[dict[str, Any]] = []
        for at in range(start, min(start + per_request, len(keys))):
            query: dict[str, Any] = {"bool": {"must": [{"bool": {
                "should": [{"term": {KEYS: key}} for key in sorted(set(keys[at]))],
                "minimum_should_match": 1}}]}}
            if unheld is not None and unheld[at]:
                query["bool"]["should"] = [{"match": {TITLE: {
                    "query": unheld[at], "fuzziness": "AUTO", "prefix_length": 1,
                    "max_expansions": TITLE_EXPANSIONS}}}]
            body += [{"index": index}, {"size": size, "_source": False,
                                        "seq_no_primary_term": True, "query": query}]
        what = f"search {index} for the nearest documents"
        with translate_errors(what):
            answer = client.msearch(body=body)
        found += [[(hit["_id"], version_of(hit)) for hit in response["hits"]["hits"]]
                  for response in _answered(answer, what)]
    return found


def left_out(client: OpenSearch, index: str, keys: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """For each leave-one-out key (``"x:-..."``) with the documents holding it, the words
    its holders hold beside the key's own, each with the documents holding it: one
    search each, in msearches. A holder of one title leaves out one word, so the
    answer has about as many words as the key has holders (and the key's own); past
    the engine's limit of buckets the rarest words are missing, and logged."""
    asked = sorted(keys)
    found: dict[str, dict[str, int]] = {}
    for start in range(0, len(asked), PAIR_CHUNK):
        part = asked[start:start + PAIR_CHUNK]
        body: list[dict[str, Any]] = []
        for key in part:
            size = min(MAX_BUCKETS, 2 * keys[key] + len(key.split(" ")) + 16)
            body += [{"index": index},
                     {"size": 0, "query": {"term": {KEYS: key}},
                      "aggs": {"words": {"terms": {"field": KEYS, "include": "w:.*",
                                                   "size": size}}}}]
        what = f"words left out of blocking keys {index}"
        with translate_errors(what):
            answer = client.msearch(body=body)
        for key, response in zip(part, _answered(answer, what), strict=True):
            words = response["aggregations"]["words"]
            if words.get("sum_other_doc_count"):  # the full pass settles what is missed
                logger.warning("%s: %s holds more words than one answer, some left out",
                               what, key)
            own = set(key[key.index("-") + 1:].split(" "))
            found[key] = {bucket["key"][2:]: int(bucket["doc_count"])
                          for bucket in words["buckets"] if bucket["key"][2:] not in own}
    return found


def near_holders(client: OpenSearch, index: str, near: Mapping[str, Iterable[str]],
                 source: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every document of ``index`` holding a leave-one-out key of ``near`` and one of
    its words (left out: ``left_out``): id and source."""
    queries = [_near(key, words) for key, words in sorted(near.items())]
    searches = [{"query": {"bool": {"should": queries[start:start + PAIR_CHUNK],
                                    "minimum_should_match": 1}}, "_source": source}
                for start in range(0, len(queries), PAIR_CHUNK)]
    for hit in scan_each(client, index, searches):
        yield hit["_id"], hit["_source"]


def near_counts(client: OpenSearch, index: str, parts: Mapping[str, tuple[str, Iterable[str]]]
                ) -> dict[str, int]:
    """For each name, the documents holding its leave-one-out key and one of its words."""
    asked = sorted(parts)
    found: dict[str, int] = {}
    for start in range(0, len(asked), PAIR_CHUNK):
        names = asked[start:start + PAIR_CHUNK]
        body: list[dict[str, Any]] = []
        for name in names:
            body += [{"index": index},
                     {"size": 0, "track_total_hits": True, "query": _near(*parts[name])}]
        what = f"count near blocking keys {index}"
        with translate_errors(what):
            answer = client.msearch(body=body)
        for name, response in zip(names, _answered(answer, what), strict=True):
            found[name] = int(response["hits"]["total"]["value"])
    return found


def _near(key: str, words: Iterable[str]) -> dict[str, Any]:
    """The documents holding ``key`` and one of ``words`` (as word keys)."""
    return {"bool": {"filter": [{"term": {KEYS: key}},
                                {"terms": {KEYS: sorted(word_key(w) for w in words)}}]}}


def version_of(hit: Mapping[str, Any]) -> Version:
    """A search or get hit's version (asked with ``seq_no_primary_term``)."""
    return hit["_index"], hit["_seq_no"], hit["_primary_term"]


def _answered(answer: Mapping[str, Any], what: str) -> list[dict[str, Any]]:
    """An msearch's responses, in order; raises ``IndexUnavailable`` for the first that
    failed (msearch reports each search's failure with a 200)."""
    for response in answer["responses"]:
        if "error" in response:
            status = response.get("status")
            raise IndexUnavailable(f"{what}: {response['error']}", status=status,
                                   retryable=is_retryable_status(status))
    return list(answer["responses"])


def _both(pair: str) -> dict[str, Any]:
    """The documents holding both words of a pair key."""
    return {"bool": {"filter": [{"term": {KEYS: word_key(word)}}
                                for word in pair_key_words(pair)]}}


def keys_of(docs: Iterable[Mapping[str, Any]], field: str = KEYS) -> set[str]:
    return {k for doc in docs for k in doc.get(field) or ()}
