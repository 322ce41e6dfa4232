"""A new work that resolution would join to one already indexed: written hidden.

Between a crawl's writes and its resolution pass, a paper printed differently on two
profiles (a typo, mojibake, a title cut short) would be two documents, and a search
would show it twice. So the writer judges each *new* work document before it writes
it. First, which of them blocking could pair with any other document at all
(``_with_candidates``: a non-word key or enough title words in common with an indexed
work or another new work of the batch; one search, no document fetched): most new
works of a crawl share nothing and are written as they are. Each that may is judged
beside the ``NEAREST`` indexed documents sharing the most of its blocking keys, rarest
first (``neighbourhood.nearest``: the engine's scoring ranks them; the printing of one
paper shares its rarest words, its title's start, its typo keys; where keys tie, a
title word a typo apart from one few documents hold ranks it first; the search names
them by id and version, and each version is read once, ``Neighbours``), and as many new works
of the batch sharing the most of its keys (``_nearest_in_batch``): a bounded read and a
few decisions each, however many documents hold its words (reading every holder of its
words grew with the index, and pairing the batch's holders of a word with the batch).
Of those, the pairs blocking could make are decided (a block of whole titles, typos or
a verified key in common, or enough words: ``blocking.words_needed``), each indexed
document taken as the work it stands for, and only what a new work can change
(``scholarindex.core.resolution.cluster.resolve_new``). A new work that lands in a
cluster with a work already indexed, or with a new one of a smaller
id, is written with ``hidden_by`` (that work's id). Every search leaves hidden works
out (``scholarindex.search.query``), so its counts and facets stay those of papers.
The writer refreshes the index before judging only when it created works within the
last ``REFRESH_AFTER`` seconds (older ones the index's own refresh has made
searchable). ``HIDE_UNRESOLVED_WORKS = false`` switches the judgment off.

The pass decides: it joins the hidden work into its paper's document (the joined
document is not hidden), or, when it keeps them apart after all, clears the mark
(``ResolutionPass._settle``), so nothing stays hidden past the pass. A later listing
of a hidden work keeps it hidden (``documents._work_doc`` carries the field).

The judgment is provisional and one-sided: it never joins anything, so it cannot make
a wrong join the pass would have to undo; at worst a new printing is hidden until the
pass, while its paper shows under the other printing. A failure to read the
neighbours that may pass (a timeout, a rejection) is retried with the writer's round;
one that will not writes the new works visible (the pass still joins them).
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from itertools import combinations
from typing import Any, Final, NamedTuple

from opensearchpy import OpenSearch

from scholarindex.core.collector import cycle_collector_paused
from scholarindex.core.resolution import Atom
from scholarindex.core.resolution.blocking import MAX_POSTING, title_terms, words_needed
from scholarindex.core.resolution.cluster import resolve_new
from scholarindex.core.resolution.decide import Features, features
from scholarindex.indexing import neighbourhood
from scholarindex.indexing.atoms import (
    STRONG_PREFIX,
    DocAtoms,
    doc_keys,
)
from scholarindex.indexing.client import mget_hits, translate_errors
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.neighbourhood import Version, version_of
from scholarindex.indexing.scan import refresh
from scholarindex.indexing.shapes import WorkDoc

logger = logging.getLogger(__name__)

HIDDEN: Final = "hidden_by"
# Indexed documents read for each judged one: those sharing the most of its blocking keys.
NEAREST = 10
BLOCKS = ("x:", STRONG_PREFIX)  # stored keys of blocks that pair atoms whatever their words
# A title word this few documents hold may be a misprint (the same one printed under a few
# titles), ranked by its spellings a letter or two apart; at most this many a search, as a
# fuzzy match costs the engine more than the rest of the search.
TYPO_HELD = 5
TYPO_WORDS = 2
# Nested clauses one search may hold. OpenSearch refuses a query of more than
# ``indices.query.bool.max_clause_count`` (1,024 by default), counted over the whole query;
# a batch of new works with long titles asks about more than that in one go.
CLAUSES_PER_SEARCH = 900
# Seconds after which the index's own refresh (every second) has made a writer's last
# works searchable: a writer that wrote works more recently refreshes before judging.
REFRESH_AFTER = 5.0
SOURCE = ["work_id", "work_ids", "listings", "arxiv_id", "arxiv", "enrichment", "resolution",
          HIDDEN, "blocking_keys"]
# Indexed documents a writer's judgment keeps read (about 3 KB each): several batches'
# nearest documents. Part of the writer's memory budget (``scholarindex.core.memo``): full
# after about 1,500 bench-site profiles. At 16,384 the writer read 19% more documents
# over 5,000 profiles, and its CPU rose by about 8%.
NEIGHBOURS_KEPT = 20_000
READ_PART = 1000  # documents one read of neighbours asks for


class _Read(NamedTuple):
    """What the judgment reads of one document."""

    atoms: list[Atom]
    features: list[Features]  # each atom's (kept with it: the shared cache turns over)
    words: list[frozenset[str]]  # each atom's distinctive title words (``atoms.atom_words``)
    blocks: frozenset[str]  # its stored keys of blocks that need no words (``BLOCKS``)
    hidden: str | None

    @classmethod
    def of(cls, atoms: list[Atom], keys: frozenset[str], hidden: str | None) -> _Read:
        feats = [features(atom) for atom in atoms]
        return cls(atoms, feats, [frozenset(title_terms(f.titles)) for f in feats],
                   frozenset(k for k in keys if k.startswith(BLOCKS)), hidden)


class Neighbours:
    """The indexed documents the judgment has read, each kept by its version.

    The nearest documents of one batch's new works are mostly those of the batch before
    (on a crawl of one field, four in five): reading each version of a document once,
    rather than its source with every search that ranks it, is most of the judgment's
    bytes and parsing. The last ``size`` documents read are kept."""

    def __init__(self, size: int = NEIGHBOURS_KEPT) -> None:
        self.size = size
        self._kept: OrderedDict[str, tuple[Version, _Read]] = OrderedDict()
        self.hits = self.misses = 0  # documents found kept, and read

    def read(self, client: OpenSearch, wanted: Mapping[str, Version], atoms: DocAtoms
             ) -> dict[str, _Read]:
        """The documents of ``wanted`` (id -> version a search found) that still exist:
        those kept at that version as they are, the rest read (at their latest version)."""
        found: dict[str, _Read] = {}
        missing = []
        for doc_id, version in wanted.items():
            kept = self._kept.get(doc_id)
            if kept is not None and kept[0] == version:
                self._kept.move_to_end(doc_id)
                found[doc_id] = kept[1]
            else:
                missing.append((version[0], doc_id))
        self.hits += len(found)
        self.misses += len(missing)
        for hit in mget_hits(client, missing, READ_PART, "read neighbours of new works in",
                             SOURCE):
            if not hit.get("found"):
                continue  # deleted since the search: nothing to join
            doc = hit["_source"]
            read = _Read.of(atoms(doc), _stored(doc, atoms), doc.get(HIDDEN))
            found[hit["_id"]] = read
            self._kept[hit["_id"]] = (version_of(hit), read)
            self._kept.move_to_end(hit["_id"])
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return found


def hiders(client: OpenSearch, works: str, new: Mapping[str, WorkDoc],
           fresh: bool = False, neighbours: Neighbours | None = None) -> dict[str, str]:
    """For each new work document (id -> document) that resolution would join to another,
    the id it is hidden by. Raises a retryable ``IndexUnavailable`` (a timeout, a
    rejection: the writer's round is tried again, as for its reads); empty when the
    index refuses for good (logged).

    ``fresh``: the caller wrote no work for a while (``REFRESH_AFTER``), so the index's
    own refresh has made its last works searchable: no refresh is asked for.
    ``neighbours``: the documents read by the caller's earlier judgments."""
    if not new:
        return {}
    try:
        with cycle_collector_paused():  # many objects made, none in cycles worth a pass
            return _hiders(client, works, new, fresh, neighbours or Neighbours())
    except IndexUnavailable as exc:
        if exc.retryable:
            raise
        logger.warning("new works written without checking for their papers' other "
                       "printings (the resolution pass joins them): %s", exc)
        return {}


def _hiders(client: OpenSearch, works: str, new: Mapping[str, WorkDoc],
            fresh: bool, neighbours: Neighbours) -> dict[str, str]:
    atoms = DocAtoms()
    keys_of = {doc_id: _stored(doc, atoms) for doc_id, doc in new.items()}
    if not fresh:
        refresh(client, works)
    counts = neighbourhood.counts(client, works, {k for keys in keys_of.values() for k in keys})
    need = {doc_id: _words_needed(atoms(doc)) for doc_id, doc in new.items()}
    judged = sorted(_with_candidates(client, works, keys_of, need, counts))
    if not judged:
        return {}
    new = {doc_id: new[doc_id] for doc_id in judged}
    # Each judged document's likeliest partners in the index and in the batch: a bounded
    # read and a few decisions each, however many documents hold its words.
    likeness = [keys_of[d] | {"x:~" + k[2:] for k in keys_of[d] if k.startswith("w:")}
                for d in judged]
    versions: dict[str, Version] = {}
    near: dict[str, set[str]] = {}
    unheld = [" ".join(_likely_typos(keys_of[d], counts)) for d in judged]
    for doc_id, hits in zip(judged, neighbourhood.nearest(client, works, likeness, NEAREST,
                                                          unheld), strict=True):
        near[doc_id] = {other for other, _ in hits}
        versions.update(hits)
    for doc_id, others in _nearest_in_batch({d: keys_of[d] for d in judged}, counts).items():
        near[doc_id].update(others)
    for doc_id in versions.keys() & new.keys():  # written since the refresh: judged as new
        del versions[doc_id]
    read = neighbours.read(client, versions, atoms)
    read.update((doc_id, _Read.of(atoms(new[doc_id]), keys_of[doc_id], None)) for doc_id in judged)
    to_decide = [pair for doc_id in judged for other in near[doc_id] if other in read
                 for pair in _pairs(read[doc_id], read[other])]
    # The indexed documents are works as the last pass (or identity join) left them:
    # only what a new work can change is decided.
    owner = {atom.work_id: doc_id for doc_id, r in read.items() for atom in r.atoms}
    settled = {wid: doc_id for wid, doc_id in owner.items() if doc_id not in new}
    every = [atom for r in read.values() for atom in r.atoms]
    known = {id(f.atom): f for r in read.values() for f in r.features}

    def features_of(atom: Atom) -> Features:
        kept = known.get(id(atom))
        return kept if kept is not None and kept.atom is atom else features(atom)

    found: dict[str, str] = {}
    for cluster in resolve_new(every, settled, to_decide, features_of=features_of).clusters:
        held = {owner[wid] for wid in cluster}
        old = sorted(d for d in held if d not in new)
        for doc_id in held & set(new):
            earlier = old or sorted(d for d in held if d < doc_id)
            if earlier:
                found[doc_id] = read[earlier[0]].hidden or earlier[0]
    return found


def _nearest_in_batch(keys_of: Mapping[str, frozenset[str]], counts: Mapping[str, int]
                      ) -> dict[str, list[str]]:
    """For each new document, the ``NEAREST`` others of the batch sharing the most of its
    keys, each weighed as the engine would (rarer in the index and the batch, heavier).
    A key more than ``MAX_POSTING`` of the batch hold ranks none, as blocking looks up
    none: a common word would make the batch's pairs quadratic."""
    postings: dict[str, list[str]] = {}
    for doc_id, keys in keys_of.items():
        for key in keys:
            postings.setdefault(key, []).append(doc_id)
    weight = {key: 1.0 / (len(held) + counts.get(key, 0))
              for key, held in postings.items() if 1 < len(held) <= MAX_POSTING}
    nearest = {}
    for doc_id, keys in keys_of.items():
        score: dict[str, float] = {}
        for key in keys:
            if key in weight:
                for other in postings[key]:
                    score[other] = score.get(other, 0.0) + weight[key]
        score.pop(doc_id, None)
        nearest[doc_id] = sorted(score, key=lambda d: (-score[d], d))[:NEAREST]
    return nearest


def _stored(doc: Mapping[str, Any], atoms: DocAtoms) -> frozenset[str]:
    return frozenset(doc.get("blocking_keys") or doc_keys(atoms(doc)))


def _pairs(first: _Read, second: _Read) -> list[tuple[str, str]]:
    """The pairs of atoms of two documents blocking could pair: all of them when the
    documents share a block of whole titles, typos or a verified key, else those with
    enough words in common (``blocking.words_needed``)."""
    if first.blocks & second.blocks:
        return [(a.work_id, b.work_id) for a in first.atoms for b in second.atoms]
    return [(a.work_id, b.work_id)
            for a, words_a in zip(first.atoms, first.words, strict=True)
            for b, words_b in zip(second.atoms, second.words, strict=True)
            if len(words_a & words_b) >= words_needed(len(words_a), len(words_b))]


def _likely_typos(keys: frozenset[str], counts: Mapping[str, int]) -> list[str]:
    """The ``TYPO_WORDS`` rarest title words of ``keys`` that few documents hold
    (``TYPO_HELD`` at most): likely misprints, matched a letter or two apart
    (``neighbourhood.nearest``). Not only words no document holds: a large crawl prints
    one misprint of a common word again under other titles."""
    rare = sorted((counts.get(k, 0), k[2:]) for k in keys
                  if k.startswith("w:") and counts.get(k, 0) <= TYPO_HELD)
    return sorted(word for _, word in rare[:TYPO_WORDS])


def _with_candidates(client: OpenSearch, works: str, keys_of: Mapping[str, frozenset[str]],
                     need: Mapping[str, int], counts: Mapping[str, int]) -> set[str]:
    """The new documents blocking may pair with another document: the only ones worth
    judging (most new works of a crawl share no block with any other).

    Blocking pairs two atoms only when they share a block (a whole title, a title with a
    surname, a typo key: every stored key but the words) or enough title words
    (``blocking.words_needed``: two, one when a title has a single distinctive word; any
    candidate pair passes that test). So a new document needs judging when it shares
    a non-word key with another, or as many words with one document: the batch's other
    new documents are compared here, the index through ``counts`` (a non-word key held)
    and one search with a filter per remaining document (``_sharing``). A one-word
    title held in the index is found through its typo key of the whole word
    (``"x:~" + word``), which only a one-word title stores.
    """
    words = {doc_id: {k for k in keys if k.startswith("w:")} for doc_id, keys in keys_of.items()}
    found = _sharing_in_batch(keys_of, words, need)
    ask: dict[str, dict[str, Any]] = {}
    for doc_id, keys in keys_of.items():
        if doc_id in found:
            continue
        if any(counts.get(k, 0) > 0 for k in keys - words[doc_id]):
            found.add(doc_id)
            continue
        held = sorted(k for k in words[doc_id] if counts.get(k, 0) > 0)
        if not held:
            continue
        should: list[dict[str, Any]] = [{"terms": {neighbourhood.KEYS: [
            "x:~" + k[2:] for k in held]}}]
        if len(held) >= need[doc_id]:
            should.append(_sharing_words(held, held, need[doc_id]))
        ask[doc_id] = {"bool": {"should": should, "minimum_should_match": 1}}
    return found | _sharing(client, works, ask)


def _sharing_words(some: list[str], words: list[str], need: int) -> dict[str, Any]:
    """Documents holding one of ``some`` word keys and ``need`` of ``words``."""
    return {"bool": {"filter": [{"terms": {neighbourhood.KEYS: some}}],
                     "should": [{"term": {neighbourhood.KEYS: k}} for k in words],
                     "minimum_should_match": need}}


def _words_needed(atoms: list[Atom]) -> int:
    """Title words another atom must share with one of the document's (at least)."""
    sizes = [len(title_terms(features(atom).titles)) for atom in atoms]
    return 1 if any(size <= 1 for size in sizes) else 2


def _sharing_in_batch(keys_of: Mapping[str, frozenset[str]], words: Mapping[str, set[str]],
                      need: Mapping[str, int]) -> set[str]:
    """The new documents sharing a non-word key, or enough words, with another of them.

    Counted by key, and by pair of words where two are needed, not by pair of
    documents: a word common in the batch would make that quadratic."""
    held = Counter(k for keys in keys_of.values() for k in keys)
    alone = Counter(w for doc_id, own in words.items() if need[doc_id] == 1 for w in own)
    pairs_of = {doc_id: list(combinations(sorted(own), 2))
                for doc_id, own in words.items() if need[doc_id] > 1}
    pairs = Counter(pair for own_pairs in pairs_of.values() for pair in own_pairs)
    found: set[str] = set()
    for doc_id, keys in keys_of.items():
        own = words[doc_id]
        if need[doc_id] == 1:  # one word in common with any other is enough
            shares = any(held[k] > 1 for k in keys)
        else:  # a key of a block, a word of a one-word title, or two words
            shares = (any(held[k] > 1 for k in keys - own) or any(alone[w] for w in own)
                      or any(pairs[pair] > 1 for pair in pairs_of[doc_id]))
        if shares:
            found.add(doc_id)
    return found


def _sharing(client: OpenSearch, works: str, filters: Mapping[str, dict[str, Any]]
             ) -> set[str]:
    """The ids of ``filters`` (id -> query) that some indexed work document matches:
    one search, a ``filters`` aggregation, no document fetched."""
    found: set[str] = set()
    for part in _parts(filters, CLAUSES_PER_SEARCH):
        body = {"size": 0, "query": {"bool": {"should": list(part.values()),
                                              "minimum_should_match": 1}},
                "aggs": {"sharing": {"filters": {"filters": part}}}}
        with translate_errors(f"search {works} for new works' blocks"):
            answer = client.search(index=works, body=body)
        found |= {name for name, bucket in answer["aggregations"]["sharing"]["buckets"].items()
                  if bucket["doc_count"] > 0}
    return found


def _parts(filters: Mapping[str, dict[str, Any]], budget: int
           ) -> Iterator[dict[str, dict[str, Any]]]:
    """``filters`` in order of their names, a part a search: as many as fit in ``budget``
    clauses once joined under one ``should`` (a filter larger than that goes alone)."""
    part: dict[str, dict[str, Any]] = {}
    used = 0
    for name in sorted(filters):
        size = 1 + clauses(filters[name])
        if part and used + size > budget:
            yield part
            part, used = {}, 0
        part[name] = filters[name]
        used += size
    if part:
        yield part


def clauses(query: Mapping[str, Any]) -> int:
    """The clauses nested in a query's ``bool``s, as the engine counts them for its limit."""
    inner = query.get("bool")
    if not isinstance(inner, Mapping):
        return 0
    return sum(1 + clauses(child) for occur in ("must", "filter", "should", "must_not")
               for child in inner.get(occur, []))
