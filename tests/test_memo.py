"""The memo caches of titles, words, names and atoms hold a budget, not the crawl.

The index writer keeps them for a whole crawl: a cache sized for more than one batch
and its neighbourhood reuse fills only on a larger crawl, and the writer's memory grows
with the crawl up to it (``scholarindex.core.memo``)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import scholarindex.core
import scholarindex.indexing
from scholarindex.core import memo

LARGEST = max(memo.TITLES, memo.WORDS, memo.WORD_PAIRS, memo.ATOMS, memo.NAMES)


def _memo_caches() -> Iterator[tuple[str, Any]]:
    for package in (scholarindex.core, scholarindex.indexing):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if callable(getattr(value, "cache_info", None)) \
                        and getattr(value, "__module__", None) == module.__name__:
                    yield f"{module.__name__}.{name}", value


def test_every_cache_of_the_writer_is_within_the_budget() -> None:
    caches = dict(_memo_caches())
    assert "scholarindex.core.resolution.similarity.title_words" in caches
    too_large = {name: function.cache_info().maxsize for name, function in caches.items()
                 if function.cache_info().maxsize is not None
                 and function.cache_info().maxsize > LARGEST}
    assert too_large == {}


def test_no_cache_wraps_another() -> None:
    # A cache over a cache holds every entry twice and the inner one never hits.
    doubled = [name for name, function in _memo_caches()
               if callable(getattr(getattr(function, "__wrapped__", None), "cache_info", None))]
    assert doubled == []
