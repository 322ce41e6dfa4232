"""Reading one setting, typed, with no default of its own.

Every setting is declared with its default in ``scholarindex/settings.py`` (the ones
the crawl and ``scholarindex`` share) or ``crawler/settings.py`` (the crawl's own); the
libraries are given the resulting values (Scrapy settings or any mapping) and repeat
no default, so a missing name is a mistake to report, not a gap to fill.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from scholarindex.core.flags import as_bool

T = TypeVar("T", str, int, float, bool)


def read_setting(settings: Any, name: str, kind: type[T]) -> T:
    """``settings[name]`` as ``kind`` (text from the environment or ``-s`` is converted).

    A missing setting raises ``KeyError`` and a value that is not a ``kind``
    ``ValueError``, both naming the setting.
    """
    if name not in settings:
        raise KeyError(f"setting {name} is not set (every setting is declared in "
                       "scholarindex/settings.py or crawler/settings.py)")
    raw = settings[name]
    if raw is None:
        raise ValueError(f"setting {name} is None: expected a {kind.__name__}")
    try:
        if kind is bool:
            value: object = as_bool(raw)
        elif kind is int:  # "20" and 20.0 alike
            value = int(float(raw))
        else:
            value = kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={raw!r}: expected {'an' if kind is int else 'a'} "
                         f"{kind.__name__}") from None
    return cast(T, value)
