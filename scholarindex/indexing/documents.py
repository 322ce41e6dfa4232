"""Listings, researcher items and enrichment patches to search documents: pure functions.

Nothing here talks to OpenSearch, and no function changes its inputs: each returns
a new document. A work document is *derived* from its ``listings`` (one entry per
profile that lists the work) plus the enrichment it carries, so:

- merging the same listing twice changes nothing but ``last_seen``;
- merging listings in any order gives the same document (ties are broken by
  content, never by arrival);
- a listing seen later replaces what its profile said before, while an older
  listing (a late dead-letter replay) cannot overwrite a fresher one;
- a profile that no longer lists the work is unlisted (``unlist_listing``), and the
  document goes when no listing remains; a listing seen after the unlist stays. The
  unlist leaves a tombstone (``scholarindex.indexing.tombstones``) so that a listing older than
  it, arriving later, cannot bring the listing back.

Once enrichment has verified an arXiv entry (status ``done``), the entry is one more
source of two derived fields, recomputed with the listings whenever either changes,
so re-enrichment and re-crawls in any order give the same document:

- ``authors``: arXiv's authors join the profiles' (``merged_authors``); a name the
  profiles print differently ("C. Jin") is the arXiv author it can name
  (``scholarindex.core.names.same_person``) when it can name exactly one of them; each person
  keeps their fullest spelling, and the listings keep theirs as provenance;
- ``categories``: arXiv's category codes (``cs.LG``) join the listings' tags.

A later answer without a match (status ``none``) takes them out again.

One paper may come under several ``work_id``s (a preprint title and a later one that
both verify as the same arXiv paper): ``merge_works`` folds such documents into one,
keyed by the smallest id; it keeps every listing with the ``work_id`` it came under,
and ``work_ids`` names every id the document holds (``scholarindex.indexing.identity`` decides
when to merge and writes it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, TypeVar, cast

import orjson

from scholarindex.core.enrichment_status import DONE, ENRICHMENT_STATUSES, PENDING
from scholarindex.core.names import (
    clean_name,
    is_author_name,
    name_key,
    nicest,
    parse_name,
    same_person,
)
from scholarindex.indexing.atoms import atoms_of, doc_keys, evidence, identity_keys
from scholarindex.indexing.errors import InvalidItem
from scholarindex.indexing.shapes import (
    Enrichment,
    ListingEntry,
    ResearcherDoc,
    ResolutionLink,
    WorkDoc,
    fields_of,
)

_STAMPS = ("first_seen", "last_seen")
# Work item fields kept per listing, as provenance and as the input of derived fields.
LISTING_FIELDS = tuple(f for f in fields_of(ListingEntry) if f not in ("has_abstract", *_STAMPS))
# Researcher document fields besides first_seen/last_seen (the ResearcherItem contract).
RESEARCHER_DOC_FIELDS = tuple(f for f in fields_of(ResearcherDoc) if f not in _STAMPS)
# What an enrichment patch may carry under ``arxiv`` (index_mappings/works.json: arxiv).
ARXIV_FIELDS = frozenset({
    "id", "entry_id", "title", "summary", "authors", "primary_category", "categories",
    "published", "updated", "pdf_url", "doi", "journal_ref", "comment",
})


def timestamp(value: str | datetime | None = None) -> str:
    """A canonical UTC timestamp (``2025-01-31T12:00:00.000Z``); now when ``value`` is None.

    One format everywhere, so timestamps compare correctly as strings.
    """
    if value is None:
        moment = datetime.now(UTC)
    elif isinstance(value, datetime):
        moment = value
    else:
        return _timestamp_of_text(value)
    return _canonical_time(moment)


@lru_cache(maxsize=4096)  # a crawl's texts are few (one a page) and come back every merge
def _timestamp_of_text(value: str) -> str:
    return _canonical_time(datetime.fromisoformat(value))


def _canonical_time(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- works -------------------------------------------------------------------------------

def work_doc_from_listing(listing: Mapping[str, Any], seen_at: str | datetime) -> WorkDoc:
    """A new work document holding one listing."""
    return merge_listing(None, listing, seen_at)


def merge_listing(doc: WorkDoc | None, listing: Mapping[str, Any],
                  seen_at: str | datetime, first_seen: str | None = None, *,
                  enrichment: Mapping[str, Any] | None = None,
                  enriched_at: str | datetime | None = None) -> WorkDoc:
    """``doc`` with ``listing`` (a WorkItem as a mapping) merged in, as a new document.

    ``doc`` must hold the listing's ``work_id`` (its own, or one merged into it).
    ``first_seen``: an earlier time the profile was seen listing the work, kept by
    its tombstone while the listing was gone (``scholarindex.indexing.tombstones``).
    ``enrichment``: an enrichment patch obtained at ``enriched_at``, applied as well:
    the result is ``apply_enrichment(merge_listing(doc, listing, ...), enrichment,
    enriched_at)``, with the derived fields computed once instead of twice.
    """
    work_id = _required(listing, "work_id")
    if doc is not None and work_id not in doc_work_ids(doc):
        raise InvalidItem(f"listing of {work_id!r} merged into document {doc.get('work_id')!r}")
    doc_id = _required(doc, "work_id") if doc is not None else work_id
    entry = _listing_entry(listing, timestamp(seen_at))
    if first_seen is not None:
        entry["first_seen"] = min(entry["first_seen"], timestamp(first_seen))
    entries = _entries(doc)
    key = _entry_key(entry, doc_id)
    old = entries.get(key)
    entries[key] = entry if old is None else _combine(old, entry)
    previous: Mapping[str, Any] = doc or {}
    if enrichment is not None:
        if enriched_at is None:
            raise InvalidItem(f"enrichment of {work_id!r} merged without its time")
        # The listing does not touch the enrichment state: deciding it against ``doc``
        # is deciding it against the merged document.
        previous = {**previous, **_enrichment_state(previous, enrichment, enriched_at)}
    return _work_doc(doc_id, [entries[k] for k in sorted(entries)], previous, before=doc or {})


def doc_work_ids(doc: Mapping[str, Any]) -> list[str]:
    """Every ``work_id`` a work document holds (its own, and those merged into it).

    Any mapping: the resolution pass reads documents with a few of their fields."""
    ids = doc.get("work_ids")
    return list(ids) if isinstance(ids, list) and ids else [str(doc.get("work_id"))]


def merge_works(docs: Iterable[WorkDoc],
                links: Iterable[ResolutionLink] = ()) -> WorkDoc:
    """One work document holding every listing of ``docs`` (documents of one paper).

    Its ``work_id`` is the smallest of theirs, so every writer picks the same one; each
    listing keeps the ``work_id`` it came under, and ``work_ids`` names them all. The
    enrichment state is ``_best_enrichment``'s. ``links``: why ids
    joined (``resolution_link``), kept beside the documents' own. Pure, idempotent and
    independent of the order of ``docs``: the result merged again with any of them
    (or with itself) is the result.
    """
    docs = [d for d in docs if d]
    if not docs:
        raise InvalidItem("no work document to merge")
    doc_id = min(_required(d, "work_id") for d in docs)
    entries: dict[tuple[str, str], ListingEntry] = {}
    for doc in docs:
        for key, entry in _entries(doc).items():
            old = entries.get(key)
            entries[key] = entry if old is None else _combine(old, entry)
    previous = {"work_ids": sorted({i for d in docs for i in doc_work_ids(d)}),
                **_best_enrichment(docs), "resolution": _links(docs, links),
                "resolve_pending": _pending_keys(docs)}
    return _work_doc(doc_id, [entries[k] for k in sorted(entries)], previous)


def regroup_works(docs: Iterable[WorkDoc], groups: Iterable[Iterable[str]],
                  links: Iterable[ResolutionLink] = ()) -> list[WorkDoc]:
    """``docs``' listings as one document per group of ``work_id``s, as new documents.

    ``groups`` partitions every ``work_id`` the documents hold (ids a group leaves out
    stay with the document that held them). Each group becomes a document keyed by its
    smallest id. An id is never split: its listings go together. The enrichment state
    stays with the group that holds a document's own ``work_id`` (the id it was looked
    up and verified under); a group that holds none has its enrichment ``pending`` so
    it is looked up again. A group with no listing (every profile unlisted it) makes
    no document. Pure and independent of the order of ``docs`` and ``groups``.
    """
    docs = [d for d in docs if d]
    group_of: dict[str, int] = {}
    ordered = sorted(sorted(set(g)) for g in groups)
    for number, group in enumerate(ordered):
        group_of.update(dict.fromkeys(group, number))
    for doc in docs:  # ids no group names stay with their document's own id
        own = group_of.get(_required(doc, "work_id"))
        if own is None:
            own = len(ordered)
            ordered.append([doc["work_id"]])
            group_of[doc["work_id"]] = own
        for wid in doc_work_ids(doc):
            if wid not in group_of:
                ordered[own].append(wid)
                group_of[wid] = own
    entries: list[dict[tuple[str, str], ListingEntry]] = [{} for _ in ordered]
    for doc in docs:
        for key, entry in _entries(doc).items():
            part = entries[group_of[key[1]]]
            old = part.get(key)
            part[key] = entry if old is None else _combine(old, entry)
    all_links = _links(docs, links)
    out = []
    for number, group in enumerate(ordered):
        if not entries[number]:
            continue
        owners = [d for d in docs if group_of[d["work_id"]] == number]
        state = _best_enrichment(owners) if owners else _pending_state(docs)
        previous = {"work_ids": sorted(group), **state, "resolution": all_links,
                    "resolve_pending": _pending_keys(docs)}
        out.append(_work_doc(min(group), [entries[number][k] for k in sorted(entries[number])],
                             previous))
    return out


def resolution_link(work_id: str, joined_to: str, by: str, score: float | None = None,
                    evidence: Iterable[str] = ()) -> ResolutionLink:
    """Why ``work_id`` is in the document ``joined_to``: ``by`` ``match`` (the resolution
    pass, with its score and evidence), ``manual`` (ops joined them) or ``identity`` (the
    same verified arXiv paper or DOI)."""
    return {"work_id": work_id, "joined_to": joined_to, "by": by,
            "score": None if score is None else round(float(score), 4),
            "evidence": list(evidence)}


def _links(docs: Iterable[WorkDoc], new: Iterable[ResolutionLink]) -> list[ResolutionLink]:
    """The documents' join links, those of the ids in ``new`` replaced by ``new``'s."""
    new = list(new)
    replaced = {link["work_id"] for link in new}
    return [*(link for d in docs for link in d.get("resolution") or ()
              if link.get("work_id") not in replaced), *new]


def _best_enrichment(docs: Iterable[WorkDoc]) -> dict[str, Any]:
    """The enrichment state of documents being joined: a verified match before any
    other answer (one listing matched arXiv's entry, another of the same paper, printed
    with other authors or a journal's year, found none: the paper is still that
    entry), then as ``apply_enrichment`` would keep it."""
    enriched = [d for d in docs if d.get("enrichment")]
    state: Mapping[str, Any] = max(
        enriched, key=lambda d: (_matched(d), *_enrichment_rank(d))) if enriched else {}
    return {"arxiv_id": state.get("arxiv_id"), "arxiv": state.get("arxiv"),
            "enrichment": state.get("enrichment")}


def _pending_state(docs: Iterable[WorkDoc]) -> dict[str, Any]:
    """A part split off documents: to be looked up on arXiv under its own titles."""
    times = [e["updated_at"] for d in docs if (e := d.get("enrichment"))]
    if not times:
        return {"arxiv_id": None, "arxiv": None, "enrichment": None}
    pending: Enrichment = {"status": PENDING, "reason": "split from another work",
                           "updated_at": max(times)}
    return {"arxiv_id": None, "arxiv": None, "enrichment": pending}


def _entries(doc: WorkDoc | None) -> dict[tuple[str, str], ListingEntry]:
    """A document's listings by (profile, work_id); stored listings without ``work_id``
    (written before documents could merge) came under the document's own."""
    if doc is None:
        return {}
    doc_id = str(doc.get("work_id"))
    entries = {}
    for stored in doc.get("listings") or ():
        entry = _clone(stored)
        entry["work_id"] = entry.get("work_id") or doc_id
        entries[_entry_key(entry, doc_id)] = entry
    return entries


def _entry_key(entry: Mapping[str, Any], doc_id: str) -> tuple[str, str]:
    return (str(entry["researcher_id"]), str(entry.get("work_id") or doc_id))


def unlist_listing(doc: WorkDoc | None, researcher_id: str,
                   seen_at: str | datetime, work_id: str | None = None) -> WorkDoc | None:
    """``doc`` without ``researcher_id``'s listing, as a new document; None when none remains.

    ``work_id``: only the listing that came under that id (a document merged from
    several ids may hold one profile's listings under two titles); None: all of them.

    ``seen_at`` is when the profile was seen without the work. A listing seen at or
    after it stays: the profile listed the work again since (a later or concurrent
    crawl), so an unlist that arrives late (a replay) never removes a fresher listing.
    Unlisting what is not listed returns an unchanged copy (idempotent).
    """
    if doc is None:
        return None
    seen = timestamp(seen_at)
    listings = doc.get("listings") or []
    doc_id = str(doc.get("work_id"))

    def unlisted(e: ListingEntry) -> bool:
        return (e.get("researcher_id") == researcher_id and e.get("last_seen", "") < seen
                and work_id in (None, e.get("work_id") or doc_id))

    kept = [_clone(e) for e in listings if not unlisted(e)]
    if len(kept) == len(listings):
        return _clone(dict(doc))
    if not kept:
        return None
    return _work_doc(_required(doc, "work_id"), kept, doc, before=doc)


def apply_enrichment(doc: WorkDoc, patch: Mapping[str, Any], at: str | datetime) -> WorkDoc:
    """``doc`` with an arXiv enrichment result applied, as a new document.

    ``patch`` has ``status`` (pending|done|none|error), ``arxiv`` (metadata or None)
    and ``reason``. An answer beats "pending"; otherwise the newest patch wins and an
    older one (a late replay) is ignored.
    """
    state = _enrichment_state(doc, patch, at)
    # Only arxiv and enrichment change; the rest (listings, authors: the bulk of a
    # document) is shared with ``doc``, as nothing here changes a document it is given.
    new: WorkDoc = {**doc}
    new.update(_clone(state))
    current = {"arxiv": doc.get("arxiv"), "enrichment": doc.get("enrichment")}
    if not _same_derivation(doc, current, state):
        derived = _arxiv_derived(doc.get("listings") or [], state)
        new["categories"], new["authors"] = derived["categories"], derived["authors"]
    if identity_keys(new) != identity_keys(doc):  # a verified key: evidence of resolution
        _mark_changed(new, doc)
    return new


def check_enrichment(patch: Mapping[str, Any]) -> None:
    """Raise ``InvalidItem`` when ``apply_enrichment`` would refuse ``patch``."""
    status = patch.get("status")
    if status not in ENRICHMENT_STATUSES:
        raise InvalidItem(f"enrichment status {status!r} not in {sorted(ENRICHMENT_STATUSES)}")
    _check_arxiv(patch.get("arxiv"))


def _enrichment_state(doc: Mapping[str, Any], patch: Mapping[str, Any],
                      at: str | datetime) -> dict[str, Any]:
    """``arxiv``, ``enrichment`` and ``arxiv_id`` of ``doc`` once ``patch`` is applied."""
    check_enrichment(patch)
    state = {
        "arxiv": _arxiv_meta(patch.get("arxiv")),
        "enrichment": {"status": patch["status"], "reason": patch.get("reason"),
                       "updated_at": timestamp(at)},
    }
    current = {"arxiv": doc.get("arxiv"), "enrichment": doc.get("enrichment")}
    if current["enrichment"] and _enrichment_wins(current, state):
        state = current
    return {**state, "arxiv_id": (state["arxiv"] or {}).get("id") if _matched(state) else None}


def _same_derivation(doc: Mapping[str, Any], current: Mapping[str, Any],
                     state: Mapping[str, Any]) -> bool:
    """True when ``doc``'s derived fields stand as they are under ``state``: it has them,
    and the arXiv authors and categories they come from are ``current``'s (as on a
    re-crawl, or an answer without a match); deriving them again is most of a merge."""
    old, new = _verified_arxiv(current), _verified_arxiv(state)
    return ("authors" in doc and "categories" in doc
            and old.get("authors") == new.get("authors")
            and old.get("categories") == new.get("categories"))


def _matched(state: Mapping[str, Any]) -> bool:
    """True when an enrichment state carries a verified arXiv match."""
    return bool(state.get("enrichment")) and state["enrichment"].get("status") == DONE


def _verified_arxiv(state: Mapping[str, Any]) -> Mapping[str, Any]:
    """The matched arXiv metadata of an enrichment state; empty when there is no match."""
    return (state.get("arxiv") or {}) if _matched(state) else {}


def _arxiv_derived(entries: list[ListingEntry], state: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the listings and a verified arXiv entry derive together."""
    arxiv = _verified_arxiv(state)
    return {
        "categories": _facet([*(e["category"] for e in entries),
                              *_strings(arxiv.get("categories"))]),
        "authors": merged_authors(entries, _strings(arxiv.get("authors"))),
    }


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _listing_entry(listing: Mapping[str, Any], seen_at: str) -> ListingEntry:
    _required(listing, "researcher_id")
    if not isinstance(listing.get("title"), str):
        raise InvalidItem(f"listing of {listing.get('work_id')!r} has no title")
    # Every field but those set below, copied from the item.
    entry = cast(ListingEntry, _copy_fields(listing, LISTING_FIELDS))
    if not (entry["abstract"] or "").strip():
        entry["abstract"] = None
    entry["has_abstract"] = entry["abstract"] is not None
    entry["first_seen"] = seen_at
    entry["last_seen"] = seen_at
    return entry


# A listing or a researcher: what has seen-times and is seen again.
_Seen = TypeVar("_Seen", ListingEntry, ResearcherDoc)


def _combine(old: _Seen, new: _Seen) -> _Seen:
    """One profile's listing seen twice: the later content, the widest seen-interval."""
    winner = new if _newer(new, old) else old
    merged: _Seen = _clone(dict(winner))
    merged["first_seen"] = min(old["first_seen"], new["first_seen"])
    merged["last_seen"] = max(old["last_seen"], new["last_seen"])
    return merged


def _work_doc(work_id: str, entries: list[ListingEntry],
              previous: Mapping[str, Any], before: Mapping[str, Any] | None = None) -> WorkDoc:
    """Every derived field, recomputed from the listings; enrichment carried over.

    ``before``: the document a crawl's change (a listing, an unlist) was folded into
    (``{}``: none); when what resolution reads of it changed, the document is marked
    for the next pass (``_mark_changed``). Without it (joins and regroups) the
    documents' marks are carried in ``previous``."""
    titles = [t for t in (_clean(e["title"]) for e in entries) if t]
    abstracts = [e["abstract"].strip() for e in entries if e["abstract"]]
    years = [e["year"] for e in entries if isinstance(e["year"], int)]
    dates = [e["date"] for e in entries if e["date"]]
    scores = [e["score"] for e in entries if isinstance(e["score"], int | float)]
    derived = _arxiv_derived(entries, previous)
    profiles: dict[str, ListingEntry] = {}
    for e in entries:  # one per profile, from its newest listing (a total order)
        if e["researcher_id"] not in profiles or _newer(e, profiles[e["researcher_id"]]):
            profiles[e["researcher_id"]] = e
    doc: WorkDoc = {
        "work_id": work_id,
        "work_ids": sorted({work_id, *(previous.get("work_ids") or ()),
                            *(e.get("work_id") or work_id for e in entries)}),
        "title": max(titles, key=_title_rank) if titles else "",
        "abstract": max(abstracts, key=lambda a: (len(a), a)) if abstracts else None,
        # A paper's year is when it first appeared anywhere (the preprint).
        "year": min(years) if years else None,
        "date": min(dates) if dates else None,
        "venues": _facet(e["venue"] for e in entries),
        "types": _facet(e["type"] for e in entries),
        "categories": derived["categories"],
        "sources": _facet(e["source"] for e in entries),
        "score": max(scores) if scores else None,
        "has_code": any(e["code"] is True for e in entries),
        "authors": derived["authors"],
        "profile_count": len(profiles),
        "profiles": [
            {"id": e["researcher_id"], "name": e["researcher_name"],
             "url": e["researcher_url"], "source": e["source"]}
            for e in (profiles[k] for k in sorted(profiles))
        ],
        "listings": entries,
        "first_seen": min(e["first_seen"] for e in entries),
        "last_seen": max(e["last_seen"] for e in entries),
        "arxiv_id": previous.get("arxiv_id"),
        "arxiv": _clone(previous.get("arxiv")),
        "enrichment": _clone(previous.get("enrichment")),
    }
    if links := _resolution(work_id, entries, previous):
        doc["resolution"] = links
    if before is not None:
        _mark_changed(doc, before)
        if before.get("hidden_by"):  # a new work judged another's stays so until the pass
            doc["hidden_by"] = before["hidden_by"]
    else:
        _set_keys(doc, previous.get("resolve_pending") or ())
    return doc


def _mark_changed(doc: WorkDoc, before: Mapping[str, Any]) -> None:
    """Store ``doc``'s blocking keys and, when resolution would read it differently from
    ``before`` (or ``before`` was marked), mark it for the next pass with them
    (``resolve_pending``). The mark is the document's keys as they are now, so a
    document is the same whatever order its changes came in; a work that goes entirely
    leaves its keys on its tombstone (``scholarindex.indexing.bulk``)."""
    if evidence(before) == evidence(doc) and before.get("blocking_keys") is not None:
        doc["blocking_keys"] = list(before["blocking_keys"])
        if before.get("resolve_pending"):
            doc["resolve_pending"] = list(doc["blocking_keys"])
        else:
            doc.pop("resolve_pending", None)
        return
    doc["blocking_keys"] = doc_keys(atoms_of([doc]))
    doc["resolve_pending"] = list(doc["blocking_keys"])


def _set_keys(doc: WorkDoc, pending: Iterable[str]) -> None:
    doc["blocking_keys"] = doc_keys(atoms_of([doc]))
    if marks := sorted(set(pending)):
        doc["resolve_pending"] = marks


def _pending_keys(docs: Iterable[WorkDoc]) -> list[str]:
    return sorted({k for d in docs for k in d.get("resolve_pending") or ()})


def _resolution(work_id: str, entries: list[ListingEntry],
                previous: Mapping[str, Any]) -> list[ResolutionLink]:
    """``resolution``: why each id besides ``work_id`` with a listing here joined (one
    link an id, the largest by content, so merges in any order agree); absent when none."""
    links = previous.get("resolution")
    if not links:
        return []
    listed = {e.get("work_id") for e in entries} - {work_id}
    best: dict[str, ResolutionLink] = {}
    for link in links:
        wid = link.get("work_id")
        if wid in listed and (wid not in best or _canonical(link) > _canonical(best[wid])):
            best[wid] = cast(ResolutionLink, {**_clone(link), "joined_to": work_id})
    return [best[k] for k in sorted(best)]


def merged_authors(entries: Iterable[Mapping[str, Any]],
                   arxiv_authors: Iterable[str] = ()) -> list[str]:
    """Every printed author, every profile owner and arXiv's authors, once per person.

    Spellings with the same folded key are one name. With ``arxiv_authors`` (a
    verified match), a name no arXiv author spells the same way joins the one arXiv
    author ``same_person`` accepts, if exactly one does ("C. Jin" and "Chao Jin");
    the ambiguous and the unknown stay as they are. A name shows its ``nicest``
    spelling; a person so joined, their fullest (fewest initials, then the nicest).

    Order: the longest byline (arXiv's or a listing's printed list), then names only
    others know, alphabetically by key. Both are independent of arrival order.
    """
    spellings: dict[str, set[str]] = {}
    bylines: list[list[str]] = []

    def byline_of(names: Iterable[Any]) -> list[str]:
        keys: list[str] = []
        for name in names:
            key = _author_key(name) if isinstance(name, str) else ""
            if key:
                spellings.setdefault(key, set()).add(name)
                if key not in keys:
                    keys.append(key)
        return keys

    anchors = byline_of(arxiv_authors)
    if anchors:
        bylines.append(anchors)
    for entry in entries:
        bylines.append(byline_of(entry.get("authors") or ()))
        byline_of([entry.get("researcher_name")])
    alias = _aliases(spellings, anchors) if anchors else {}
    if alias:  # without any, every byline already names each key once
        for key, target in alias.items():
            spellings[target] |= spellings.pop(key)
        bylines = [list(dict.fromkeys(alias.get(k, k) for k in keys)) for keys in bylines]
    lead = max(bylines, key=lambda keys: (len(keys), keys), default=[])
    in_lead = set(lead)
    order = lead + sorted(k for k in spellings if k not in in_lead)
    joined = set(alias.values())
    return [_fullest(spellings[k]) if k in joined else _nicest_of(spellings[k]) for k in order]


# Every merge of a work derives its authors and facets again from all its listings, so
# the same few names and titles come back over and over: their keys are kept.
@lru_cache(maxsize=16_384)
def _author_key(name: str) -> str:
    """The ``name_key`` of an author's name; empty for no name (blank, "et al.")."""
    return name_key(name) if is_author_name(name) else ""


def _nicest_of(spellings: set[str]) -> str:
    """``nicest``; a name printed one way only (most) is that spelling, cleaned."""
    if len(spellings) == 1:
        for spelling in spellings:
            return _clean(spelling)
    return _nicest(frozenset(spellings))


@lru_cache(maxsize=16_384)
def _nicest(spellings: frozenset[str]) -> str:
    return nicest(spellings)


@lru_cache(maxsize=16_384)
def _clean(text: str) -> str:
    return clean_name(text)


@lru_cache(maxsize=16_384)
def _same_person(a: str, b: str) -> bool:
    return same_person(a, b)


def _aliases(spellings: Mapping[str, set[str]], anchors: list[str]) -> dict[str, str]:
    """Name keys that are another spelling of exactly one anchor (arXiv author) key."""
    alias = {}
    for key in sorted(set(spellings) - set(anchors)):
        people = [anchor for anchor in anchors
                  if any(_same_person(a, b) for a in spellings[key] for b in spellings[anchor])]
        if len(people) == 1:
            alias[key] = people[0]
    return alias


def _fullest(spellings: Iterable[str]) -> str:
    """The spelling with the fewest initials ("Chao Jin" over "C. Jin"), then the nicest."""
    def initials(name: str) -> int:
        parsed = parse_name(name)
        return sum(part.initial for part in parsed.given) if parsed else 0
    names = list(spellings)
    fewest = min(initials(n) for n in names)
    return nicest(n for n in names if initials(n) == fewest)


def _title_rank(title: str) -> tuple[bool, int, str]:
    # The title carrying most information: case kept (not ALL CAPS or all lower),
    # then the most characters (punctuation, accents, subtitle), then the text.
    mixed = title != title.upper() and title != title.lower()
    return (mixed, len(title.replace(" ", "")), title)


def _facet(values: Iterable[Any]) -> list[str]:
    return sorted({_clean(v) for v in values if isinstance(v, str) and v.strip()})


# --- researchers -------------------------------------------------------------------------

def merge_researcher(doc: ResearcherDoc | None, item: Mapping[str, Any],
                     seen_at: str | datetime) -> ResearcherDoc:
    """A researcher document with ``item`` (a ResearcherItem as a mapping) merged in."""
    researcher_id = _required(item, "id")
    if doc is not None and doc.get("id") != researcher_id:
        raise InvalidItem(f"researcher {researcher_id!r} merged into document {doc.get('id')!r}")
    seen = timestamp(seen_at)
    # Every field but those set below, copied from the item.
    new = cast(ResearcherDoc, _copy_fields(item, RESEARCHER_DOC_FIELDS))
    new["kind"] = "researcher"
    new["work_ids"] = _work_ids(new["work_ids"])
    new["first_seen"] = new["last_seen"] = seen
    if doc is None:
        return new
    merged = _combine(doc, new)
    if merged["complete"] is not True and (new["work_ids"], doc.get("work_ids")) != (None, None):
        # The newest page showed only part of its list: keep every work known listed
        # (the newest page's first), so the next complete page can still unlist the
        # ones it lacks. The same whichever of the two arrived first.
        merged["work_ids"] = _work_ids([*(merged["work_ids"] or ()), *(doc.get("work_ids") or ()),
                                        *(new["work_ids"] or ())])
    return merged


def removed_work_ids(stored: ResearcherDoc | None, item: Mapping[str, Any],
                     seen_at: str | datetime) -> list[str]:
    """The works researcher document ``stored`` lists that the page ``item`` no longer lists.

    Only a complete page removes anything, and only when it is not older than what
    the index holds (a replayed old page must not undo a newer one). Sorted.
    """
    listed = item.get("work_ids")
    if stored is None or item.get("complete") is not True or not isinstance(listed, list):
        return []
    if stored.get("last_seen", "") > timestamp(seen_at):
        return []
    return sorted(set(stored.get("work_ids") or ()) - set(listed))


# --- helpers -----------------------------------------------------------------------------

def _required(item: Mapping[str, Any], name: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidItem(f"item has no {name}: {_preview(item)}")
    return value


def _work_ids(values: Iterable[Any] | None) -> list[str] | None:
    """Distinct work ids in first-seen order; None stays None (the page said nothing)."""
    if values is None:
        return None
    return list(dict.fromkeys(v for v in values if isinstance(v, str) and v))


def _newer(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True if listing/profile ``a`` wins over ``b``: seen later, or same time and larger
    content (a total order, so the winner never depends on arrival)."""
    if a["last_seen"] != b["last_seen"]:  # the content is compared only on a tie
        return a["last_seen"] > b["last_seen"]
    return _content_at_least(_content(a), _content(b))


def _enrichment_wins(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True if enrichment state ``a`` wins over ``b``.

    An answer ("done", "none") beats "pending" whatever the times (pending says
    nothing new, so a re-crawl queued again must not erase a match); among equals
    the newest wins, then the larger content.
    """
    if _enrichment_order(a) != _enrichment_order(b):  # the content is compared only on a tie
        return _enrichment_order(a) > _enrichment_order(b)
    return _content_at_least(_state_body(a), _state_body(b))


def _enrichment_order(state: Mapping[str, Any]) -> tuple[bool, str]:
    info = state["enrichment"]
    return (info["status"] != PENDING, info["updated_at"])


def _enrichment_rank(state: Mapping[str, Any]) -> tuple[bool, str, str]:
    return (*_enrichment_order(state), _canonical(_state_body(state)))


def _state_body(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"arxiv": state.get("arxiv"), "enrichment": state["enrichment"]}


def _content(value: Mapping[str, Any]) -> dict[str, Any]:
    """A listing or profile without its seen-times: what breaks a tie between two."""
    return {k: v for k, v in value.items() if k not in ("first_seen", "last_seen")}


def _canonical(value: Mapping[str, Any]) -> str:
    """Content as sortable text, ignoring the seen-times, to break ties deterministically."""
    return json.dumps(_content(value), sort_keys=True, ensure_ascii=False, default=str)


def _content_at_least(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``_canonical(a) >= _canonical(b)``. The same content (every re-crawl and re-sent
    batch ties so) is recognised several times cheaper: ``==`` cannot tell 1 from True,
    orjson's bytes cannot tell NaN from None; equal by both, the canonical texts are."""
    try:
        if a == b and orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
                b, option=orjson.OPT_SORT_KEYS):
            return True
    except TypeError:  # a value orjson does not encode: the canonical text decides
        pass
    return _canonical(a) >= _canonical(b)


def _check_arxiv(arxiv: Any) -> None:
    if arxiv is None:
        return
    if not isinstance(arxiv, Mapping):
        raise InvalidItem(f"enrichment arxiv must be a mapping, got {type(arxiv).__name__}")
    unknown = set(arxiv) - ARXIV_FIELDS
    if unknown:
        raise InvalidItem(f"enrichment arxiv has unmapped fields {sorted(unknown)}")


def _arxiv_meta(arxiv: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Checked arXiv metadata (``_check_arxiv``) as the document keeps it."""
    if arxiv is None:
        return None
    return {k: _jsonable(v) for k, v in sorted(arxiv.items())}


def _clone(value: Any) -> Any:
    """A deep copy of a JSON-shaped value: what a new document takes from an item.

    Dicts and lists (tuples become lists, as JSON has them) are copied, anything
    else is immutable here and kept; several times faster than ``copy.deepcopy``,
    and this runs for every listing. Scalars are kept without a call (most values).
    """
    if isinstance(value, dict):
        return {key: item if type(item) in _SCALARS else _clone(item)
                for key, item in value.items()}
    if isinstance(value, _SEQUENCES):
        return [item if type(item) in _SCALARS else _clone(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
_SEQUENCES = (list, tuple)  # isinstance checks a tuple of types faster than a union


def _copy_fields(source: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """``{name: a copy of source[name]}`` (None when absent), for every name.

    As ``_clone`` of each value, without a call for the scalars (most of them).
    """
    get = source.get
    return {name: value if type(value := get(name)) in _SCALARS else _clone(value)
            for name in names}


def _jsonable(value: Any) -> Any:
    # The arxiv package hands out datetimes; the index wants ISO strings.
    if type(value) in _SCALARS:  # most values (authors' names): kept, without a call each
        return value
    if isinstance(value, datetime):
        return timestamp(value)
    if isinstance(value, list | tuple):
        return [v if type(v) in _SCALARS else _jsonable(v) for v in value]
    return _clone(value)


def _preview(item: Mapping[str, Any]) -> str:
    return json.dumps(dict(item), ensure_ascii=False, default=str)[:200]
