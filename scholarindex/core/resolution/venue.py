"""What a listing's printed venue says about the paper: a preprint, a journal, proceedings.

* **Preprint** (``is_preprint``): the venue is a preprint server or repository
  (arXiv, CoRR, bioRxiv, medRxiv, chemRxiv, SSRN, Research Square, TechRxiv, HAL,
  "preprint", "e-print"): no kind, whatever else it says ("SSRN Electronic Journal").
* **Kind** (``venue_kind``): ``"journal"`` when the venue names a journal, a
  transactions, letters, magazine, bulletin or record series ("VLDB J.", "ACM Trans.
  Database Syst.", "SIGMOD Record"); ``"proceedings"`` when it names a conference,
  proceedings, symposium, workshop or congress ("SIGMOD Conference", "Proc. VLDB");
  ``None`` when it names neither (an acronym alone, "VLDB", says nothing) or both.
"""

from __future__ import annotations

import re

_PREPRINT = re.compile(
    r"\b(?:arxiv|corr|biorxiv|medrxiv|chemrxiv|ssrn|research\s*square|techrxiv|hal"
    r"|preprints?|e-?prints?)\b", re.IGNORECASE)
_JOURNAL = re.compile(
    r"\b(?:journal|j|trans|transactions|letters|lett|magazine|mag|bulletin|bull|record)\b",
    re.IGNORECASE)
_PROCEEDINGS = re.compile(
    r"\b(?:conference|conf|proceedings|proc|symposium|symp|workshop|congress)\b",
    re.IGNORECASE)


def is_preprint(venue: str | None) -> bool:
    """True when the venue is a preprint server or repository (module doc)."""
    return venue is not None and _PREPRINT.search(venue) is not None


def venue_kind(venue: str | None) -> str | None:
    """``"journal"``, ``"proceedings"`` or ``None`` (module doc)."""
    if not venue or is_preprint(venue):
        return None
    journal, proceedings = bool(_JOURNAL.search(venue)), bool(_PROCEEDINGS.search(venue))
    if journal == proceedings:
        return None
    return "journal" if journal else "proceedings"
