"""Author names: a key that folds case, accents and punctuation, and the nicest spelling.

"Chao Jin", "CHAO JIN" and "Cháo  Jin" share the key ``chao jin``; the document keeps
one spelling per key, chosen by ``nicest`` so the result does not depend on which
listing arrived first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Letters that NFKD does not split into base letter plus accent.
_EXTRA_FOLDS = str.maketrans({
    "ø": "o", "Ø": "o", "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "ð": "d", "Ð": "d",
    "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "þ": "th", "Þ": "th", "ı": "i",
})
_NON_WORD = re.compile(r"[^\w]+")
_SPACES = re.compile(r"\s+")
_ET_AL = re.compile(r"^et\.?\s+al\.?$", re.IGNORECASE)


def clean_name(name: str) -> str:
    """Trim and collapse whitespace; keep the spelling otherwise."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", name)).strip()


def name_key(name: str) -> str:
    """Fold case, accents and punctuation: the identity of a name for de-duplication."""
    if name.isascii():  # most names: nothing to decompose
        bare = name
    else:
        decomposed = unicodedata.normalize("NFKD", name.translate(_EXTRA_FOLDS))
        bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", _NON_WORD.sub(" ", bare.casefold().replace("_", " "))).strip()


def is_author_name(name: str) -> bool:
    """False for empty strings and a stray "et al."."""
    cleaned = clean_name(name)
    return bool(name_key(cleaned)) and not _ET_AL.match(cleaned)


def _spelling_rank(spelling: str) -> tuple[bool, int, str]:
    # Prefer mixed case ("Chao Jin" over "CHAO JIN"), then kept accents
    # ("Cháo" over "Chao"); the spelling itself breaks ties so the choice is total.
    mixed = spelling != spelling.upper() and spelling != spelling.lower()
    accents = sum(1 for ch in spelling if ord(ch) > 127)
    return (mixed, accents, spelling)


def nicest(spellings: Iterable[str]) -> str:
    """The best of several spellings of one name; the same whatever their order."""
    return max((clean_name(s) for s in spellings), key=_spelling_rank)
