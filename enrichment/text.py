"""Titles and names folded to plain lower-case ASCII words.

Profiles and arXiv spell one title differently: LaTeX (``$t$-designs``,
``\\textit{e.g.}``), accents (``Lévy``), Greek letters written either way
(``$\\alpha$`` or ``α``), dashes of every kind, ``&`` for ``and``. Both sides go
through ``words`` so the comparison and the query see the same tokens, and the
query never carries a character arXiv could choke on.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Formatting commands whose argument is the visible text: \textit{x} -> x.
_FORMAT_COMMAND = re.compile(
    r"\\(?:text[a-z]*|emph|math[a-z]*|operatorname|mbox|hbox|bm|boldsymbol|underline)\s*\{([^{}]*)\}"
)
# Accent commands on one letter: \"o, \'{e}, \v{c}.
_SYMBOL_ACCENT = re.compile(r"\\[\"'`^~=.]\s*\{?([A-Za-z])\}?")
_LETTER_ACCENT = re.compile(r"\\[uvHckrbd]\{([A-Za-z])\}")
# Any other command reads as its name, as Greek letters must: \alpha -> alpha.
_OTHER_COMMAND = re.compile(r"\\([A-Za-z]+)")
# Letters that NFKD does not split into a base letter plus an accent.
_LETTER_FOLDS = str.maketrans(
    {"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D",
     "þ": "th", "Þ": "Th", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ß": "ss",
     "ı": "i", "&": " and ", "’": "'", "‘": "'"}
)
# A possessive reads as its noun, so "Shapley's" and "Shapley" agree.
_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s\b")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def strip_latex(text: str) -> str:
    """Remove LaTeX markup and keep the text it renders."""
    previous = None
    while previous != text:  # nested formatting: \textbf{\emph{x}}
        previous = text
        text = _FORMAT_COMMAND.sub(r"\1", text)
    text = _SYMBOL_ACCENT.sub(r"\1", text)
    text = _LETTER_ACCENT.sub(r"\1", text)
    text = _OTHER_COMMAND.sub(r" \1 ", text)
    return text.replace("$", "").replace("{", "").replace("}", "").replace("~", " ")


def _spell_greek(text: str) -> str:
    """Spell Greek letters out (α -> alpha), as the LaTeX spelling reads."""
    out = []
    for ch in text:
        if "\u0370" <= ch <= "\u03ff":
            name = unicodedata.name(ch, "")
            if " LETTER " in name:
                out.append(f" {name.rsplit(' ', 1)[-1].lower()} ")
                continue
        out.append(ch)
    return "".join(out)


def fold(text: str) -> str:
    """Lower-case ASCII: LaTeX removed, accents dropped, Greek spelled out."""
    text = _spell_greek(unicodedata.normalize("NFKC", strip_latex(text)))
    text = unicodedata.normalize("NFKD", text.translate(_LETTER_FOLDS))
    ascii_text = "".join(ch for ch in text if not unicodedata.combining(ch))
    # Anything still not ASCII (dashes, symbols, other scripts) separates words.
    ascii_text = _NOT_ASCII.sub(" ", ascii_text).lower()
    return _POSSESSIVE.sub("", ascii_text)


@lru_cache(maxsize=16_384)  # titles and names recur: every listing, every candidate check
def words(text: str) -> tuple[str, ...]:
    """The plain ASCII words of ``text``; every other character separates words."""
    return tuple(_WORD.findall(fold(text)))
