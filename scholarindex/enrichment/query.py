"""arXiv search queries: many titles in one ``(ti:"..." OR ti:"...")`` request.

A title goes into a query as its plain ASCII words only (see ``text``): no
quotes, LaTeX, dashes or accents, so one odd title cannot make arXiv reject
the whole batch. The words, space-joined, are also the title's cache key.

A renamed paper's listed title is not a phrase of arXiv's latest title, so a
listing the phrases leave unmatched may get a fallback clause,
``(ti:w1 AND ti:w2 AND au:surname)``: its title's two longest distinctive words
and a known person's surname (``fallback_clause``). The clause is its own cache key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from urllib.parse import quote_plus

from scholarindex.core.names import parse_name
from scholarindex.core.text import words
from scholarindex.enrichment.matching import distinctive_words

# A one-word title ("BEAM") matches thousands of entries: not worth a query.
MIN_QUERY_WORDS = 2
# Title words in a fallback clause: with a surname, two long words narrow arXiv's
# answer to a handful of entries, and the fewer words, the likelier a renamed title
# kept them all.
FALLBACK_TITLE_WORDS = 2
# A title with fewer distinctive words cannot pass as renamed (matching.Thresholds).
FALLBACK_MIN_WORDS = 4


def query_key(title: str) -> str:
    """The cache and query key of a title: its plain ASCII words, space-joined."""
    return " ".join(words(title))


def is_queryable(key: str) -> bool:
    """Whether a key has enough words to look up without drowning the batch."""
    return len(key.split()) >= MIN_QUERY_WORDS


def searchable_key(title: str) -> str | None:
    """The title's ``query_key`` if ``is_queryable``, else None.

    The same answer from the title's words at once, without splitting the key again:
    this runs for every listing on the crawl's reactor thread.
    """
    found = words(title)
    return " ".join(found) if len(found) >= MIN_QUERY_WORDS else None


def phrase(key: str) -> str:
    """One title's clause: ``ti:"w1 w2 ..."``."""
    return f'ti:"{key}"'


def fallback_clause(titles: Iterable[str], people: Iterable[str]) -> str | None:
    """The fallback clause of a listing (see the module doc); None when it has none.

    The title with the most distinctive words (ties: the first in sorted order) gives
    its two longest (ties: alphabetical); the first person, in sorted order, with a
    plain-ASCII surname gives the ``au:`` term: the same clause whatever order the
    profiles arrived in.
    """
    ranked = sorted((-len(distinctive_words(t)), t) for t in titles)
    if not ranked or -ranked[0][0] < FALLBACK_MIN_WORDS:
        return None
    usable = sorted((w for w in distinctive_words(ranked[0][1]) if len(w) > 3),
                    key=lambda w: (-len(w), w))[:FALLBACK_TITLE_WORDS]
    surname = next((parsed.surname for parsed in map(parse_name, sorted(people))
                    if parsed and parsed.surname.isascii() and parsed.surname.isalnum()), None)
    if len(usable) < FALLBACK_TITLE_WORDS or surname is None:
        return None
    return "(" + " AND ".join([*(f"ti:{w}" for w in sorted(usable)), f"au:{surname}"]) + ")"


def build_query(keys: Iterable[str]) -> str:
    """The search query for a batch of title keys, or of fallback clauses."""
    clauses = [key if key.startswith("(") else phrase(key) for key in keys]
    if not clauses:
        raise ValueError("a query needs at least one title")
    if len(clauses) == 1:
        return clauses[0]
    return "(" + " OR ".join(clauses) + ")"


def encoded_length(query: str) -> int:
    """Characters the query takes in the URL, where the length limit applies."""
    return len(quote_plus(query))


def batches(keys: Iterable[str], batch_size: int, max_query_chars: int) -> Iterator[list[str]]:
    """Split keys into batches of at most ``batch_size`` titles and ``max_query_chars``.

    A single key longer than the limit still gets a batch of its own: the
    server decides whether it is too long, and the caller records its answer.
    """
    batch: list[str] = []
    for key in keys:
        candidate = [*batch, key]
        too_long = encoded_length(build_query(candidate)) > max_query_chars
        if batch and (len(candidate) > batch_size or too_long):
            yield batch
            batch = [key]
        else:
            batch = candidate
    if batch:
        yield batch
