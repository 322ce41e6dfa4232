"""Verification: is an arXiv entry really the work a profile lists?

arXiv matches titles loosely, so every candidate must pass three checks before
its metadata is attached; a wrong arXiv id is worse than none.

* Title: ``title_similarity`` is the Indel similarity (2·longest common
  subsequence / total length, ``scholarindex.core.titles``) over the titles'
  letters and digits once folded (``text.words`` joined without spaces), so
  case, punctuation, dashes, accents, LaTeX and "multi-lingual" vs "multilingual"
  cost nothing, while every extra, missing or reordered word does. The default
  threshold, 0.90, lets through the small edits arXiv's latest version may carry
  (a plural, one word added to a ten-word title) and rejects a title that extends
  another by a phrase ("... for Low-Light Image Enhancement": 0.68), swaps its
  halves or shares only a prefix.
* Year: the entry's first-version or latest-version year is within
  ``year_tolerance`` (1) of a year the profiles give. A listing without a year
  needs a near-identical title instead (``title_without_year``, 0.97).
* Authors: at least one known person (profile owner or printed author) is
  among the entry's authors, spelled any way ``names.same_person`` accepts.

A renamed paper: arXiv returns only a paper's latest title, so a profile may list
an earlier one, with words added, changed or dropped since; its similarity falls
below 0.90. Such a candidate still passes when the listing has a year and the
title evidence is strong on both sides (``title_containment`` over
``distinctive_words``: the title's words without function words such as "of",
"for", "via", a plural read as its singular):

* at least 80 % (``renamed_containment``) of the listed title's distinctive words
  are in arXiv's title, and the listed title has at least 4 of them
  (``renamed_min_words``), so a short generic title ("Deep Learning for Graphs")
  is never matched by containment alone;
* at least half (``renamed_coverage``) of arXiv's distinctive words are in the
  listed title, so a much longer title built around the listed words is another
  paper;
* and the year and author checks above, both required: a different paper that
  shares most words but not an author, or an entry with exactly the listed title
  by other people or years apart, is never attached. A title that extends the
  other by more than one word at its start or end is still refused (a follow-up
  paper: "... for Multilingual Machine Translation").

Two candidates that pass equally well are ambiguous, and neither is attached; a
candidate passing by similarity ranks before one passing as renamed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scholarindex.core.names import shared_authors
from scholarindex.core.titles import (
    distinctive_words,
    extra_words,
    title_containment,
    title_similarity,
)
from scholarindex.enrichment.models import Listing


@dataclass(frozen=True)
class Thresholds:
    """The documented limits a candidate must meet (see the module doc)."""

    title: float = 0.90
    title_without_year: float = 0.97
    year_tolerance: int = 1
    max_extra_words: int = 1
    renamed_containment: float = 0.80
    renamed_coverage: float = 0.50
    renamed_min_words: int = 4


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
    renamed: float | None = None  # title containment, when it passes as a renamed paper

    @property
    def passed(self) -> bool:
        return not self.problems


def renamed_title(listed: str, entry: str, limits: Thresholds) -> float | None:
    """``title_containment`` if ``entry`` can be a renamed ``listed`` (see the module doc)."""
    if len(distinctive_words(listed)) < limits.renamed_min_words:
        return None
    contained = title_containment(listed, entry)
    if (contained < limits.renamed_containment
            or title_containment(entry, listed) < limits.renamed_coverage):
        return None
    return contained


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
    score = max(title_similarity(title, entry_title) for title in listing.titles)
    gap = _year_gap(listing, candidate)
    renamed = None
    if score < needed and listing.years:  # an earlier title of the paper?
        renamed = max((r for t in listing.titles
                       if (r := renamed_title(t, entry_title, limits)) is not None), default=None)
    if score < needed and renamed is None:  # another paper: no comparing authors (most)
        return Check(candidate, score, gap, [],
                     [f"title similarity {score:.2f} < {needed:.2f}"])
    extension = min(extra_words(title, entry_title) for title in listing.titles)
    authors = shared_authors(listing.people, candidate.get("authors") or [])
    result = Check(candidate, score, gap, authors, renamed=renamed)
    if extension > limits.max_extra_words:
        result.problems.append(f"one title extends the other by {extension} words")
    if listing.years and (gap is None or gap > limits.year_tolerance):
        years = "/".join(str(y) for y in sorted(_entry_years(candidate))) or "unknown"
        result.problems.append(f"year {years} not within {limits.year_tolerance} of "
                               f"{'/'.join(str(y) for y in sorted(listing.years))}")
    if not authors:
        result.problems.append("no author in common")
    return result


def _rank(check: Check) -> tuple[bool, float, float, int, int]:
    return (check.renamed is None, round(check.title, 3), round(check.renamed or 0.0, 3),
            -(check.year_gap or 0), len(check.authors))


def verify(listing: Listing, candidates: list[dict], limits: Thresholds | None = None) -> Verdict:
    """The one candidate that passes every check, or None with the reason."""
    if not candidates:  # most titles found nothing on arXiv
        return Verdict(None, "no arXiv entry with this title")
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
    title = (f"renamed title, {best.renamed:.2f} of its words" if best.renamed is not None
             else f"title {best.title:.2f}")
    return Verdict(best.candidate, f"matched {best.candidate['id']}: {title}, "
                                   f"year {year}, shared author {best.authors[0]}")
