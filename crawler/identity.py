"""Stable identifiers: which listings are one work, which page is one researcher.

The work identity rule
----------------------
Two listings are the same work when their titles are the same text once the
differences that profile sites introduce are removed:

* LaTeX markup: ``$t$-designs`` is ``t-designs``; ``\\textit{e.g.}`` is ``e.g.``;
  a symbol command keeps its name (``$\\alpha$`` reads ``alpha``, as does ``α``);
* accents and compatibility forms: ``Pérez`` is ``Perez``, ``ﬁ`` is ``fi``;
* case;
* every character that is not a letter or a digit (punctuation, dashes of any
  kind, whitespace): ``Fault–Tolerant``, ``Fault-Tolerant`` and ``Fault Tolerant``
  are one spelling.

Everything else is kept, in order, so a title that extends another, shares only
its first words, or reorders its words is a different work. The year is not
part of the identity: a preprint and its published version are listed with
different years and are still one work.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import urlsplit

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
# Letters NFKD does not decompose into a base letter plus accents.
LETTER_FOLDS = str.maketrans(
    {"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D",
     "þ": "th", "Þ": "Th", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ı": "i", "&": " and "}
)
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_LATEX_CHARS = re.compile(r"[\\${}~]")


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
    """Lower-case ASCII with accents, ligatures and Greek letters spelled out."""
    if text.isascii():
        return text.replace("&", " and ").casefold()
    text = spell_greek(unicodedata.normalize("NFKC", text)).translate(LETTER_FOLDS)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def title_key(title: str) -> str:
    """The comparison key of a title under the work identity rule (see module doc)."""
    return _NOT_ALNUM.sub("", fold(strip_latex(title)))


def work_id(title: str) -> str:
    """The identifier shared by every listing of one work: 16 hex digits."""
    key = title_key(title) or title.strip()
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def canonical_url(url: str) -> str:
    """A profile URL without scheme, query, fragment, ``www.`` or trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    path = re.sub(r"/(index\.html?)?$", "", parts.path) or "/"
    return f"{host}{path}"


def researcher_id(url: str) -> str:
    """The identifier of the researcher a profile page describes: 16 hex digits.

    Derived from the page's canonical URL, so http and https, a trailing slash
    or tracking parameters do not create a second researcher.
    """
    return hashlib.sha256(canonical_url(url).encode("utf-8")).hexdigest()[:16]


def name_key(name: str) -> str:
    """A person's name folded for de-duplication: case, accents and spacing removed."""
    return " ".join(_NOT_ALNUM.sub(" ", fold(name)).split())
