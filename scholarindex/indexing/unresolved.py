"""A new work that resolution would join to one already indexed: written hidden.

Between a crawl's writes and its resolution pass, a paper printed differently on two
profiles (a typo, mojibake, a title cut short) would be two documents, and a search
would show it twice. So the writer judges each *new* work document before it writes
it: the new works of a batch and their blocking neighbours in the index (read through
the stored blocking keys, ``scholarindex.indexing.neighbourhood``, the index refreshed
first so the previous batch's works are among them) are resolved as the pass would
(``scholarindex.core.resolution.resolve``, with the index's counts), and a new work
that lands in a cluster with a work already indexed, or with a new one of a smaller
id, is written with ``hidden_by`` (that work's id). Every search leaves hidden works
out (``scholarindex.search.query``), so its counts and facets stay those of papers.

The pass decides: it joins the hidden work into its paper's document (the joined
document is not hidden), or, when it keeps them apart after all, clears the mark
(``ResolutionPass._settle``), so nothing stays hidden past the pass. A later listing
of a hidden work keeps it hidden (``documents._work_doc`` carries the field).

The judgment is provisional and one-sided: it never joins anything, so it cannot make
a wrong join the pass would have to undo; at worst a new printing is hidden until the
pass, while its paper shows under the other printing. A failure to read the
neighbours writes the new works visible (the pass still joins them).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.core.resolution import resolve
from scholarindex.core.resolution.blocking import MAX_POSTING
from scholarindex.indexing import neighbourhood
from scholarindex.indexing.atoms import atom_keys, atoms_of, doc_keys
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.scan import refresh

logger = logging.getLogger(__name__)

HIDDEN = "hidden_by"
SOURCE = ["work_id", "work_ids", "listings", "arxiv_id", "arxiv", "enrichment", "resolution",
          HIDDEN]


def hiders(client: OpenSearch, works: str, new: Mapping[str, Mapping[str, Any]]
           ) -> dict[str, str]:
    """For each new work document (id -> document) that resolution would join to another,
    the id it is hidden by. Empty when the index cannot be read (logged)."""
    if not new:
        return {}
    try:
        return _hiders(client, works, new)
    except IndexUnavailable as exc:
        logger.warning("new works written without checking for their papers' other "
                       "printings (the resolution pass joins them): %s", exc)
        return {}


def _hiders(client: OpenSearch, works: str, new: Mapping[str, Mapping[str, Any]]
            ) -> dict[str, str]:
    keys = {k for doc in new.values() for k in doc.get("blocking_keys") or
            doc_keys(atoms_of([doc]))}
    refresh(client, works)
    counts = neighbourhood.counts(client, works, keys)
    ask = [k for k in keys if 0 < counts[k] <= MAX_POSTING]
    docs: dict[str, Mapping[str, Any]] = {
        doc_id: source for doc_id, source in neighbourhood.holders(client, works, ask, SOURCE)
        if doc_id not in new}
    docs.update(new)
    owner: dict[str, str] = {}
    local_atoms: dict[str, int] = {}
    for doc_id, doc in docs.items():
        for atom in atoms_of([doc]):
            owner[atom.work_id] = doc_id
            for key in atom_keys(atom):
                local_atoms[key] = local_atoms.get(key, 0) + 1
    missing = set(local_atoms) - set(counts)
    counts.update(neighbourhood.counts(client, works, missing) if missing else {})
    local_docs: dict[str, int] = {}
    for doc_id, doc in docs.items():
        if doc_id not in new:
            for key in doc_keys(atoms_of([doc])):
                local_docs[key] = local_docs.get(key, 0) + 1
    word_counts, sizes = {}, {}
    for key, atoms in local_atoms.items():
        total = atoms + max(0, counts.get(key, 0) - local_docs.get(key, 0))
        if key.startswith("w:"):
            word_counts[key[2:]] = total
        else:
            sizes[key] = total
    found: dict[str, str] = {}
    for cluster in resolve(atoms_of(docs.values()), counts=word_counts, sizes=sizes).clusters:
        held = {owner[wid] for wid in cluster}
        old = sorted(d for d in held if d not in new)
        for doc_id in held & set(new):
            earlier = old or sorted(d for d in held if d < doc_id)
            if earlier:
                found[doc_id] = docs[earlier[0]].get(HIDDEN) or earlier[0]
    return found
