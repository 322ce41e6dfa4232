"""Verification: is an arXiv entry really the work a profile lists?

arXiv matches titles loosely, so every candidate must pass three checks before
its metadata is attached; a wrong arXiv id is worse than none.

* Title: ``title_similarity`` is difflib's ratio (2·matches / total length) over
  the titles' letters and digits once folded (``text.words`` joined without
  spaces), so case, punctuation, dashes, accents, LaTeX and "multi-lingual" vs
  "multilingual" cost nothing, while every extra, missing or reordered word
  does. The default threshold, 0.90, lets through the small edits arXiv's latest
  version may carry (a plural, one word added to a ten-word title) and rejects
  a title that extends another by a phrase ("... for Low-Light Image
  Enhancement": 0.68), swaps its halves (0.75) or shares only a prefix.
* Year: the entry's first-version or latest-version year is within
  ``year_tolerance`` (1) of a year the profiles give. A listing without a year
  needs a near-identical title instead (``title_without_year``, 0.97).
* Authors: at least one known person (profile owner or printed author) is
  among the entry's authors, spelled any way ``names.same_person`` accepts.

Two candidates that pass equally well are ambiguous, and neither is attached.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from core.names import shared_authors
from core.text import words
from enrichment.models import Listing


@dataclass(frozen=True)
class Thresholds:
    """The documented limits a candidate must meet (see the module doc)."""

    title: float = 0.90
    title_without_year: float = 0.97
    year_tolerance: int = 1
    max_extra_words: int = 1


@dataclass(frozen=True)
class Verdict:
    """The verified entry (metadata dict) or None, and why."""

    match: dict | None
    reason: str


@dataclass
class Check:
    """How one candidate fared against one listing."""

    candidate: dict
    title: float
    year_gap: int | None
    authors: list[str]
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


def title_similarity(a: str, b: str, at_least: float = 0.0) -> float:
    """Similarity in [0, 1] of two titles once folded (see the module doc).

    With ``at_least``, titles that cannot reach it get a cheap upper bound below
    it instead of the exact figure: enough to reject them, and most candidates
    are rejected, so the quadratic matcher runs only on near-matches.
    """
    squashed_a, squashed_b = "".join(words(a)), "".join(words(b))
    if not squashed_a or not squashed_b:
        return 0.0
    if squashed_a == squashed_b:
        return 1.0
    total = len(squashed_a) + len(squashed_b)
    bound = 2 * min(len(squashed_a), len(squashed_b)) / total  # every letter of the shorter
    if bound >= at_least > 0:
        bound = 2 * sum((Counter(squashed_a) & Counter(squashed_b)).values()) / total
    if bound < at_least:
        return bound
    return SequenceMatcher(None, squashed_a, squashed_b, autojunk=False).ratio()


def extra_words(a: str, b: str) -> int:
    """How many words the longer title adds around the whole of the shorter one (0 if not)."""
    short, long = sorted((words(a), words(b)), key=len)
    span = len(short)
    if not span or span == len(long):
        return 0
    if any(long[i:i + span] == short for i in range(len(long) - span + 1)):
        return len(long) - span
    return 0


def _entry_years(candidate: dict) -> set[int]:
    years = set()
    for stamp in (candidate.get("published"), candidate.get("updated")):
        if stamp and stamp[:4].isdigit():
            years.add(int(stamp[:4]))
    return years


def _year_gap(listing: Listing, candidate: dict) -> int | None:
    gaps = [abs(a - b) for a in listing.years for b in _entry_years(candidate)]
    return min(gaps) if gaps else None


def check_candidate(listing: Listing, candidate: dict, limits: Thresholds) -> Check:
    """Run the three checks of one candidate against one listing."""
    entry_title = candidate.get("title", "")
    needed = limits.title if listing.years else limits.title_without_year
    score = max(title_similarity(title, entry_title, needed) for title in listing.titles)
    gap = _year_gap(listing, candidate)
    if score < needed:  # another paper: its authors need no comparing (most candidates)
        # ``score`` is an upper bound here (see title_similarity).
        return Check(candidate, score, gap, [],
                     [f"title similarity at most {score:.2f} < {needed:.2f}"])
    extension = min(extra_words(title, entry_title) for title in listing.titles)
    authors = shared_authors(listing.people, candidate.get("authors") or [])
    result = Check(candidate, score, gap, authors)
    if extension > limits.max_extra_words:
        result.problems.append(f"one title extends the other by {extension} words")
    if listing.years and (gap is None or gap > limits.year_tolerance):
        years = "/".join(str(y) for y in sorted(_entry_years(candidate))) or "unknown"
        result.problems.append(f"year {years} not within {limits.year_tolerance} of "
                               f"{'/'.join(str(y) for y in sorted(listing.years))}")
    if not authors:
        result.problems.append("no author in common")
    return result


def _rank(check: Check) -> tuple[float, int, int]:
    return (round(check.title, 3), -(check.year_gap or 0), len(check.authors))


def verify(listing: Listing, candidates: list[dict], limits: Thresholds | None = None) -> Verdict:
    """The one candidate that passes every check, or None with the reason."""
    limits = limits or Thresholds()
    unique = {c["id"]: c for c in candidates}
    if not unique:
        return Verdict(None, "no arXiv entry with this title")
    checks = [check_candidate(listing, c, limits) for c in unique.values()]
    passed = sorted((c for c in checks if c.passed), key=_rank, reverse=True)
    if not passed:
        closest = max(checks, key=lambda c: c.title)
        return Verdict(None, f"closest arXiv entry {closest.candidate['id']} rejected: "
                             + "; ".join(closest.problems))
    best = passed[0]
    if len(passed) > 1 and _rank(passed[1]) == _rank(best):
        ids = ", ".join(c.candidate["id"] for c in passed if _rank(c) == _rank(best))
        return Verdict(None, f"ambiguous: equally good arXiv entries {ids}")
    year = "/".join(str(y) for y in sorted(_entry_years(best.candidate)))
    return Verdict(best.candidate, f"matched {best.candidate['id']}: title {best.title:.2f}, "
                                   f"year {year}, shared author {best.authors[0]}")
