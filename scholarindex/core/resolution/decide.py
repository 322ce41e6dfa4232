"""One rule: are two atoms one work?

Evidence read for a pair (every atom's titles are cleaned first, ``clean``; the
best-scoring pair of titles counts):

* the same title: word for word, or the same letters once spaces and marks are out
  (``titles.squashed``: "Information sharingacrossprivate databases" is "Information
  Sharing Across Private Databases" printed with spaces lost; its words, glued, match
  none of the other's).
* ``ratio``: the order-sensitive letter similarity (``scholarindex.core.titles.title_similarity``);
  ``overlap``: the order-free soft word overlap; ``prefix``: one title is the other
  cut short, marked so (ending mid-word or in "…", ``similarity.misprinted``) or
  stopped inside its last phrase (below).
* a title that starts with the other and goes on (``similarity.holds``): it counts
  only as ``subtitle`` when the rest is a subtitle or an aside in brackets
  (``similarity.subtitle_added``), as nothing when the rest opens a phrase of its
  own (``similarity.another_phrase``), and as a title cut short (``prefix``)
  otherwise (the printing stopped inside its last phrase).
* authors (``authors``): ``shared`` people, or a ``conflict`` (a complete author
  list without the surname of the other's profile owner, or two complete lists with
  no surname in common).
* years: ``far`` when both atoms have years and no two are within ``YEAR_TOLERANCE``
  (1) of each other; a missing year says nothing.
* generic titles (``generic.is_generic_title``) on either side.
* numbers: two titles whose numbers or roman numerals differ ("Part I" and "Part
  II", "Version 2" and "Version 3") are never compared as alike; a year only one of
  them prints is a date, not another number (``similarity.numbers_differ``).
* verified strong keys ("arxiv:...", "doi:...").
* venue kinds (``venue.venue_kind``): the journals and proceedings an atom is
  printed in, where the venue says which.

The rule, first that applies:

1. A strong key in common: **match** (score 1). Keys of the same kind on both
   sides and none in common: **apart, conflict**.
   **One profile's listings** (a profile lists both atoms, neither title
   generic): both print venues and none in common, read as one venue printed in
   full, abbreviated or cut (``venue.same_venue``: "J Pediatr Surg" / "Journal of
   Pediatric Surgery", "PLoS ONE" / "PLoS ONE [Electronic Resource]"): **apart,
   conflict** (the owner lists two entries in two venues: a conference paper and
   its journal version, under one title or a variant of it). Otherwise, when they share a
   title (``scholarindex.core.identity.title_key``; ``listing.listing_work_ids`` gave each its
   own id because the profile lists it with another year or venue): one venue
   and years far apart, **apart, conflict** (two issues of a column); no venue
   printed on one side or both and no year in common (both known), **apart**, no
   conflict: the owner's two entries may be a meeting abstract and the paper a
   year later, a report and the paper, or one paper cited under two years, and
   the title says nothing of which, so other listings may still join them; else
   a **strong match** (score 1): one venue in common, only the year differs, or
   a year in common or missing: a list that repeats a title so is no evidence of
   two works; they stay one, as under one id.
2. Titles far apart (``overlap`` < 0.6 and not cut short): **apart**; but where neither
   title is generic, rule 3's verdicts on years (far apart; another year in a journal
   and in proceedings, or in unrelated venues) are read first, titles unseen: two
   works either way, and most candidate pairs of a large index are so.
3. A generic title on either side (``generic.is_generic_title``: front matter and
   columns, "Editorial", "Editor's Notes", "In this Issue"): another year (both
   known), a profile that lists both (one page's two entries are two works), or
   another venue (both printed, ``venue.same_venue``): **apart, conflict**. An
   editor's "Editorial" of each year is its own work, and the cannot-link keeps a
   third listing from chaining two years together.
   Years far apart: **apart, conflict** (a conference paper and its journal
   version, a preprint years before, a column's other year: precision first).
   No year in common (both known), and one atom printed only in journals, the
   other only in proceedings: **apart, conflict** (a conference paper and its
   journal version a year later; the cannot-link keeps a third listing from
   chaining them). No year in common, and both print venues, none related to one
   of the other (``venue.related``: no word of their own in common, "International
   Journal of Rheumatic Diseases" / "Arthritis Care and Research"): **apart,
   conflict** (a meeting abstract and the paper a year later; one paper printed by
   two databases has one venue, or one printed two ways, and a conference and its
   own journal, "VLDB" / "VLDB J.", are related and left to the rules below).
4. One title is a note on a paper ("Addendum to", "Response to", "Review of")
   and the other not: **apart, conflict**.
5. Titles that differ at all (``ratio`` < 1) and no year in common (both known):
   **apart**. A reworded title a year later is, as often as not, the journal
   version of a conference paper: another work. The same title a year apart
   (a preprint and its publication, one printed with mojibake) goes on, and so
   does one title misprinted (``similarity.misprinted``: a typo, or cut short,
   ending mid-word or in "…" with words missing): the printing, not the authors,
   changed it. Such a match is never strong (rule 8), and clustering lets it join
   no two listings whose years other profiles corroborate (``cluster``, step 3c).
   A shorter title ending in a whole word is another title here.
6. An author conflict (``authors``: an owner whose surname the other's complete
   author list lacks, or two complete lists with no surname in common, read loosely):
   **apart, conflict**, whatever the titles. A list printed short is one that says
   so ("et al.", cut), and a misspelt name is read as its person; what is left is
   two papers under one title (a topic many groups write on: "Atypical hemolytic
   uremic syndrome"). Only a verified key (rule 1) joins them.
7. A generic title on either side: **match** (weak) only with at least
   ``GENERIC_SHARED`` (1) shared person, the same year (both known: one person's
   undated "Editorial" could be any year's) and ``ratio`` ≥ ``NEAR``; rule 3 has
   ruled out another year, venue or one profile's two entries. Two people's
   "Introduction" are two works. One editor's four "Editor's Notes" of one year
   are four atoms (``listing.listing_work_ids`` gives each entry its own id), each
   equally like the other site's four: clustering sees the tie and joins none.
8. A shared person: titles near-identical (``ratio`` ≥ ``NEAR``, not cut short),
   and identical or with a year in common or missing: **strong match**. Otherwise,
   one atom annotated as another kind of
   contribution (``clean.contribution_kind``: "Tutorial: Designing an Ultra Highly
   Available DBMS" beside the paper "An Ultra Highly Available DBMS", by the same
   people; not when one title is the other cut short: the annotation at its end
   may be cut off): **apart**. Else **match** when ``ratio`` or ``overlap`` ≥
   ``WITH_AUTHOR`` (0.84), or one title is the other cut short, marked so
   (``prefix``): typos, other wording, moved words; but not when the titles
   differ by exactly one word swapped for another, the rest word for word
   (``similarity.one_word_swapped``: one author's "... of Distributed X" and
   "... of Incremental X" are two papers). A title that starts with the other and
   goes on (``similarity.holds``) is read by what it goes on with: a subtitle or an
   aside (``subtitle``: after ":", " - ", ". ", "? ", ";", ",", "(", or in brackets;
   a language tag is gone by then, ``clean``) matches, no year against it (rule 5
   has ruled out another year; a year missing on one side is no evidence either
   way); a phrase of its own (``similarity.another_phrase``: "... and thrombosis",
   "... in children", "... for an Uncertain World") never does: "Paroxysmal
   nocturnal hemoglobinuria and thrombosis" and "Paroxysmal nocturnal
   hemoglobinuria" are two papers, whoever wrote them, whenever; anything else is
   the printing stopped inside the title's last phrase ("... over Streaming
   Sensor" / "... over Streaming Sensor Data"), read as cut short (``prefix``).
   Also a match when one title holds every word of the other elsewhere than at its
   start, at least ``CONTAINED_MIN_WORDS`` (4) of them distinctive
   (``similarity.contained``), with a year in common: "On building an
   infrastructure for mobile and wireless systems: report on the NSF workshop ..."
   / "Report on the NSF Workshop on Building an Infrastructure for Mobile and
   Wireless Systems".
   Also a match (weak) when one title is the other with a citation's text before it
   that the cleaning left (``similarity.cited_before``: up to a full stop, a comma,
   a semicolon, a closing bracket or an opening quote, not a colon, naming one of
   the two atoms' people or printing a year: "Garcia-Molina. H. Crawling the Hidden
   Web", "Dec. 1998.'The Asilomar report ...'"; or a name glued on with no mark,
   "AA Vaisman Temporal Queries in OLAP"); a front naming no one, "Evolution
   of Groupware. A Database Perspective on Lotus Notes", is another paper.
9. No author evidence either way (no names on one side, or only owners that
   do not meet): **match** (weak) only when near-identical (``ratio`` ≥ ``NEAR``,
   neither title extends the other at its start or end, ``scholarindex.core.titles.extra_words``:
   a title plus "Systems" or a subtitle is a follow-up paper until an author says
   otherwise; a word inside, "improving (the) performance", is not an
   extension), and no word of one swapped for another word of the other
   (``similarity.word_swapped``: "Is Indexing the Bottleneck of X?" / "Is
   Serving the Bottleneck of X?"; a typo or "data base" / "database" is no swap).
   Word order counts here: "Age of Information with Hybrid-ARQ" is not "Hybrid-ARQ
   with Age of Information".
   Also a match (weak) when the citation's text before one printing's title names a
   person of the other atom ("Kiernan. Watermarking relational databases" beside
   Jerry Kiernan's listing): that is author evidence; a year there is not.

A **conflict** is a cannot-link in clustering: no chain of other links may join
the two. A verdict apart on the titles' wording alone (rule 2; rule 8 or 9
finding the titles not alike enough, not one word swapped or a title extended) is
``on_wording``: one printing's damage does that too, and clustering lets a lone
printing past it where most of a group is alike to it (``cluster``, step 3c).
``score`` is the title evidence the rule used (``overlap`` or ``ratio``, 0.9 for
a cut-short title), in [0, 1]; a match is **strong** (may chain in clustering,
``cluster``) when it rests on a strong key, or a shared person and ``ratio`` ≥
``NEAR`` without a cut-short title or a typo across two years; every other match is
weak.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from scholarindex.core import memo
from scholarindex.core.identity import title_key
from scholarindex.core.resolution.authors import People, compare_people, people_of
from scholarindex.core.resolution.clean import clean_title, contribution_kind, repair_text
from scholarindex.core.resolution.generic import is_generic_title
from scholarindex.core.resolution.model import Atom, Decision, Strength
from scholarindex.core.resolution.similarity import (
    RATIO_FROM,
    another_phrase,
    cited_before,
    compare_titles,
    contained,
    follow_up,
    holds,
    may_start,
    misprinted,
    numbers_differ,
    one_word_swapped,
    subtitle_added,
    title_overlap,
    title_words,
    word_swapped,
)
from scholarindex.core.resolution.venue import related, same_venue, venue_kind
from scholarindex.core.titles import extra_words, squashed, title_similarity

YEAR_TOLERANCE = 1
NEAR = 0.93
GENERIC_SHARED = 1
WITH_AUTHOR = 0.84
PREFIX_SCORE = 0.9
ANOTHER_KIND = "another kind of contribution"
SUBTITLE = "a subtitle or an aside added"
HELD = "one title holds the other and more"
CITED = "a citation's authors or date before the title"
SHARED_KEY = "shared key "  # the evidence of a match on a verified arXiv id or DOI


@dataclass(frozen=True)
class Features:
    """What ``decide`` reads of one atom, computed once."""

    atom: Atom
    titles: tuple[str, ...]  # cleaned, distinct
    generic: bool
    follow_up: bool  # "Addendum to ...", "Response to ..."
    people: People
    keys: frozenset[str]
    title_keys: frozenset[str]  # ``title_key`` of each printed title
    profiles: frozenset[str]
    venue_keys: frozenset[str]
    venue_kinds: frozenset[str]  # ``venue.venue_kind`` of each printed venue that has one
    kinds: frozenset[str]  # ``clean.contribution_kind`` of each printed title, "paper" if none

    @property
    def surnames(self) -> frozenset[str]:
        """The surnames of the atom's people (blocking's key for generic titles)."""
        return frozenset(person.surname for person in self.people.everyone)


# Most atoms have no verified key and no venue kind, and are papers: one set for all of
# them (an empty frozenset is 216 bytes, and the writer keeps tens of thousands of these).
_NONE: frozenset[str] = frozenset()
_PAPER = frozenset({"paper"})


def _shared(values: frozenset[str]) -> frozenset[str]:
    return _NONE if not values else _PAPER if values == _PAPER else values


# The index writer judges each new work against its neighbours, and a batch's neighbours
# are mostly the last batch's: their atoms come back equal, and cleaning is most of the
# cost. About 2 KB an entry (``memo.ATOMS``).
@lru_cache(maxsize=memo.ATOMS)
def features(atom: Atom) -> Features:
    """The atom's cleaned evidence."""
    names = tuple(map(repair_text, atom.owners + atom.authors))  # as the title is repaired
    titles = tuple(dict.fromkeys(
        t for t in (clean_title(raw, venues=atom.venues, people=names) for raw in atom.titles)
        if title_words(t)))
    generic = not titles or any(is_generic_title(t) for t in titles)
    return Features(atom, titles, generic, any(follow_up(t) for t in titles), people_of(atom),
                    _shared(frozenset(k.strip().lower() for k in atom.strong_keys if k.strip())),
                    frozenset(title_key(t) for t in atom.titles) - {""},
                    frozenset(atom.profiles),
                    _shared(frozenset(title_key(v) for v in atom.venues) - {""}),
                    _shared(frozenset(filter(None, map(venue_kind, atom.venues)))),
                    _shared(frozenset(contribution_kind(t) or "paper" for t in atom.titles)))


def _years_far(a: Atom, b: Atom) -> bool:
    if not a.years or not b.years:
        return False
    return min(abs(x - y) for x in a.years for y in b.years) > YEAR_TOLERANCE


def years_differ(a: Atom, b: Atom) -> bool:
    """Both atoms print years and none in common."""
    return bool(a.years) and bool(b.years) and not set(a.years) & set(b.years)


def venues_differ(a: Features, b: Features) -> bool:
    """Both atoms print venues and none of one is a venue of the other, printed in full,
    abbreviated or cut (``venue.same_venue``)."""
    if not a.venue_keys or not b.venue_keys or not a.venue_keys.isdisjoint(b.venue_keys):
        return False
    return not any(same_venue(x, y) for x in a.atom.venues for y in b.atom.venues)


def venues_unrelated(a: Features, b: Features) -> bool:
    """Both atoms print venues and none of one is related to one of the other
    (``venue.related``: no word of their own in common)."""
    if not a.venue_keys or not b.venue_keys:
        return False
    return not any(related(x, y) for x in a.atom.venues for y in b.atom.venues)


def _same_year(a: Atom, b: Atom) -> bool:
    return bool(set(a.years) & set(b.years))


def _kinds_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """One side printed only in journals, the other only in proceedings."""
    return len(a) == len(b) == 1 and a != b


def _keys_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    kinds = {k.partition(":")[0] for k in a} & {k.partition(":")[0] for k in b}
    return any({k for k in a if k.startswith(kind + ":")}.isdisjoint(
        {k for k in b if k.startswith(kind + ":")}) for kind in kinds)


class _Titles:
    """The title evidence of two atoms: the best over their pairs of titles. A pair where
    one title holds the other and more (``similarity.holds``) counts only as ``subtitle``
    (the more is a subtitle or an aside) or ``held`` (anything else), never in the rest.

    What most pairs are decided by (overlap, cut short, subtitle, held) is read at once;
    the rest only when a rule asks: most candidate pairs are ruled apart before that."""

    def __init__(self, compared: list[tuple[str, str, float, bool]], overlap: float,
                 prefix: bool, misprinted: bool, subtitle: bool, held: bool,
                 same: bool = False):
        self._compared = compared  # (x, y, overlap, cut short) of each pair that counts
        self.same = same  # a pair of titles word for word the same
        self.overlap = 1.0 if same else overlap
        self.prefix = prefix  # a pair is one title cut short, marked so (``misprinted``)
        self.misprinted = misprinted  # a pair is one title with a typo or cut short
        self.subtitle = subtitle  # a pair is one title and the same with a subtitle or aside
        self.held = held  # a pair is one title and the same with other words added

    @cached_property
    def _ratios(self) -> list[float]:
        return [title_similarity(x, y) if overlap >= RATIO_FROM or prefix else 0.0
                for x, y, overlap, prefix in self._compared]

    @property
    def ratio(self) -> float:
        return 1.0 if self.same else max(self._ratios, default=0.0)

    @property
    def extends(self) -> bool:
        """Every pair is one title and more around it."""
        return not self.same and all(prefix or extra_words(x, y) > 0
                                     for x, y, _, prefix in self._compared)

    @property
    def swapped(self) -> bool:
        """No near-identical pair of titles without a swapped word."""
        return not self.same and all(
            ratio < NEAR or word_swapped(x, y)
            for (x, y, _, _), ratio in zip(self._compared, self._ratios, strict=True))

    @property
    def one_swap(self) -> bool:
        """No alike pair of titles (>= WITH_AUTHOR) but one word swapped."""
        return not self.same and all(
            max(ratio, overlap) < WITH_AUTHOR or one_word_swapped(x, y)
            for (x, y, overlap, _), ratio in zip(self._compared, self._ratios, strict=True))


_SAME_TITLES = _Titles([], 1.0, False, False, False, False, same=True)


def _compare_titles(a: tuple[str, ...], b: tuple[str, ...]) -> _Titles:
    # Kept in locals: most pairs of a crawl are decided here, and an object made per
    # pair of titles is a measurable part of the decision.
    compared = []
    overlap_best = 0.0
    prefix_any = misprinted_any = subtitle = held = False
    for x in a:
        for y in b:
            if title_words(x) == title_words(y) or squashed(x) == squashed(y):
                return _SAME_TITLES
            if numbers_differ(x, y):  # "Part I" and "Part II", "Version 2" and "Version 3"
                continue
            starts = may_start(x, y)
            cut = starts and misprinted(x, y)
            stopped = False  # the printing stopped inside the title's last phrase
            if starts and not cut and holds(x, y):  # rule 8: what the longer adds decides
                if max(x, y, key=lambda t: len(title_words(t))).endswith("…"):
                    cut = True  # what the longer adds was cut short: "... Commerce (p…"
                elif subtitle_added(x, y):
                    subtitle = True
                    continue
                elif another_phrase(x, y):
                    held = True
                    continue
                else:
                    stopped = True
            if cut or stopped:
                match = compare_titles(x, y)
                overlap, prefix = match.score, match.prefix or match.extra > 0
            else:
                overlap, prefix = title_overlap(x, y), False
            compared.append((x, y, overlap, prefix))
            overlap_best = max(overlap_best, overlap)
            prefix_any = prefix_any or prefix
            misprinted_any = misprinted_any or cut
    return _Titles(compared, overlap_best, prefix_any, misprinted_any, subtitle, held)


def _years_tell_apart(a: Features, b: Features) -> str | None:
    """Rule 3 (module doc): what the years, with the venues, say of two works, if anything."""
    if _years_far(a.atom, b.atom):
        return "years more than one apart"
    if years_differ(a.atom, b.atom):
        if _kinds_differ(a.venue_kinds, b.venue_kinds):
            return "a journal and proceedings of another year"
        if venues_unrelated(a, b):
            return "an unrelated venue of another year"
    return None


def _generic_told_apart(a: Features, b: Features) -> str | None:
    """Rule 3 (module doc): what tells two listings of a generic title apart, if anything."""
    if years_differ(a.atom, b.atom):
        return "a generic title of another year"
    if not a.profiles.isdisjoint(b.profiles):
        return "a generic title one profile lists twice"
    if venues_differ(a, b):
        return "a generic title in another venue"
    return None


def _one_profiles_listings(a: Features, b: Features) -> Decision | None:
    """Rule 1b (module doc): two atoms one profile lists under two ids."""
    if a.profiles.isdisjoint(b.profiles) or a.generic or b.generic:
        return None
    venues = bool(a.venue_keys) and bool(b.venue_keys)
    if venues and venues_differ(a, b):
        return Decision(False, 0.0, ("one profile lists both, in two venues",), conflict=True)
    if not a.title_keys & b.title_keys:
        return None
    if venues and _years_far(a.atom, b.atom):
        return Decision(False, 0.0, ("one profile lists the title in two issues",),
                        conflict=True)
    if not venues and years_differ(a.atom, b.atom):  # no venue in common to vouch for it
        return Decision(False, 0.0, ("one profile lists the title in two years",))
    return Decision(True, 1.0, ("one profile lists the title in two years",),
                    strength=Strength.STRONG)


def decide_features(a: Features, b: Features) -> Decision:
    """``decide`` on precomputed ``Features``."""
    if a.keys & b.keys:
        return Decision(True, 1.0, (SHARED_KEY + min(a.keys & b.keys),), strength=Strength.KEY)
    if _keys_differ(a.keys, b.keys):
        return Decision(False, 0.0, ("different verified keys",), conflict=True)
    if decision := _one_profiles_listings(a, b):
        return decision
    # Rule 3's verdicts on years before rule 2: two works whatever the titles say, and
    # comparing titles is most of a decision's cost.
    if not (a.generic or b.generic) and (told := _years_tell_apart(a, b)):
        return Decision(False, 0.0, (told,), conflict=True)
    titles = _compare_titles(a.titles, b.titles)
    if titles.overlap < RATIO_FROM and not titles.prefix and not titles.subtitle:
        if titles.held:
            return Decision(False, 0.0, (HELD,))
        return Decision(False, titles.overlap, (f"titles {titles.overlap:.2f}",),
                        on_wording=True)
    if (a.generic or b.generic) and (told := _generic_told_apart(a, b)):
        return Decision(False, 0.0, (told,), conflict=True)
    if a.follow_up != b.follow_up:
        return Decision(False, 0.0, ("a note on the other paper",), conflict=True)
    if titles.ratio < 1.0 and not titles.misprinted and years_differ(a.atom, b.atom):
        return Decision(False, titles.ratio, (f"title {titles.ratio:.2f}", "another year"))
    people = compare_people(a.people, b.people)
    generic = a.generic or b.generic
    title = f"title {titles.ratio:.2f}"
    if people.conflict:  # printed authors decide: no title overrules them
        return Decision(False, 0.0, ("complete author lists rule it out",), conflict=True)
    shared = f"{people.shared} shared author(s)"
    if generic:
        if (people.shared >= GENERIC_SHARED and titles.ratio >= NEAR
                and _same_year(a.atom, b.atom)):
            return Decision(True, titles.ratio, (title, shared), strength=Strength.GENERIC)
        return Decision(False, titles.ratio, ("generic title without author evidence",))
    if people.shared:
        if (titles.ratio >= NEAR and not titles.prefix
                and (titles.ratio == 1.0 or not years_differ(a.atom, b.atom))):
            return Decision(True, titles.ratio, (title, shared), strength=Strength.STRONG)
        score = max(titles.ratio, titles.overlap)
        # "Tutorial: Designing X" beside the paper "X"; a title cut short may have lost
        # the annotation at its end.
        if a.kinds.isdisjoint(b.kinds) and not titles.prefix:
            return Decision(False, score, (f"title {score:.2f}", shared, ANOTHER_KIND))
        if score >= WITH_AUTHOR and not titles.one_swap:
            return Decision(True, score, (f"title {score:.2f}", shared))
        if titles.prefix:
            return Decision(True, PREFIX_SCORE, ("title cut short", shared))
        if _same_year(a.atom, b.atom) and any(
                contained(x, y) and not holds(x, y) for x in a.titles for y in b.titles):
            return Decision(True, score, ("one title holds the other's words", shared))
        if titles.subtitle and not years_differ(a.atom, b.atom):
            return Decision(True, PREFIX_SCORE, (SUBTITLE, shared))
        names = a.surnames | b.surnames
        if any(cited_before(x, y, names, True) or cited_before(y, x, names, True)
               for x in a.titles for y in b.titles):
            return Decision(True, PREFIX_SCORE, (CITED, shared))
        # Alike but for one word swapped is a verdict on the paper, not on a printing.
        return Decision(False, score, (f"title {score:.2f}", shared),
                        on_wording=score < WITH_AUTHOR)
    if titles.ratio >= NEAR and not titles.extends and not titles.swapped:
        return Decision(True, titles.ratio, (title, "no author evidence"))
    # The citation before one printing names a person of the other: author evidence.
    if any(cited_before(x, y, a.surnames, False) or cited_before(y, x, b.surnames, False)
           for x in a.titles for y in b.titles):
        return Decision(True, PREFIX_SCORE, (CITED, "its author named there"))
    return Decision(False, titles.ratio, (title, "no shared author"),
                    on_wording=titles.ratio < NEAR)


# The index writer judges each batch's new works with their neighbours in the index, and
# a batch's neighbours are mostly the last batch's: most of their pairs come back, equal.
def decide(a: Atom, b: Atom) -> Decision:
    """Whether two atoms are one work (see the module doc)."""
    return decide_features(features(a), features(b))
