"""The states of a work's arXiv enrichment (``enrichment.status`` in items and documents)."""

from __future__ import annotations

from typing import Final, Literal, get_args

DONE: Final = "done"  # a verified arXiv entry is attached
NONE: Final = "none"  # verified: arXiv has no such entry, or none that passes the checks
PENDING: Final = "pending"  # arXiv could not be asked yet; a later run completes it
# The reason of a "pending" work the crawl's arXiv stage is looking up in the background.
QUEUED: Final = "queued"
# Accepted in documents; no lookup answers it (an arXiv failure stays "pending").
ERROR: Final = "error"

# What one lookup answers.
Status = Literal["done", "none", "pending"]
# What a document may hold.
ENRICHMENT_STATUSES: Final = frozenset({*get_args(Status), ERROR})
