"""arXiv search queries: many titles in one ``(ti:"..." OR ti:"...")`` request.

A title goes into a query as its plain ASCII words only (see ``text``): no
quotes, LaTeX, dashes or accents, so one odd title cannot make arXiv reject
the whole batch. The words, space-joined, are also the title's cache key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from urllib.parse import quote_plus

from core.text import words

# A one-word title ("BEAM") matches thousands of entries: not worth a query.
MIN_QUERY_WORDS = 2


def query_key(title: str) -> str:
    """The cache and query key of a title: its plain ASCII words, space-joined."""
    return " ".join(words(title))


def is_queryable(key: str) -> bool:
    """Whether a key has enough words to look up without drowning the batch."""
    return len(key.split()) >= MIN_QUERY_WORDS


def phrase(key: str) -> str:
    """One title's clause: ``ti:"w1 w2 ..."``."""
    return f'ti:"{key}"'


def build_query(keys: Iterable[str]) -> str:
    """The search query for a batch of title keys."""
    clauses = [phrase(key) for key in keys]
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
