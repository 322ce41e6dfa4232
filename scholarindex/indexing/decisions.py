"""Ops' decisions about which work_ids are one paper, kept in the cluster.

The resolution pass (``scholarindex.indexing.resolution``) decides from the evidence; where it is
wrong, ops override it with ``scholarindex works keep-apart A B`` or ``works join A B``.
A decision names two ``work_id``s (the ids of the listings, as the API shows them), is
stored in the plain index ``{prefix}work-decisions`` (``_id`` ``apart:A|B`` or
``join:A|B``, ``A < B``) and every later pass respects it: a kept-apart pair is never
in one work, whatever links them; a joined pair always is. The two kinds exclude each
other: recording one removes the other for the same pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.documents import timestamp
from scholarindex.indexing.indices import DECISIONS_INDEX, ensure_plain_index
from scholarindex.indexing.scan import refresh, scan

APART = "apart"
JOIN = "join"
KINDS = (APART, JOIN)


@dataclass(frozen=True, order=True)
class Decision:
    """Keep two work_ids apart, or join them."""

    kind: str
    a: str
    b: str
    note: str = ""
    decided_at: str = ""

    @property
    def pair(self) -> tuple[str, str]:
        return (self.a, self.b)


def decision(kind: str, first: str, second: str, note: str = "") -> Decision:
    """A decision about two distinct ids, the pair in canonical order."""
    if kind not in KINDS:
        raise ValueError(f"decision kind {kind!r} is not one of {', '.join(KINDS)}")
    first, second = first.strip(), second.strip()
    if not first or not second or first == second:
        raise ValueError("a decision needs two different work ids")
    a, b = sorted((first, second))
    return Decision(kind, a, b, note, timestamp())


def _doc_id(kind: str, a: str, b: str) -> str:
    return f"{kind}:{a}|{b}"


class DecisionStore:
    """The decisions in ``{prefix}work-decisions`` (the index is created on first use)."""

    def __init__(self, client: OpenSearch, prefix: str, layout: IndexLayout = DEFAULT_LAYOUT):
        self.client = client
        self.prefix = prefix
        self.layout = layout
        self._index: str | None = None

    @property
    def index(self) -> str:
        if self._index is None:
            self._index = ensure_plain_index(self.client, self.prefix, DECISIONS_INDEX,
                                             self.layout)
        return self._index

    def record(self, new: Decision) -> None:
        """Store ``new``; the opposite decision on the same pair, if any, is removed."""
        other = JOIN if new.kind == APART else APART
        body = {"kind": new.kind, "work_ids": [new.a, new.b], "note": new.note,
                "decided_at": new.decided_at}
        with translate_errors("record a work decision"):
            self.client.index(index=self.index, id=_doc_id(new.kind, new.a, new.b), body=body,
                              refresh=True)
            self.client.delete(index=self.index, id=_doc_id(other, new.a, new.b),
                               refresh=True, ignore=404)

    def forget(self, first: str, second: str) -> int:
        """Remove every decision on the pair; how many there were."""
        a, b = sorted((first, second))
        removed = 0
        with translate_errors("forget a work decision"):
            for kind in KINDS:
                answer = self.client.delete(index=self.index, id=_doc_id(kind, a, b),
                                            refresh=True, ignore=404)
                removed += answer.get("result") == "deleted"
        return removed

    def all(self) -> list[Decision]:
        """Every decision, sorted."""
        return sorted(self._read())

    def _read(self) -> Iterator[Decision]:
        refresh(self.client, self.index)  # a decision recorded a moment ago counts
        for hit in scan(self.client, self.index, {"query": {"match_all": {}}}):
            source = hit["_source"]
            a, b = sorted(source["work_ids"])
            yield Decision(source["kind"], a, b, source.get("note") or "",
                           source.get("decided_at") or "")
