"""How a live index's mapping differs from its file in ``index_mappings/``.

Fields are compared by path (``profiles.name``, multi-fields as ``title.sayt``),
each by its parameters (type, analyzer, ...). Servers echo numbers and booleans
back as they like (``"true"``, ``512`` or ``"512"``), so values are normalised
before comparing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from scholarindex.indexing.client import translate_errors
from scholarindex.indexing.indices import body_version


@dataclass
class MappingDiff:
    """Differences between the file and the live index; all empty means they match."""

    added: list[str] = field(default_factory=list)  # in the file, not live: reindex to get them
    removed: list[str] = field(default_factory=list)  # live, no longer in the file
    changed: list[str] = field(default_factory=list)  # both, with other parameters
    other: list[str] = field(default_factory=list)  # version, dynamic, analysis settings

    @property
    def same(self) -> bool:
        """True when nothing differs."""
        return not (self.added or self.removed or self.changed or self.other)

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return asdict(self) | {"same": self.same}

    def summary(self) -> str:
        """One line."""
        parts = []
        for label, paths in (("added", self.added), ("removed", self.removed),
                             ("changed", self.changed)):
            if paths:
                shown = ", ".join(paths[:6]) + (f" (+{len(paths) - 6})" if len(paths) > 6 else "")
                parts.append(f"{label} {shown}")
        return "; ".join(parts + self.other)


def live_mapping(client: OpenSearch, index: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(mappings, index settings) of a concrete index as the server has them."""
    with translate_errors(f"get mapping {index}"):
        mappings = client.indices.get_mapping(index=index)[index]["mappings"]
    with translate_errors(f"get settings {index}"):
        settings = client.indices.get_settings(index=index)[index]["settings"].get("index", {})
    return mappings, settings


def diff_mapping(file_body: Mapping[str, Any], mappings: Mapping[str, Any],
                 settings: Mapping[str, Any]) -> MappingDiff:
    """Compare a mapping file's body with a live index's mappings and settings."""
    wanted = _flatten(file_body.get("mappings", {}).get("properties", {}))
    live = _flatten(mappings.get("properties", {}))
    diff = MappingDiff(
        added=sorted(set(wanted) - set(live)),
        removed=sorted(set(live) - set(wanted)),
        changed=sorted(p for p in set(wanted) & set(live)
                       if wanted[p] != _without_defaults(live[p], wanted[p])),
    )
    file_version = body_version(file_body)
    live_version = body_version({"mappings": mappings})
    if file_version != live_version:
        diff.other.append(f"mapping version: live v{live_version}, file v{file_version}")
    file_dynamic = _norm(file_body.get("mappings", {}).get("dynamic", True))
    live_dynamic = _norm(mappings.get("dynamic", True))
    if file_dynamic != live_dynamic:
        diff.other.append(f"dynamic: live {live_dynamic}, file {file_dynamic}")
    file_settings = file_body.get("settings") or {}
    file_analysis = _norm(file_settings.get("analysis")
                          or (file_settings.get("index") or {}).get("analysis") or {})
    live_analysis = _norm(settings.get("analysis") or {})
    if file_analysis != live_analysis:
        names = sorted(_analysis_names(file_analysis) ^ _analysis_names(live_analysis)
                       | {n for n in _analysis_names(file_analysis) & _analysis_names(live_analysis)
                          if _pick(file_analysis, n) != _pick(live_analysis, n)})
        diff.other.append(f"analysis settings differ: {', '.join(names) or 'yes'}")
    return diff


# Parameters a server fills in when the file leaves them out: (type or "*", name) -> value.
# A live parameter the file does not set is a difference only if it differs from these.
SERVER_DEFAULTS = {
    ("search_as_you_type", "max_shingle_size"): "3",
    ("search_as_you_type", "doc_values"): "false",
    ("text", "doc_values"): "false",
    ("*", "index"): "true",
    ("*", "store"): "false",
}


def _without_defaults(live: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    kind = live.get("type")
    return {k: v for k, v in live.items()
            if k in wanted or SERVER_DEFAULTS.get((str(kind), k),
                                                  SERVER_DEFAULTS.get(("*", k))) != v}


def _flatten(properties: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, spec in properties.items():
        path = f"{prefix}{name}"
        if not isinstance(spec, Mapping):
            continue
        params = {k: _norm(v) for k, v in spec.items() if k not in ("properties", "fields")}
        if "properties" in spec:
            params.setdefault("type", "object")
            flat.update(_flatten(spec["properties"], f"{path}."))
        if "fields" in spec:
            flat.update(_flatten(spec["fields"], f"{path}."))
        flat[path] = params
    return flat


def _norm(value: Any) -> Any:
    """Strings, numbers and booleans compared by their text; containers recursively."""
    if isinstance(value, Mapping):
        return {str(k): _norm(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _analysis_names(analysis: Mapping[str, Any]) -> set[str]:
    return {f"{kind}.{name}" for kind, entries in analysis.items()
            if isinstance(entries, Mapping) for name in entries}


def _pick(analysis: Mapping[str, Any], dotted: str) -> Any:
    kind, name = dotted.split(".", 1)
    return (analysis.get(kind) or {}).get(name)
