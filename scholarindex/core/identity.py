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

Generic titles are the exception (``scholarindex.core.resolution.is_generic_title``: front matter
and columns such as "Preface", "Editor's Notes", "Keynote Address"): different people
print the same one for different papers, so the title alone says nothing. A generic
title's ``work_id`` also holds its listing's own evidence (the profile, the year, the
venue): two people's "Introduction" are two works, and the resolution pass
(``scholarindex.indexing.resolution``) joins listings of one such paper only on author evidence.

These ids are where works start; the resolution pass then joins the listings of one
paper that print its title differently (a typo, a title cut short, mojibake).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

from scholarindex.core.text import fold

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_NOT_ALNUM_BYTES = bytes(c for c in range(128) if not re.fullmatch("[0-9a-z]", chr(c)))


def title_key(title: str) -> str:
    """The comparison key of a title under the work identity rule (see module doc)."""
    folded = fold(title)
    if folded.isascii():  # most titles: deleting bytes is several times cheaper than the regex
        return folded.encode("ascii").translate(None, _NOT_ALNUM_BYTES).decode("ascii")
    return _NOT_ALNUM.sub("", folded)


def work_id(title: str) -> str:
    """The identifier shared by every listing of one work: 16 hex digits."""
    return key_work_id(title_key(title) or title.strip())


def key_work_id(key: str) -> str:
    """``work_id`` of a title whose key (``title_key``, or the stripped title when that
    is empty) the caller has already."""
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


# A metadata field may hold several DOIs: "10.1/a 10.1/b", "10.1/a; 10.1/b", "10.1/a,10.1/b".
# Whitespace separates; ";" and "," only before the next "10.": old SICI DOIs hold a ";"
# of their own ("10.1002/(SICI)1097-4636(199710)37:1<1::AID-JBM1>3.0.CO;2-4").
_DOI_SEPARATORS = re.compile(r"\s+|[;,]\s*(?=10\.)")


def split_dois(value: str | None) -> list[str]:
    """The DOIs of a DOI field, in order, each once (case kept; DOIs compare case-blind)."""
    seen: dict[str, str] = {}
    for piece in _DOI_SEPARATORS.split(value or ""):
        doi = piece.strip(";,")
        if doi and doi.lower() not in seen:
            seen[doi.lower()] = doi
    return list(seen.values())
