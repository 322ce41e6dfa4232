"""What a listing's printed venue says about the paper: a preprint, a journal, proceedings.

* **Preprint** (``is_preprint``): the venue is a preprint server or repository
  (arXiv, CoRR, bioRxiv, medRxiv, chemRxiv, SSRN, Research Square, TechRxiv, HAL,
  "preprint", "e-print"): no kind, whatever else it says ("SSRN Electronic Journal").
* **Kind** (``venue_kind``): ``"journal"`` when the venue names a journal, a
  transactions, letters, magazine, bulletin or record series ("VLDB J.", "ACM Trans.
  Database Syst.", "SIGMOD Record"); ``"proceedings"`` when it names a conference,
  proceedings, symposium, workshop or congress ("SIGMOD Conference", "Proc. VLDB");
  ``None`` when it names neither (an acronym alone, "VLDB", says nothing) or both.
* **One venue printed two ways** (``same_venue``): databases print one journal in full,
  abbreviated, cut at a fixed length, or with a note after it. Two venues are one when
  some form of each has as many words as the other's (function words left out), each
  word starting the other's word in its place ("J Pediatr Surg" / "Journal of
  Pediatric Surgery", "Clin Epidemiol" / "Clinical Epidemiology", "Cancer epidemiology,
  biomarkers & preven" / "Cancer Epidemiology Biomarkers and Preve"); a venue's forms
  are the whole and its part before a note ("[", "(", " = ", ":", ". ": "BMJ (Online)",
  "PLoS ONE [Electronic Resource]", "Journal of Clinical Oncology : official journal of
  ...", "Gan to kagaku ryoho. Cancer & chemotherapy"). A word more is another venue:
  "Cancer" / "Cancer Cytopathology", "VLDB" / "VLDB J.", "SIGMOD Conference" / "SIGMOD
  Record".
* **Related venues** (``related``): some word of one, the same or abbreviated, is a word
  of the other, leaving out function words and the words that say a venue's kind
  ("Journal", "Proc."...): "VLDB" / "VLDB J." (a conference and its journal),
  "Journal of Clinical Oncology" / "Journal of Thoracic Oncology". Two venues that are
  not related ("International Journal of Rheumatic Diseases" / "Arthritis Care and
  Research") are two publications, whatever else the listings share.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scholarindex.core.text import words
from scholarindex.core.titles import FUNCTION_WORDS

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


_NOTE = re.compile(r"\s*(?:\[|\(|\s=\s|:|\.\s)")


@lru_cache(maxsize=16_384)
def _forms(venue: str) -> frozenset[tuple[str, ...]]:
    """The venue's words (no function words), whole and before its first note."""
    forms = {tuple(w for w in words(venue) if w not in FUNCTION_WORDS)}
    if note := _NOTE.search(venue):
        forms.add(tuple(w for w in words(venue[:note.start()]) if w not in FUNCTION_WORDS))
    return frozenset(f for f in forms if f)


def _abbreviates(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return len(a) == len(b) and all(x.startswith(y) or y.startswith(x)
                                     for x, y in zip(a, b, strict=True))


# The words of a venue that say its kind or its reach: no evidence of which venue it is.
_KIND_WORDS = frozenset({
    "journal", "j", "trans", "transactions", "letters", "lett", "magazine", "mag", "bulletin",
    "bull", "record", "conference", "conf", "proceedings", "proc", "symposium", "symp",
    "workshop", "congress", "international", "int", "intl", "annual", "ann"})


@lru_cache(maxsize=16_384)
def _own_words(venue: str) -> frozenset[str]:
    return frozenset(w for w in words(venue)
                     if w not in FUNCTION_WORDS and w not in _KIND_WORDS and not w.isdigit())


def related(a: str | None, b: str | None) -> bool:
    """Whether two printed venues share a word of their own (see the module doc); a venue
    without such words is related to any."""
    if not a or not b:
        return True
    x, y = _own_words(a), _own_words(b)
    if not x or not y:
        return True
    return any(v.startswith(w) or w.startswith(v) for v in x for w in y)


def same_venue(a: str | None, b: str | None) -> bool:
    """Whether two printed venues name one venue (see the module doc)."""
    if not a or not b:
        return False
    return any(_abbreviates(x, y) for x in _forms(a) for y in _forms(b))
