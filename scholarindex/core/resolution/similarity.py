"""How alike two cleaned titles are, surviving typos, truncation and word order.

A title is read as its folded words (``scholarindex.core.text.words``), plurals as singular
(``scholarindex.core.titles.singular``). Two measures, the larger wins:

* **Soft word overlap** (Dice): 2·matched / (words of a + words of b), where a
  word matches an equal word of the other title, or failing that a word one
  typo away (a letter added, dropped, changed, or two neighbours swapped; both
  at least ``TYPO_MIN_LENGTH`` = 4 letters): "Sytems" is "Systems", "Databse" is
  "Database". Order does not count, so moved words cost nothing.
* **Letter ratio**: ``scholarindex.core.titles.title_similarity`` (rapidfuzz's Indel
  similarity over the letters), which sees words split or joined ("data base" /
  "database"). It runs only when the overlap is at least ``RATIO_FROM`` (0.6) and
  below 1: below that it could only lift a pair no threshold accepts.

``TitleMatch.prefix`` is true when the shorter title (at least
``PREFIX_MIN_WORDS`` = 3 distinctive words) is, word for word with the same
tolerance, the start of the longer one, or the longer one's part before its
first colon; or, the titles as long, one's last word is cut short ("... with S" /
"... with Strudel"). (The part after the colon alone is not enough: "A Database
Perspective on Lotus Notes" is a talk, "Evolution of Groupware: A Database
Perspective on Lotus Notes" a paper.) ``extra`` is how many words the longer title
has beyond the shorter one. ``decide`` reads a prefix as a cut only when
``misprinted`` says the shorter is marked cut (ending mid-word, "... for s…" / "...
for Set-Valued Attributes", or in "…").

``holds``: one title starts with the other, word for word (typos allowed; the
shorter's asides in brackets left out), and goes on with a distinctive word. What
it goes on with tells a paper from another: ``subtitle_added``, the longer title is
the shorter with asides in brackets ("Human papillomavirus (HPV) testing"; a bracket
that names the kind of contribution, "(demo abstract)", is no aside) and/or a
subtitle after a mark (":", " - ", ". ", "? ", ";", ",", "(": "Random Sampling for
Histogram Construction: How much is enough?"); ``another_phrase``, the rest opens a
phrase of its own (``PHRASE_WORDS``: "... and thrombosis", "... in children", "...
after surgery"), another paper; anything else is the printing stopped inside the
title's last phrase ("... over Streaming Sensor" / "... Sensor Data"). (A language
tag, "[French]", is gone by then: ``clean``.) ``cited_before``: one
title is the other with a citation's text before it, naming a person or a year, up to a
full stop, a comma, a semicolon, a closing bracket or an opening quote; or a person's name
glued before it with no mark ("AA Vaisman Temporal Queries in OLAP"). ``contained``:
every word of the shorter title is somewhere in the longer, at least
``CONTAINED_MIN_WORDS`` (4) distinctive, the shorter not being the longer's part after
its colon alone.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from scholarindex.core import memo
from scholarindex.core.text import words
from scholarindex.core.titles import FUNCTION_WORDS, singular, title_similarity

TYPO_MIN_LENGTH = 4
RATIO_FROM = 0.6
PREFIX_MIN_WORDS = 3
# Tests of a pair of titles are remembered for the pairs that come back soon (about 250
# bytes an entry). Not those asked of every candidate pair (``misprinted``, ``holds``,
# ``cited_before``): the writer's judgment and the pass decide each pair once, and on the
# bench site they were never hit (none in 165,777 over 2,500 profiles; ``cited_before``
# none in 51,444 at 1M works), so their entries only held memory.
PAIR_CACHE = 16_384


@dataclass(frozen=True)
class TitleMatch:
    """The similarity of two titles in [0, 1] and whether one is a cut-short other."""

    score: float
    prefix: bool
    extra: int


@lru_cache(maxsize=memo.TITLES)
def title_words(title: str) -> tuple[str, ...]:
    """The title's comparison words: folded, plurals singular (interned, as ``words``)."""
    return tuple(sys.intern(singular(w)) for w in words(title))


@lru_cache(maxsize=memo.TITLES)
def _colon_parts(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    head, sep, tail = title.partition(":")
    return (title_words(head), title_words(tail)) if sep else ((), ())


@lru_cache(maxsize=memo.WORDS)
def variants(word: str) -> frozenset[str]:
    """The word and every spelling of it with one letter deleted (empty for short words).

    Two words of at least ``TYPO_MIN_LENGTH`` letters are one edit apart (a letter
    added, dropped, changed, or two neighbours swapped) exactly when their
    variants meet, so a typo costs a set intersection, not an edit distance.
    """
    if len(word) < TYPO_MIN_LENGTH:
        return frozenset()
    return frozenset({word} | {word[:k] + word[k + 1:] for k in range(len(word))})


@lru_cache(maxsize=memo.WORDS)
def title_variants(word: str) -> frozenset[str]:
    """``variants`` of a title word, and of it printed with an "s" after it. Title words
    are read with plurals singular, so a typo that ends a word in "s" ("sparse" printed
    "spars", read "spar") takes a second letter off: the printing is one typo away."""
    found = variants(word)
    if not found or word.endswith("s"):
        return found
    return found | variants(word + "s")


def one_typo_apart(a: str, b: str) -> bool:
    """Equal, or one typo apart (see the module doc): for names, read as printed."""
    return a == b or not variants(a).isdisjoint(variants(b))


@lru_cache(maxsize=memo.WORD_PAIRS)
def same_word(a: str, b: str) -> bool:
    """Two title words (``title_words``) equal, or one typo apart as printed."""
    if a == b:
        return True
    return not title_variants(a).isdisjoint(title_variants(b))


@lru_cache(maxsize=8192)  # about 4 KB an entry; cheap to make again from ``variants``
def _typo_targets(title_words_: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*(title_variants(w) for w in title_words_))


def soft_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many words of ``a`` match a word of ``b``: equal, or else one typo away."""
    set_b = set(b)
    matched = 0
    targets = None
    for word in a:
        if word in set_b:
            matched += 1
        elif len(word) >= TYPO_MIN_LENGTH:
            if targets is None:
                targets = _typo_targets(b)
            if not title_variants(word).isdisjoint(targets):
                matched += 1
    return min(matched, len(b))


def _is_start(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """``short`` starts ``long``, word for word, its last word possibly cut mid-word."""
    if not short or len(short) > len(long):
        return False
    *head, last = short
    return (all(same_word(x, y) for x, y in zip(head, long, strict=False))
            and (same_word(last, long[len(head)]) or long[len(head)].startswith(last)))


def misprinted(a: str, b: str) -> bool:
    """One title printed two ways, no word changed: word for word with typos, or cut
    short as a results page cuts a long one (the shorter ends mid-word, or in "…" with
    words missing, and starts the other word for word), at least ``PREFIX_MIN_WORDS``
    distinctive words in common. A shorter title that ends in a whole word unmarked may
    be another title ("Online Dynamic Reordering", the journal version of "Online
    Dynamic Reordering for Interactive Data Processing")."""
    (short, short_title), (long, _) = sorted(((title_words(a), a), (title_words(b), b)),
                                             key=lambda p: (len(p[0]), len(p[1])))
    if (len([w for w in short if w not in FUNCTION_WORDS]) < PREFIX_MIN_WORDS
            or not _is_start(short, long)):
        return False
    if len(short) == len(long):
        return True  # typos, or the last word cut mid-word
    last, under = short[-1], long[len(short) - 1]
    return short_title.endswith("…") or (last != under and under.startswith(last))


def _prefix(a: str, b: str, wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    (short, short_title), (long, long_title) = sorted(((wa, a), (wb, b)), key=lambda p: len(p[0]))
    if len([w for w in short if w not in FUNCTION_WORDS]) < PREFIX_MIN_WORDS:
        return False
    if same_word(short[0], long[0]) and _is_start(short, long):
        return True
    head = _colon_parts(long_title)[0]
    if head and head == short:
        return True
    head = _colon_parts(short_title)[0]  # both have subtitles, one subtitle dropped
    return bool(head) and head == long[: len(head)] and len(head) >= PREFIX_MIN_WORDS


def _last_word_cut(a: str, b: str, wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """Titles of as many words, one's last word cut short: "... with S" / "... with Strudel"
    (typos allowed before it, as in ``_is_start``). The last words are compared as
    printed: read as singulars, a plural with a letter dropped ("representatios",
    "representatio") would start the other ("representation")."""
    if wa[-1] == wb[-1] or not all(map(same_word, wa[:-1], wb[:-1])):
        return False
    x, y = sorted((words(a)[-1], words(b)[-1]), key=len)
    return (y.startswith(x)
            and len([w for w in wa[:-1] if w not in FUNCTION_WORDS]) >= PREFIX_MIN_WORDS)


_ROMAN = frozenset({"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii"})


# Most titles print no number: one empty set for all of them, not one each in the caches.
_NONE: frozenset[str] = frozenset()
_DIGITS = re.compile(r"\d+")
_YEAR = re.compile(r"(?:19|20)\d\d")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")


def numbers(title: str) -> frozenset[str]:
    """The title's numbers, also where glued to a word ("SQL3" and "SQL 3" both hold
    3), and its roman numerals: "Part II" -> {"ii"}. Ordinals are left out: "4th" is
    printed as often as "fourth"."""
    found = set()
    for w in words(title):
        if w in _ROMAN:
            found.add(w)
        elif not _ORDINAL.fullmatch(w):
            found.update(_DIGITS.findall(w))
    return frozenset(found) if found else _NONE


_FOLLOW_UP = ("addendum", "erratum", "errata", "corrigendum", "correction", "comment on",
              "comments on", "response to", "reply to", "rejoinder", "a reply to",
              "a response to", "a comment on", "remarks on", "review of", "retraction")


@lru_cache(maxsize=memo.PRINTINGS)
def follow_up(title: str) -> bool:
    """Whether the title names a note on another paper: "Addendum to ...", "Response to ...".

    A trailing "- Book Review" is not read so: listings of a review print it as the
    book's title with or without that suffix.
    """
    text = " ".join(words(title))
    return any(text == m or text.startswith(m + " ") for m in _FOLLOW_UP)


def _unmatched(a: tuple[str, ...], b: tuple[str, ...]) -> list[str]:
    """The words of ``a`` that no word of ``b`` matches, even one typo away; each word
    of ``b`` matches once ("routing ... routing" against one "routing")."""
    left = list(b)
    out = []
    for word in a:
        if word in left:
            left.remove(word)
            continue
        near = next((w for w in left if same_word(word, w)), None)
        if near is not None:
            left.remove(near)
        else:
            out.append(word)
    return out


@lru_cache(maxsize=PAIR_CACHE)
def word_swapped(a: str, b: str) -> bool:
    """Each title has a word the other lacks, at least one of them distinctive (not a
    typo, nor words split or joined: "data base" / "database"; "a" for "the" is no
    swap): "Is Indexing the Bottleneck of X?" and "Is Serving the Bottleneck of X?",
    "Towards X" and "CoSparse: X" are two papers however alike their letters."""
    wa, wb = title_words(a), title_words(b)
    only_a, only_b = _unmatched(wa, wb), _unmatched(wb, wa)
    if not only_a or not only_b or "".join(only_a) == "".join(only_b):
        return False
    return any(w not in FUNCTION_WORDS for w in only_a + only_b)


@lru_cache(maxsize=PAIR_CACHE)
def one_word_swapped(a: str, b: str) -> bool:
    """``word_swapped`` by a single word each way, the rest word for word: a sibling
    title of one template ("Is Sampling the Bottleneck of Distributed X?" /
    "... of Incremental X?"), not a title retyped with other wording."""
    wa, wb = title_words(a), title_words(b)
    return (len(_unmatched(wa, wb)) == 1 == len(_unmatched(wb, wa))
            and word_swapped(a, b))


@lru_cache(maxsize=memo.TITLES)
def _numbers_and_years(title: str) -> tuple[frozenset[str], frozenset[str]]:
    """``numbers``, and those of them that read as years."""
    found = numbers(title)
    return found, (frozenset(n for n in found if _YEAR.fullmatch(n)) if found else _NONE)


def numbers_differ(a: str, b: str) -> bool:
    """Both titles hold numbers and not the same ones: part I and part II, two editions.
    A year one title alone prints is a date, not another number ("Response to the March
    1994 ODMG-93 Commentary" / "Response to the ODMG-93 commentary")."""
    (na, years_a), (nb, years_b) = _numbers_and_years(a), _numbers_and_years(b)
    if not na or not nb:  # most titles print no number: nothing to compare
        return False
    if not years_a or not years_b:  # two years apart stay two numbers ("SQL 1999" / 2003)
        na, nb = na - years_a, nb - years_b
    return bool(na) and bool(nb) and na != nb


def compare_titles(a: str, b: str) -> TitleMatch:
    """The ``TitleMatch`` of two cleaned titles (see the module doc)."""
    wa, wb = title_words(a), title_words(b)
    if not wa or not wb:
        return TitleMatch(0.0, False, 0)
    if wa == wb:
        return TitleMatch(1.0, False, 0)
    extra = abs(len(wa) - len(wb))
    cut = _prefix(a, b, wa, wb) if extra else _last_word_cut(a, b, wa, wb)
    return TitleMatch(title_overlap(a, b), cut, extra)


def title_overlap(a: str, b: str) -> float:
    """``compare_titles``' score alone."""
    wa, wb = title_words(a), title_words(b)
    if not wa or not wb:
        return 0.0
    if wa == wb:
        return 1.0
    score = min(1.0, (soft_overlap(wa, wb) + soft_overlap(wb, wa)) / (len(wa) + len(wb)))
    if RATIO_FROM <= score < 1.0:
        score = max(score, title_similarity(a, b))
    return score


@lru_cache(maxsize=memo.TITLES)
def _first_words(title: str) -> tuple[str, ...]:
    """The title's first word, and its first once its asides are out (``holds``)."""
    found = [words[0] for words in (title_words(title), title_words(_asides_out(title)))
             if words]
    return tuple(dict.fromkeys(found))


def may_start(a: str, b: str) -> bool:
    """False where neither title can start the other (``misprinted``, ``holds``, and so a
    cut or a subtitle): a start begins with the same word, a typo or a cut apart."""
    return any(x == y or x.startswith(y) or y.startswith(x) or same_word(x, y)
               for x in _first_words(a) for y in _first_words(b))



_BRACKETED = re.compile(r"\s*[(\[][^()\[\]]*[)\]]")
# What a bracket says of the contribution ("(demo abstract)", "(extended version)"): no aside.
_KIND_WORDS = frozenset({"demo", "demonstration", "abstract", "poster", "panel", "tutorial",
                         "keynote", "talk", "extended", "version", "invited", "session"})


@lru_cache(maxsize=memo.TITLES)
def _asides_out(title: str) -> str:
    """The title without its asides in brackets ("Human papillomavirus (HPV) testing")."""
    return _BRACKETED.sub(
        lambda m: m.group() if _KIND_WORDS.intersection(words(m.group())) else "", title)


def holds(a: str, b: str) -> bool:
    """One title starts with the other, word for word (typos allowed; the shorter's
    asides in brackets left out), and goes on, with a distinctive word ("The X" is "X"
    reprinted, not another title)."""
    short_title, long_title = sorted((a, b), key=lambda t: len(title_words(t)))
    short = title_words(_asides_out(short_title)) or title_words(short_title)
    long = title_words(long_title)
    if len(short) >= len(long):
        return False
    return _is_start(short, long) and any(w not in FUNCTION_WORDS
                                          for w in long[len(short):])


# Words that open a phrase of their own: a title that goes on with one ("... and
# thrombosis", "... in children", "... after surgery") names a wider or narrower topic.
# Not "by": "... approach by George Chang, ..." is a book review's byline.
PHRASE_WORDS = (FUNCTION_WORDS - {"by"}) | frozenset({
    "after", "before", "during", "following", "among", "amongst", "between", "within",
    "without", "against", "across", "beyond", "plus", "including", "despite", "than", "per",
    "about", "around", "whose", "which", "where", "when", "while", "versus",
})


def another_phrase(a: str, b: str) -> bool:
    """The longer title goes on past the shorter with a phrase of its own: the first word
    after the shorter's words opens one (``PHRASE_WORDS``)."""
    short_title, long_title = sorted((a, b), key=lambda t: len(title_words(t)))
    short = title_words(_asides_out(short_title)) or title_words(short_title)
    long = title_words(long_title)
    return len(long) > len(short) and long[len(short)] in PHRASE_WORDS


_SUBTITLE_MARK = re.compile(r"\s*(?::|\s[-–—]+\s|[.?!;,](?=\s)|[(\[])")


def _same_words(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return len(a) == len(b) and all(map(same_word, a, b))


@lru_cache(maxsize=PAIR_CACHE)
def subtitle_added(a: str, b: str) -> bool:
    """The longer title is the shorter plus asides in brackets and/or a subtitle after a
    mark (see the module doc)."""
    short, long = sorted((a, b), key=lambda t: len(title_words(t)))
    bare_short, bare_long = _asides_out(short), _asides_out(long)
    words_short = title_words(bare_short) or title_words(short)
    if _same_words(words_short, title_words(bare_long)):
        return True  # only asides added
    for mark in _SUBTITLE_MARK.finditer(long):
        head = title_words(_asides_out(long[:mark.start()]))
        if _same_words(words_short, head) and title_words(long[mark.end():]):
            return True
    return False


CONTAINED_MIN_WORDS = 4


@lru_cache(maxsize=PAIR_CACHE)
def contained(a: str, b: str) -> bool:
    """Every word of the shorter title is in the longer (typos allowed), at least
    ``CONTAINED_MIN_WORDS`` of them distinctive, words added around, inside or before
    them ("On building an infrastructure ...: report on the NSF workshop on ..." /
    "Report on the NSF Workshop on Building an Infrastructure ..."); not the longer's
    part after its colon alone."""
    (short, _), (long, long_title) = sorted(((title_words(a), a), (title_words(b), b)),
                                            key=lambda p: len(p[0]))
    if len([w for w in short if w not in FUNCTION_WORDS]) < CONTAINED_MIN_WORDS:
        return False
    return not _unmatched(short, long) and _colon_parts(long_title)[1] != short


# Where a citation's text before the title ends: a full stop, a comma, a semicolon, a
# closing bracket, or the quote the title opens with ("Narasayya. An Efficient ...",
# "JM PATEL, JB YU, Client-Server Paradise", "D. Bailay (2002)'The n-Tier Hub
# Technology'"). Not a colon: before one is a title's main part ("SQL Query
# Optimization: Reordering for ...").
_CITATION_END = re.compile(r"[.,;)]\s*|['\"“”‘’`]+\s*")
_A_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")


def cited_before(title: str, cited: str, names: frozenset[str], dates: bool) -> bool:
    """``cited`` is ``title`` (word for word, typos allowed; at least ``PREFIX_MIN_WORDS``
    distinctive words) with a citation's text before it, up to a mark (``_CITATION_END``):
    text naming one of ``names`` (folded surnames, as ``authors`` reads them:
    "Garcia-Molina. H. Crawling the Hidden Web") or, when ``dates``, printing a year
    ("Dec. 1998.'The Asilomar report on database research'"), or a name glued on with no
    mark (``_named_before``). A front that names no one and no date is no citation's:
    "Evolution of Groupware. A Database Perspective on Lotus Notes" is another paper than
    "A Database Perspective on Lotus Notes"."""
    short, long = title_words(title), title_words(cited)
    if (len(short) >= len(long) or not same_word(short[-1], long[-1])
            or len([w for w in short if w not in FUNCTION_WORDS]) < PREFIX_MIN_WORDS):
        return False
    for mark in _CITATION_END.finditer(cited):
        if not _same_words(short, title_words(cited[mark.end():])):
            continue
        front = words(cited[:mark.start()])
        said = {*front, *(x + y for x, y in pairwise(front))}
        if not said.isdisjoint(names) or (dates and _A_YEAR.search(cited[:mark.start()])):
            return True
    return _named_before(cited, short, names)


# A person's name as a citation prints it: initials ("AA", "K.") and capitalised names.
_NAME_WORD = re.compile(r"(?:[A-Z][a-z\u00c0-\u024f'’-]+|[A-Z]{1,3}\.?|(?:[A-Z]\.){1,3})")
NAME_FRONT_WORDS = 4


def _named_before(cited: str, short: tuple[str, ...], names: frozenset[str]) -> bool:
    """``cited`` is the title ``short`` with a person's name glued before it and no mark
    between ("AA Vaisman Temporal Queries in OLAP", "Ahmed K. Elmagarmid Composing Web
    services ..."): at most ``NAME_FRONT_WORDS`` words, each an initial or capitalised, one
    of them a surname of ``names``."""
    printed = cited.split()
    for count in range(1, min(NAME_FRONT_WORDS, len(printed) - 1) + 1):
        front, rest = printed[:count], " ".join(printed[count:])
        if not all(_NAME_WORD.fullmatch(w) for w in front):
            return False
        if not names.isdisjoint(words(" ".join(front))) and _same_words(short, title_words(rest)):
            return True
    return False
