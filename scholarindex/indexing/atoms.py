"""A work document's atoms (the evidence of each ``work_id`` it holds) and their keys.

Shared by the resolution pass (``scholarindex.indexing.resolution``), which resolves
atoms, and the document builder (``scholarindex.indexing.documents``), which stores
each document's blocking keys (``blocking_keys``) and marks what changed since the last
pass (``resolve_pending``) so an incremental pass finds it through the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from scholarindex.core.enrichment_status import DONE
from scholarindex.core.identity import split_dois
from scholarindex.core.resolution import Atom
from scholarindex.core.resolution.blocking import (
    pair_key_words,
    pair_keys,
    stored_keys,
    title_terms,
)
from scholarindex.core.resolution.clean import cited_year
from scholarindex.core.resolution.decide import Features, features

STRONG_PREFIX = "s:"  # a verified key among the stored keys: atoms sharing one always meet


def identity_keys(doc: Mapping[str, Any] | None) -> list[str]:
    """The keys that make documents one work: a verified arXiv id and each of its DOIs."""
    if not doc or (doc.get("enrichment") or {}).get("status") != DONE:
        return []
    keys = []
    if isinstance(doc.get("arxiv_id"), str) and doc["arxiv_id"]:
        keys.append(f"arxiv:{doc['arxiv_id']}")
    doi = (doc.get("arxiv") or {}).get("doi")
    if isinstance(doi, str):  # a field may hold several DOIs: one key each
        keys.extend(f"doi:{one.lower()}" for one in split_dois(doi))
    return keys


def atoms_of(docs: Iterable[Mapping[str, Any]]) -> list[Atom]:
    """One atom per ``work_id`` with listings: its listings' evidence, sorted by id.

    An id holds the verified arXiv id and DOI of its document when it is the
    document's own id or joined it by that identity; ids the pass joined by matching
    do not, so a later pass can still take them out again.
    """
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for doc in docs:
        doc_id = str(doc["work_id"])
        matched = {link["work_id"] for link in doc.get("resolution") or ()
                   if link.get("by") != "identity"}
        strong = tuple(identity_keys(doc))
        for entry in doc.get("listings") or ():
            wid = str(entry.get("work_id") or doc_id)
            grouped.setdefault(wid, []).append(entry)
            keys[wid] = () if wid in matched else strong
    return [_atom(wid, grouped[wid], keys[wid]) for wid in sorted(grouped)]


class DocAtoms:
    """``atoms_of`` one document at a time, each document read once: the writer's
    judgment reads the atoms of the same documents several times over (counts, pairs,
    decisions), and building them is a good part of its cost."""

    def __init__(self) -> None:
        # By the document's identity; the document is kept so that its id is not reused.
        self._read: dict[int, tuple[Mapping[str, Any], list[Atom]]] = {}

    def __call__(self, doc: Mapping[str, Any]) -> list[Atom]:
        read = self._read.get(id(doc))
        if read is None or read[0] is not doc:
            read = self._read[id(doc)] = (doc, atoms_of([doc]))
        return read[1]

    def of(self, docs: Iterable[Mapping[str, Any]]) -> list[Atom]:
        """The atoms of every document (a work_id belongs to one document)."""
        return [atom for doc in docs for atom in self(doc)]


def _atom(work_id: str, listings: list[Mapping[str, Any]], strong: tuple[str, ...]) -> Atom:
    def values(name: str) -> tuple[Any, ...]:
        return tuple(sorted({e[name] for e in listings if e.get(name) not in (None, "")}))

    titles = values("title")
    years = tuple(y for y in values("year") if isinstance(y, int))
    # A citation printed as a title gives its year in brackets, where no listing prints one.
    if not years and (year := cited_year(titles)) is not None:
        years = (year,)
    return Atom(
        work_id=work_id,
        titles=titles,
        authors=tuple(sorted({a for e in listings for a in e.get("authors") or ()
                              if isinstance(a, str)})),
        authors_truncated=any(e.get("authors_truncated") for e in listings),
        owners=values("researcher_name"),
        years=years,
        venues=values("venue"),
        types=values("type"),
        strong_keys=strong,
        profiles=values("researcher_id"),
    )


def evidence(doc: Mapping[str, Any] | None) -> tuple[Atom, ...]:
    """What resolution reads of a document, comparable: equal when a pass would see
    nothing new in it (timestamps and positions do not count)."""
    return tuple(atoms_of([doc])) if doc and doc.get("listings") else ()


def doc_keys(atoms: Iterable[Atom]) -> list[str]:
    """Every stored blocking key of the atoms (``blocking.stored_keys``), and their
    verified keys; sorted."""
    keys: set[str] = set()
    for atom in atoms:
        keys |= atom_keys(atom)
    return sorted(keys)


@lru_cache(maxsize=4096)  # a re-crawled page merges the same atoms again
def atom_keys(atom: Atom) -> frozenset[str]:
    """One atom's stored blocking keys (see ``doc_keys``)."""
    feats = features(atom)
    return frozenset(stored_keys(feats.titles, feats.surnames)
                     | {STRONG_PREFIX + k.strip().lower() for k in atom.strong_keys if k.strip()})


def atom_words(atom: Atom, features_of: Callable[[Atom], Features] = features
               ) -> frozenset[str]:
    """The atom's distinctive title words: what blocking files it under."""
    return frozenset(title_terms(features_of(atom).titles))


def filed_pairs(docs: Iterable[list[Atom]], counts: Mapping[str, int],
                words: Callable[[Atom], frozenset[str]] = atom_words) -> dict[str, int]:
    """Each pair of rare words (``blocking.pair_keys``, read with ``counts``: word ->
    atoms) the documents' atoms (each document's list) file under, and how many of
    those atoms do."""
    filed: dict[str, int] = {}
    for atoms in docs:
        for atom in atoms:
            for key in pair_keys(words(atom), counts):
                filed[key] = filed.get(key, 0) + 1
    return filed


def holding_both(docs: Iterable[list[Atom]], keys: Iterable[str],
                 words: Callable[[Atom], frozenset[str]] = atom_words
                 ) -> tuple[dict[str, int], dict[str, int]]:
    """For each pair key, the atoms and the documents among ``docs`` (each document's
    atoms) holding both of its words: the part of the pair's block these documents
    make (its size in the index is the documents holding both, ``neighbourhood.counts``)."""
    keys = set(keys)
    wanted = {word for key in keys for word in pair_key_words(key)}
    atoms_holding: dict[str, set[int]] = {}
    docs_holding: dict[str, set[int]] = {}
    n = 0
    for d, atoms in enumerate(docs):
        for atom in atoms:
            for word in words(atom) & wanted:
                atoms_holding.setdefault(word, set()).add(n)
                docs_holding.setdefault(word, set()).add(d)
            n += 1
    atoms_both: dict[str, int] = {}
    docs_both: dict[str, int] = {}
    for key in keys:
        first, second = pair_key_words(key)
        atoms_both[key] = len(atoms_holding.get(first, set()) & atoms_holding.get(second, set()))
        docs_both[key] = len(docs_holding.get(first, set()) & docs_holding.get(second, set()))
    return atoms_both, docs_both
