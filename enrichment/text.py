"""Titles and names folded to plain lower-case ASCII words.

Profiles and arXiv spell one title differently: LaTeX (``$t$-designs``,
``\\textit{e.g.}``), accents (``Lévy``), Greek letters written either way
(``$\\alpha$`` or ``α``), dashes of every kind, ``&`` for ``and``. Both sides go
through ``words`` so the comparison and the query see the same tokens, and the
query never carries a character arXiv could choke on. LaTeX and Greek letters are
read as the work identity rule reads them (``crawler.identity``); on top of it,
every non-ASCII character separates words and possessives read as their noun.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from crawler.identity import LETTER_FOLDS, spell_greek, strip_latex

# The identity rule's letter folds, plus ß (no casefold here) and curly apostrophes.
_LETTER_FOLDS = {**LETTER_FOLDS, **str.maketrans({"ß": "ss", "’": "'", "‘": "'"})}
# A possessive reads as its noun, so "Shapley's" and "Shapley" agree.
_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s\b")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def fold(text: str) -> str:
    """Lower-case ASCII: LaTeX removed, accents dropped, Greek spelled out."""
    text = strip_latex(text)
    if text.isascii():  # no accents, Greek or curly quotes: only "&" to spell out
        return _POSSESSIVE.sub("", text.replace("&", " and ").lower())
    text = spell_greek(unicodedata.normalize("NFKC", text))
    text = unicodedata.normalize("NFKD", text.translate(_LETTER_FOLDS))
    ascii_text = "".join(ch for ch in text if not unicodedata.combining(ch))
    # Anything still not ASCII (dashes, symbols, other scripts) separates words.
    ascii_text = _NOT_ASCII.sub(" ", ascii_text).lower()
    return _POSSESSIVE.sub("", ascii_text)


@lru_cache(maxsize=16_384)  # titles and names recur: every listing, every candidate check
def words(text: str) -> tuple[str, ...]:
    """The plain ASCII words of ``text``; every other character separates words."""
    return tuple(_WORD.findall(fold(text)))
