"""On/off switches given as text: settings, environment variables, spider arguments."""

from __future__ import annotations

from typing import Any

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def as_bool(value: Any, default: bool = False) -> bool:
    """Read a switch given as bool, int or text ("true", "0", "yes", ...).

    ``None`` means not given: ``default``. Anything else raises ``ValueError``,
    so a typo in a setting stops the run instead of silently meaning "off".
    """
    if value is None:
        return default
    if isinstance(value, bool | int):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r} (use true/false, yes/no, on/off or 1/0)")
