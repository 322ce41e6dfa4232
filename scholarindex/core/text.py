"""Text folded for comparison: one reading of LaTeX, accents, Greek and case.

Profiles and arXiv print one title or name in many ways: LaTeX markup
(``$t$-designs``, ``\\textit{e.g.}``, ``Erd\\H{o}s``), accents and ligatures
(``Pérez``, ``ﬁ``), Greek letters written either way (``$\\alpha$`` or ``α``),
curly apostrophes, ``&`` for ``and``. ``fold`` removes all of those differences
and nothing else; the keys built on it (``scholarindex.core.identity.title_key`` for work
identity, ``words`` for arXiv queries, ``scholarindex.core.names.name_key`` for people) each
decide which of the remaining characters matter.
"""

from __future__ import annotations

import html
import re
import sys
import unicodedata
from functools import lru_cache
from html.entities import html5

# Formatting commands whose argument is the visible text: \textit{x} -> x.
_LATEX_FORMAT = re.compile(
    r"\\(?:text[a-z]*|emph|math[a-z]*|operatorname|mbox|hbox|bm|boldsymbol|underline|overline)"
    r"\s*\{([^{}]*)\}"
)
# Accent commands on one letter: \"o, \'{e}, \v{c}.
_SYMBOL_ACCENT = re.compile(r"\\[\"'`^~=.]\s*\{?([A-Za-z])\}?")
_LETTER_ACCENT = re.compile(r"\\[uvHckrbd]\{([A-Za-z])\}")
# Any other command reads as its name: \alpha -> alpha, \times -> times.
_LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)")
_LATEX_CHARS = re.compile(r"[\\${}~]")
# Letters NFKD does not decompose into a base letter plus accents, and the
# punctuation that has one ASCII reading.
_LETTER_FOLDS = str.maketrans({
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D",
    "þ": "th", "Þ": "Th", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ı": "i", "ß": "ss",
    "’": "'", "‘": "'", "&": " and ",
})
# A possessive reads as its noun, so "Shapley's" and "Shapley" agree.
_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s\b")
_WORD = re.compile(r"[a-z0-9]+")


# An HTML character reference spelled out in full: "&#228;", "&#xE4;", "&auml;".
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def decode_entities(text: str) -> str:
    """HTML entities shown as text (``Lud&#228;scher``, ``Jos&eacute;``) as the characters they
    stand for.

    A page that escaped its data twice shows the entity itself; read as text its ``;``
    would split a name. Only complete references are decoded (``html.unescape`` on each),
    so a bare ``&`` and an unknown ``&name;`` stay as printed.
    """
    if "&" not in text:
        return text
    return _ENTITY.sub(_character, text)


def _character(reference: re.Match[str]) -> str:
    text = reference.group()
    # html.unescape reads "&notanentity;" as "¬anentity;": only whole names are entities.
    if text[1] != "#" and text[1:] not in html5:
        return text
    return html.unescape(text)


def strip_latex(text: str) -> str:
    """Remove LaTeX markup, keeping the text it renders."""
    if not _LATEX_CHARS.search(text):  # most titles: nothing to do, and this runs per listing
        return text
    previous = None
    while previous != text:  # nested formatting: \textbf{\emph{x}}
        previous = text
        text = _LATEX_FORMAT.sub(r"\1", text)
    text = _SYMBOL_ACCENT.sub(r"\1", text)
    text = _LETTER_ACCENT.sub(r"\1", text)
    text = _LATEX_COMMAND.sub(r" \1 ", text)
    return text.replace("$", "").replace("{", "").replace("}", "").replace("~", " ")


def spell_greek(text: str) -> str:
    """Spell Greek letters out as LaTeX does (α -> alpha), so both forms agree."""
    out = []
    for ch in text:
        if "\u0370" <= ch <= "\u03ff":
            name = unicodedata.name(ch, "")
            if name.startswith("GREEK") and " LETTER " in name:
                out.append(" " + name.rsplit(" ", 1)[-1].lower() + " ")
                continue
        out.append(ch)
    return "".join(out)


def fold(text: str) -> str:
    """Lower case, LaTeX read as its text, accents dropped, Greek spelled out.

    Letters of other scripts are kept (lower-cased); what a caller does with them
    is the caller's rule.
    """
    text = strip_latex(text)
    if text.isascii():  # most titles and names: only "&" to spell out
        return text.replace("&", " and ").casefold()
    text = spell_greek(unicodedata.normalize("NFKC", text)).translate(_LETTER_FOLDS)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# Titles and names recur within a page (keys, then every candidate check); across pages
# rarely, so a larger cache buys little and holds megabytes.
@lru_cache(maxsize=4096)
def words(text: str) -> tuple[str, ...]:
    """The plain ASCII words of ``text``, possessives read as their noun.

    Every other character separates words, so the words are safe inside an
    arXiv query phrase whatever the title held. Each word is interned: the memo caches
    of titles hold their words, and one string a word rather than one a title cuts
    their entries to about a third (``scholarindex.core.memo``).
    """
    folded = fold(text)
    if "'s" in folded:  # most titles have no possessive: skip the look-behind scan
        folded = _POSSESSIVE.sub("", folded)
    return tuple(map(sys.intern, _WORD.findall(folded)))
