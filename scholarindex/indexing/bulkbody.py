"""Bulk request bodies built as bytes: one NDJSON entry per action, cut to the limits.

Why not opensearch-py's ``helpers.streaming_bulk``: for every action it copies the
action, serialises both lines to ``str``, encodes them again only to measure them,
joins the strings, and the transport encodes the body once more (docs/performance.md).
Here each document is serialised once, to the bytes that are sent
(``scholarindex.indexing.client.dumps_json``: the client's own JSON, byte for byte), and a
request's body is those bytes joined.

The requests are cut as ``streaming_bulk`` cut them, so a batch makes the same
requests: at most ``max_docs`` actions, and no more than ``max_bytes`` bytes unless
one action alone is larger (it then goes in a request of its own). Entries are
serialised as the requests are cut, so a document that cannot be serialised stops
the round where it stands, as before: the requests before it are sent, and it and
the rest wait for the next round.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from scholarindex.indexing.client import dumps_json

T = TypeVar("T")

Op = Literal["create", "index", "delete"]


@dataclass(frozen=True)
class BulkAction:
    """One line pair of a bulk request: what to do to which document.

    ``seq``: the ``(_seq_no, _primary_term)`` it was read at, for a conditional
    ``index`` or ``delete``; None for an unconditional one (``create`` needs none).
    """

    op: Op
    index: str
    doc_id: str
    source: Mapping[str, Any] | None = None  # the document; None for a delete
    seq: tuple[int | None, int | None] | None = None

    def entry(self) -> bytes:
        """The action's NDJSON lines, each ending in a newline.

        The metadata keys come in the order opensearch-py's bulk helper wrote them.
        """
        meta: dict[str, Any] = {"_id": self.doc_id, "_index": self.index}
        if self.seq is not None:
            meta["if_seq_no"], meta["if_primary_term"] = self.seq
        line = dumps_json({self.op: meta}) + b"\n"
        if self.op == "delete":
            return line
        return line + dumps_json(self.source) + b"\n"


def requests(actions: Iterable[tuple[T, BulkAction]], max_docs: int, max_bytes: int
             ) -> Iterator[tuple[list[T], bytes]]:
    """The bodies of the bulk requests for ``actions``, each with the keys of its actions
    (in the order of the answer's ``items``); serialised one action at a time."""
    keys: list[T] = []
    entries: list[bytes] = []
    size = 0
    for key, action in actions:
        entry = action.entry()
        if entries and (size + len(entry) > max_bytes or len(entries) == max_docs):
            yield keys, b"".join(entries)
            keys, entries, size = [], [], 0
        keys.append(key)
        entries.append(entry)
        size += len(entry)
    if entries:
        yield keys, b"".join(entries)
