"""A new work that resolution would join to one already indexed: written hidden.

Between a crawl's writes and its resolution pass, a paper printed differently on two
profiles (a typo, mojibake, a title cut short) would be two documents, and a search
would show it twice. So the writer judges each *new* work document before it writes
it. First, which of them blocking could pair with any other document at all
(``_with_candidates``: a non-word key or enough title words in common with an indexed
work or another new work of the batch; one search, no document fetched): most new
works of a crawl share nothing and are written as they are. Those that may are
resolved with their blocking neighbours in the index (read through the stored
blocking keys, ``scholarindex.indexing.neighbourhood``) as the pass would
(``scholarindex.core.resolution.resolve``, with the index's counts), and a new work
that lands in a cluster with a work already indexed, or with a new one of a smaller
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
from collections.abc import Mapping
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.resolution import Atom, resolve
from scholarindex.core.resolution.blocking import (
    MAX_POSTING,
    candidate_pairs_from_titles,
    pair_key_words,
    title_terms,
    word_key,
)
from scholarindex.core.resolution.decide import decide_remembered, features
from scholarindex.indexing import neighbourhood
from scholarindex.indexing.atoms import (
    DocAtoms,
    atom_keys,
    atoms_of,
    doc_keys,
    filed_pairs,
    holding_both,
)
from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.scan import refresh

logger = logging.getLogger(__name__)

HIDDEN = "hidden_by"
FILTERS_PER_SEARCH = 500  # new documents one search asks about (a batch's, mostly)
# Seconds after which the index's own refresh (every second) has made a writer's last
# works searchable: a writer that wrote works more recently refreshes before judging.
REFRESH_AFTER = 5.0
SOURCE = ["work_id", "work_ids", "listings", "arxiv_id", "arxiv", "enrichment", "resolution",
          HIDDEN, "blocking_keys"]


def hiders(client: OpenSearch, works: str, new: Mapping[str, Mapping[str, Any]],
           fresh: bool = False) -> dict[str, str]:
    """For each new work document (id -> document) that resolution would join to another,
    the id it is hidden by. Raises a retryable ``IndexUnavailable`` (a timeout, a
    rejection: the writer's round is tried again, as for its reads); empty when the
    index refuses for good (logged).

    ``fresh``: the caller wrote no work for a while (``REFRESH_AFTER``), so the index's
    own refresh has made its last works searchable: no refresh is asked for."""
    if not new:
        return {}
    try:
        return _hiders(client, works, new, fresh)
    except IndexUnavailable as exc:
        if exc.retryable:
            raise
        logger.warning("new works written without checking for their papers' other "
                       "printings (the resolution pass joins them): %s", exc)
        return {}


def _hiders(client: OpenSearch, works: str, new: Mapping[str, Mapping[str, Any]],
            fresh: bool) -> dict[str, str]:
    atoms = DocAtoms()
    keys_of = {doc_id: frozenset(doc.get("blocking_keys") or doc_keys(atoms(doc)))
               for doc_id, doc in new.items()}
    if not fresh:
        refresh(client, works)
    counts = neighbourhood.counts(client, works, {k for keys in keys_of.values() for k in keys})
    judged = _with_candidates(client, works, new, keys_of, counts)
    if not judged:
        return {}
    # The others pair with nothing, but their words and blocks count towards blocking's
    # rarity and caps as if resolved with the rest (they are not in the index yet).
    others = [doc for doc_id, doc in new.items() if doc_id not in judged]
    new = {doc_id: new[doc_id] for doc_id in judged}
    keys = {k for doc_id in judged for k in keys_of[doc_id]}
    ask = [k for k in keys if 0 < counts[k] <= MAX_POSTING]
    docs: dict[str, Mapping[str, Any]] = {
        doc_id: source for doc_id, source in neighbourhood.holders(client, works, ask, SOURCE)
        if doc_id not in new}
    docs.update(new)
    word_counts, sizes = _counted(client, works, docs, set(new), others, counts, atoms)
    # And the holders of the pairs of rare words the new works file under, within the cap.
    pairs = set(filed_pairs(new.values(), word_counts, atoms))
    counts.update(neighbourhood.counts(client, works, pairs - set(counts)))
    ask_pairs = [k for k in pairs if 0 < counts[k] <= MAX_POSTING]
    ask_set = set(ask) | set(ask_pairs)
    read = len(docs)
    docs.update((doc_id, source) for doc_id, source
                in neighbourhood.holders(client, works, ask_pairs, SOURCE) if doc_id not in docs)
    if len(docs) > read:
        word_counts, sizes = _counted(client, works, docs, set(new), others, counts, atoms)
    owner = {atom.work_id: doc_id for doc_id, doc in docs.items() for atom in atoms(doc)}
    matched = _matched(atoms.of(docs.values()), owner, set(new), word_counts, sizes)
    if not matched:
        return {}
    # Only the works a matched new one may meet: it and the documents sharing its keys
    # (a pair of words: holding both).
    near = {k for doc_id in matched for k in keys_of[doc_id] if k in ask_set}
    near_pairs = [set(map(word_key, pair_key_words(k)))
                  for k in filed_pairs([new[d] for d in matched], word_counts, atoms)
                  if k in ask_set]
    docs = {doc_id: doc for doc_id, doc in docs.items()
            if doc_id in matched or (doc_id not in new
                                     and _shares(_stored(doc, atoms), near, near_pairs))}
    new = {doc_id: new[doc_id] for doc_id in matched}
    found: dict[str, str] = {}
    for cluster in resolve(atoms.of(docs.values()), counts=word_counts, sizes=sizes,
                           judge=decide_remembered).clusters:
        held = {owner[wid] for wid in cluster}
        old = sorted(d for d in held if d not in new)
        for doc_id in held & set(new):
            earlier = old or sorted(d for d in held if d < doc_id)
            if earlier:
                found[doc_id] = docs[earlier[0]].get(HIDDEN) or earlier[0]
    return found


def _counted(client: OpenSearch, works: str, docs: Mapping[str, Mapping[str, Any]],
             new: set[str], others: list[Mapping[str, Any]], counts: dict[str, int],
             atoms: DocAtoms) -> tuple[dict[str, int], dict[str, int]]:
    """Blocking's counts over the index and this batch (word -> atoms; block -> atoms):
    the atoms of ``docs`` one by one, each other indexed document holding a key as one
    atom, and the batch's other new documents (``others``) too. Fills ``counts`` (key ->
    indexed documents holding it) where it lacks a key."""
    local_atoms: dict[str, int] = {}
    for doc in (*docs.values(), *others):
        for atom in atoms(doc):
            for key in atom_keys(atom):
                local_atoms[key] = local_atoms.get(key, 0) + 1
    missing = set(local_atoms) - set(counts)
    counts.update(neighbourhood.counts(client, works, missing) if missing else {})
    local_docs: dict[str, int] = {}
    for doc_id, doc in docs.items():
        if doc_id not in new:
            for key in _stored(doc, atoms):
                local_docs[key] = local_docs.get(key, 0) + 1
    word_counts, sizes = {}, {}
    for key, held in local_atoms.items():
        total = held + max(0, counts.get(key, 0) - local_docs.get(key, 0))
        if key.startswith("w:"):
            word_counts[key[2:]] = total
        else:
            sizes[key] = total
    # A pair of rare words: the atoms holding both words (``blocking.pair_keys``).
    batch = [*docs.values(), *others]
    shared = [k for k, filed in filed_pairs(batch, word_counts, atoms).items() if filed > 1]
    missing = set(shared) - set(counts)
    counts.update(neighbourhood.counts(client, works, missing) if missing else {})
    atoms_both, _ = holding_both(batch, shared, atoms)
    _, docs_both = holding_both([doc for doc_id, doc in docs.items() if doc_id not in new],
                                shared, atoms)
    for key in shared:
        sizes[key] = atoms_both[key] + max(0, counts[key] - docs_both[key])
    return word_counts, sizes


def _stored(doc: Mapping[str, Any], atoms: DocAtoms) -> set[str]:
    return set(doc.get("blocking_keys") or doc_keys(atoms(doc)))


def _shares(keys: set[str], near: set[str], near_pairs: list[set[str]]) -> bool:
    return bool(keys & near) or any(pair <= keys for pair in near_pairs)


def _with_candidates(client: OpenSearch, works: str, new: Mapping[str, Mapping[str, Any]],
                     keys_of: Mapping[str, frozenset[str]], counts: Mapping[str, int]
                     ) -> set[str]:
    """The new documents blocking may pair with another document: the only ones worth
    judging (most new works of a crawl share no block with any other).

    Blocking pairs two atoms only when they share a block (a whole title, a title with a
    surname, a typo key: every stored key but the words) or enough title words
    (``blocking._needed``: two, one when a title has a single distinctive word; any
    candidate pair passes that test). So a new document needs judging when it shares
    a non-word key with another, or as many words with one document: the batch's other
    new documents are compared here, the index through ``counts`` (a non-word key held)
    and one search with a filter per remaining document (``_sharing``). A one-word
    title held in the index is found through its typo key of the whole word
    (``"x:~" + word``), which only a one-word title stores.
    """
    need = {doc_id: _words_needed(new[doc_id]) for doc_id in new}
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
            should.append({"bool": {"should": [{"term": {neighbourhood.KEYS: k}} for k in held],
                                    "minimum_should_match": need[doc_id]}})
        ask[doc_id] = {"bool": {"should": should, "minimum_should_match": 1}}
    return found | _sharing(client, works, ask)


def _words_needed(doc: Mapping[str, Any]) -> int:
    """Title words another atom must share with one of the document's (at least)."""
    sizes = [len(title_terms(features(atom).titles)) for atom in atoms_of([doc])]
    return 1 if any(size <= 1 for size in sizes) else 2


def _sharing_in_batch(keys_of: Mapping[str, frozenset[str]], words: Mapping[str, set[str]],
                      need: Mapping[str, int]) -> set[str]:
    """The new documents sharing a non-word key, or enough words, with another of them."""
    postings: dict[str, list[str]] = {}
    for doc_id, keys in keys_of.items():
        for key in keys:
            postings.setdefault(key, []).append(doc_id)
    found: set[str] = set()
    for doc_id, keys in keys_of.items():
        if any(len(postings[k]) > 1 for k in keys - words[doc_id]):
            found.add(doc_id)
            continue
        shared: dict[str, int] = {}
        for key in words[doc_id]:
            for other in postings[key]:
                if other != doc_id:
                    shared[other] = shared.get(other, 0) + 1
        if any(n >= min(need[doc_id], need[other]) for other, n in shared.items()):
            found.add(doc_id)
    return found


def _sharing(client: OpenSearch, works: str, filters: Mapping[str, dict[str, Any]]
             ) -> set[str]:
    """The ids of ``filters`` (id -> query) that some indexed work document matches:
    one search, a ``filters`` aggregation, no document fetched."""
    found: set[str] = set()
    names = sorted(filters)
    for start in range(0, len(names), FILTERS_PER_SEARCH):
        part = {name: filters[name] for name in names[start:start + FILTERS_PER_SEARCH]}
        body = {"size": 0, "query": {"bool": {"should": list(part.values()),
                                              "minimum_should_match": 1}},
                "aggs": {"sharing": {"filters": {"filters": part}}}}
        with translate_errors(f"search {works} for new works' blocks"):
            answer = client.search(index=works, body=body)
        found |= {name for name, bucket in answer["aggregations"]["sharing"]["buckets"].items()
                  if bucket["doc_count"] > 0}
    return found


def _matched(atoms: list[Atom], owner: Mapping[str, str], new: set[str],
             word_counts: Mapping[str, int], sizes: Mapping[str, int]) -> set[str]:
    """The new documents with an atom ``decide`` matches to some other atom: resolution
    joins an atom only along a matched pair (``cluster``), so the others stay alone and
    are not resolved at all. Blocking as the resolution would, over every atom read; only
    the pairs with a new atom decided. A new atom with a verified key counts as matched
    (a shared one joins whatever the titles)."""
    feats = [features(atom) for atom in atoms]
    fresh = [owner[atom.work_id] in new for atom in atoms]
    matched = {owner[atom.work_id] for atom, is_new in zip(atoms, fresh, strict=True)
               if is_new and atom.strong_keys}
    for i, j in candidate_pairs_from_titles([f.titles for f in feats],
                                            [f.surnames for f in feats],
                                            counts=word_counts, block_sizes=sizes):
        if not (fresh[i] or fresh[j]) or owner[atoms[i].work_id] == owner[atoms[j].work_id]:
            continue
        pending = {owner[atoms[k].work_id] for k in (i, j) if fresh[k]} - matched
        if pending and decide_remembered(feats[i], feats[j]).match:
            matched |= pending
    return matched
