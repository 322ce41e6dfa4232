"""Generic titles: titles that many different works carry.

Front matter and recurring columns ("Editor's Notes", "Reminiscences on
Influential Papers", "Chair's Message", "Preface") name a slot, not a paper: two
listings with such a title are one work only when they also share an author.
``is_generic_title`` decides, on the title's folded words (``scholarindex.core.text.words``,
plurals read as singular, a trailing number or roman numeral dropped: "Editor's
Notes 3", "Preface II"):

* **Curated**: the words equal one of ``GENERIC_TITLES`` ("editor note", "preface",
  "book review column"...), or begin with one of ``GENERIC_PREFIXES`` ("in
  memoriam ...", "guest editor introduction ...", "book review ...", "review of
  ...", "introduction to the special issue ...", "letter from the ...",
  "message from the ...") followed by fewer than ``PREFIX_REST_WORDS`` (3)
  distinctive words: "In Memoriam: Jim Gray" is generic, "Review of Data on the
  Web: From Relations to Semistructured Data" names one review.
* **Structural**: the title has fewer than ``MIN_DISTINCTIVE_WORDS`` (2) distinctive
  words (``scholarindex.core.titles.distinctive_words``: no function words), e.g. "Standards",
  "Introduction", "Aurora", "On the Web": too little text to name one paper.
* **Front matter**: every distinctive word is one of ``FRONT_MATTER_WORDS``, the words
  journals name their slots with ("Editorial Introduction", "Editorial Notes", "In
  this Issue", "A Note from the Editors", "Guest Editorial Preface", "Letter to the
  Editor", "Author's Reply", "Acknowledgement to Reviewers", "Books Received"): a
  title made of them names a slot, however it combines them. One word of its own
  ("Editorial Processes in Peer Review", "Keynote Speakers and Their Audiences") makes
  it a title.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scholarindex.core import memo
from scholarindex.core.text import words
from scholarindex.core.titles import FUNCTION_WORDS, singular

MIN_DISTINCTIVE_WORDS = 2
PREFIX_REST_WORDS = 3

GENERIC_TITLES = frozenset({
    "abstract", "acknowledgment", "acknowledgement", "announcement", "article", "author index",
    "back matter", "book review", "book review column", "call for paper", "call for participation",
    "career forum", "chair message", "chairman message", "chairs message", "closing remark",
    "column", "concluding remark", "conclusion", "conference report", "correction", "corrigendum",
    "database principle", "distinguished database profile", "editor note", "editorial",
    "editor introduction", "editor letter", "editor message", "erratum", "errata",
    "foreword", "forward", "front matter", "guest editor introduction", "guest editorial",
    "guest editors introduction", "in memoriam", "index", "influential paper",
    "interview", "introduction", "invited talk", "keynote", "keynote address", "keynote talk",
    "letter from the editor", "letter to the editor", "list of reviewer", "message from the chair",
    "message from the editor", "message from the president", "new", "news", "obituary",
    "opening remark", "panel", "panel discussion", "panel session", "position statement",
    "president message", "president letter", "preface", "program committee", "prologue",
    "epilogue", "referee", "reminiscence on influential paper", "report", "research center",
    "reviewer", "standard", "summary", "table of content", "trade press news", "treasurer message",
    "tutorial", "welcome", "welcome message", "workshop report", "sigmod record",
})
# Words of front matter and columns (singular, folded): a title of these alone is generic.
FRONT_MATTER_WORDS = frozenset({
    "abstract", "acknowledgement", "acknowledgment", "address", "announcement", "annual",
    "author", "back", "board", "book", "call", "chair", "chairman", "closing", "column",
    "comment", "commentary", "concluding", "content", "contributor", "correction",
    "correspondence", "corrigendum", "corner", "cover", "desk", "discussion", "editor",
    "editorial", "epilogue", "errata", "erratum", "foreword", "front", "guest", "highlight",
    "index", "interview", "introduction", "introductory", "invited", "issue", "keynote",
    "letter", "matter", "meeting", "memoriam", "message", "new", "news", "note", "notice",
    "obituary", "opening", "page", "panel", "participation", "paper", "preface", "president",
    "program", "prologue", "received", "referee", "remark", "reply", "report", "response",
    "retraction", "review", "reviewer", "secretary", "section", "session", "special",
    "statement", "summary", "table", "talk", "this", "treasurer", "tutorial", "volume",
    "welcome",
})
GENERIC_PREFIXES = (
    "in memoriam", "in memory of", "guest editor introduction", "guest editors introduction",
    "guest editorial", "book review", "review of", "introduction to the special issue",
    "introduction to this special issue", "letter from the", "message from the", "editor note",
    "chair message", "remembering",
)
_PREFIXED = re.compile("^(?:" + "|".join(re.escape(p) for p in GENERIC_PREFIXES) + ")(?: |$)")
_NUMBERING = re.compile(r"(?: (?:\d+|[ivx]+|part \w+|no \d+|vol \d+))+$")


@lru_cache(maxsize=memo.PRINTINGS)
def is_generic_title(title: str) -> bool:
    """Whether a title names a slot many works share (see the module doc)."""
    tokens = [singular(w) for w in words(title)]
    text = _NUMBERING.sub("", " ".join(tokens))
    if not text:
        return True
    if text in GENERIC_TITLES:
        return True
    if prefixed := _PREFIXED.match(text):  # "In Memoriam: Jim Gray", not "Review of <a book>"
        rest = text[prefixed.end():].split()
        return len({w for w in rest if w not in FUNCTION_WORDS}) < PREFIX_REST_WORDS
    distinctive = {w for w in text.split() if w not in FUNCTION_WORDS}
    return len(distinctive) < MIN_DISTINCTIVE_WORDS or all(map(_front_matter, distinctive))


def _front_matter(word: str) -> bool:
    # ``singular`` reads "this" as "thi" and "news" as "new": the word as printed counts too.
    return word in FRONT_MATTER_WORDS or word + "s" in FRONT_MATTER_WORDS
