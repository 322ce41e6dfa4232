"""How the query text matches works, and how the matches rank. Pure functions.

Match levels (``LEVELS``), tried in order until one matches any work:

1. ``all``: every word, in ``simple_query_string`` syntax ("phrases", -exclude,
   ``OR``), as typed. What a search has always meant.
2. ``most``: the plain words, at least most of them (``MOST_WORDS``: all when
   there are one or two, all but one up to five, three quarters beyond). A title
   pasted from another catalogue, with one word more, less or different, or cut
   short mid-word, still finds the paper. Excluded (-word) words stay excluded.
3. ``fuzzy``: as ``most``, each word within an edit distance that grows with its
   length (``FUZZINESS``: none up to two letters, one up to five, two beyond), and
   the last word also as a prefix (a title cut short as the user types it).

A level is asked only when the one before matched no work at all for the text
(filters aside: a text that matches works the filters exclude asks to drop a
filter, not to loosen the words). The page and the API say which level answered.

Before matching, the text is read as it prints: HTML entities (``&#961;`` is ρ)
and LaTeX markup (``$\\rho$``, ``\\textit{x}``) become their text
(``scholarindex.core.text.strip_latex``); the index folds case and accents on both sides.

Ranking, the same at every level (``ranking_clauses``), adds to the score of a
work that already matched, never decides whether it matches:

* each word scores in its best field (``WORD_FIELDS``: title 3×, an earlier
  title, arXiv's title, author and profile names, the abstract), so a word in the
  title counts more than the same word in the abstract;
* the title holding the words as a phrase, within ``PHRASE_SLOP`` moved
  positions, adds ``PHRASE_BOOST``; each pair of neighbouring words found
  together in the title adds ``PAIR_BOOST`` (the first ``MAX_PAIRS`` pairs, each
  a phrase query of its own): words close together in a title
  beat the same words scattered over an abstract;
* a person named in the query: every query word found in a work's author or
  profile names adds ``NAME_BOOST``, and an initial followed by a surname
  ("J. Smith", "j smith") adds ``INITIAL_BOOST`` when a name has both (accents
  folded by the index, so "Muller" finds "Müller").

Ties keep the page order of ``scholarindex.search.query.SORT_CLAUSES`` (newest, then id).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from scholarindex.core.text import fold, strip_latex

LEVELS = ("all", "most", "fuzzy")
# Where a word may match, and how much each field counts (the best field counts).
WORD_FIELDS = ("title^3", "listings.title^2", "arxiv.title^2", "profiles.name.text^2",
               "authors.text^2", "abstract")
NAME_FIELDS = ("profiles.name.text", "authors.text")
# At most two words: all of them; three to five: all but one; more: three quarters.
MOST_WORDS = "2<-1 5<75%"
FUZZINESS = "AUTO"  # OpenSearch's AUTO: 0 edits for 1-2 letters, 1 for 3-5, 2 beyond
FUZZY_PREFIX_LENGTH = 1  # the first letter is taken as typed: far fewer terms to expand
PHRASE_SLOP = 2
PHRASE_BOOST = 6.0
PAIR_BOOST = 1.5
NAME_BOOST = 2.0
INITIAL_BOOST = 3.0
MAX_WORDS = 16  # a pasted abstract is not a query: the first words decide
MAX_PAIRS = 6  # each pair is a phrase query: the first six carry nearly all the gain

_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+\d*);")
# Words as the index's standard tokenizer sees them, near enough: letters and digits
# of any script, with inner apostrophes kept out (the index splits on them).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_EXCLUDED = re.compile(r"(?:(?<=\s)|^)-(\"[^\"]*\"|\S+)")


def read_as_printed(q: str) -> str:
    """The query as it prints: HTML entities and LaTeX markup become their text."""
    text = html.unescape(q) if _ENTITY.search(q) else q
    out = []
    for token in text.split():
        # Per typed word: "$\\alpha$-Stable" reads "alpha Stable"; a dash inside a word
        # is a hyphen, so only a dash the user typed first can mean "exclude".
        pieces = strip_latex(token).split() if "\\" in token or "$" in token else [token]
        out += pieces[:1] + [p.lstrip("-") for p in pieces[1:] if p.lstrip("-")]
    return " ".join(out)


@dataclass(frozen=True)
class QueryWords:
    """The plain words of a query (operators gone) and the words it excludes."""

    words: tuple[str, ...]
    excluded: tuple[str, ...]

    @classmethod
    def parse(cls, q: str) -> QueryWords:
        """Split ``q`` (already ``read_as_printed``) into wanted and excluded words."""
        excluded = [w for m in _EXCLUDED.finditer(q) for w in _WORD.findall(m.group(1))]
        rest = _EXCLUDED.sub(" ", q)
        rest = re.sub(r"(?<!\S)(OR|AND)(?!\S)", " ", rest)
        wanted = [w.lower() for w in _WORD.findall(rest)]
        return cls(tuple(wanted[:MAX_WORDS]), tuple(w.lower() for w in excluded))


def loose_levels(q: str) -> tuple[str, ...]:
    """The levels to try, in order, after ``all`` matched nothing: none without words;
    ``most`` only from three words (most of one or two words is all of them)."""
    words = QueryWords.parse(read_as_printed(q)).words
    if not words:
        return ()
    return LEVELS[1:] if len(words) >= 3 else LEVELS[2:]


def strict_clause(query_text: str) -> dict[str, Any]:
    """Level ``all``: every word, operators honoured (``query_text`` in sqs syntax)."""
    return {"simple_query_string": {
        "query": query_text,
        "fields": list(WORD_FIELDS),
        "default_operator": "and",  # "a -b" means a and not b, not "a or not b"
        "flags": "AND|OR|NOT|PHRASE|PRECEDENCE|WHITESPACE|ESCAPE",
    }}


def loose_clause(words: QueryWords, level: str) -> dict[str, Any]:
    """Level ``most`` or ``fuzzy``: most words, each in its best field."""
    per_word = [_word_clause(w, fuzzy=level == "fuzzy",
                             prefix=level == "fuzzy" and i == len(words.words) - 1)
                for i, w in enumerate(words.words)]
    clause: dict[str, Any] = {"bool": {"should": per_word,
                                       "minimum_should_match": MOST_WORDS}}
    if words.excluded:
        clause["bool"]["must_not"] = [
            {"multi_match": {"query": w, "fields": list(WORD_FIELDS)}} for w in words.excluded]
    return clause


def _word_clause(word: str, *, fuzzy: bool, prefix: bool) -> dict[str, Any]:
    """One word in its best field (``dis_max``: the best field counts, not their sum)."""
    queries: list[dict[str, Any]] = []
    for spec in WORD_FIELDS:
        name, _, boost = spec.partition("^")
        match: dict[str, Any] = {"query": word, "boost": float(boost or 1)}
        if fuzzy and len(word) > 2:
            match |= {"fuzziness": FUZZINESS, "prefix_length": FUZZY_PREFIX_LENGTH}
        queries.append({"match": {name: match}})
        if prefix and len(word) > 1:  # a prefix is not analyzed: fold it as the index does
            queries.append({"prefix": {name: {"value": fold(word),
                                              "boost": float(boost or 1) / 2}}})
    return {"dis_max": {"queries": queries}}


def ranking_clauses(words: QueryWords) -> list[dict[str, Any]]:
    """Scores added to works that already match (see the module doc): phrase, pairs, names."""
    w = words.words
    if not w:
        return []
    text = " ".join(w)
    clauses: list[dict[str, Any]] = []
    if len(w) > 1:
        clauses.append({"match_phrase": {"title": {"query": text, "slop": PHRASE_SLOP,
                                                   "boost": PHRASE_BOOST}}})
    for a, b in list(pairwise(w))[:MAX_PAIRS]:
        clauses.append({"match_phrase": {"title": {"query": f"{a} {b}", "slop": 1,
                                                   "boost": PAIR_BOOST}}})
    clauses += [{"match": {name: {"query": text, "boost": NAME_BOOST}}} for name in NAME_FIELDS]
    for initial, surname in pairwise(w):
        if len(initial) == 1 and initial.isalpha() and len(surname) > 1:
            clauses += [{"bool": {"must": [{"prefix": {name: {"value": fold(initial)}}},
                                           {"match": {name: surname}}],
                                  "boost": INITIAL_BOOST}} for name in NAME_FIELDS]
    return clauses


def text_query(q: str, query_text: str, level: str) -> dict[str, Any]:
    """The query part of a search at match ``level``; every work when there is no text."""
    if not q.strip():
        return {"match_all": {}}
    words = QueryWords.parse(q)
    if level == "all" or not words.words:
        match = strict_clause(query_text)
    else:
        match = loose_clause(words, level)
    should = ranking_clauses(words)
    if not should:
        return match
    return {"bool": {"must": [match], "should": should}}
