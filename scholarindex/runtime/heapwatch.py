"""What a long-lived process holds, written out every few jobs: a diagnostic.

``SCHOLARINDEX_HEAPWATCH=<path>`` makes the index writer's child append one JSON line
to ``<path>`` every ``SCHOLARINDEX_HEAPWATCH_EVERY`` batches (default 10): its resident
size and peak; the resident part of glibc's heap, of other anonymous mappings (Python's
arenas among them) and of files; Python's allocator's own account (arenas held, bytes
in live blocks, and free blocks and pools inside the arenas: held, not in use); the
objects the collector tracks, by type; the memo caches' entries. With
``SCHOLARINDEX_HEAPWATCH_TRACEMALLOC=1`` also what ``tracemalloc`` traces (Python's
heap: against the resident size, what is not traced is the allocators') and the source
lines holding the most; with ``SCHOLARINDEX_HEAPWATCH_COLLECT=1`` a full collection
after each line, and what it freed. Comparing the lines of a short and a long crawl
tells what grows with the crawl. Off (no variable) it costs nothing; on, a line walks
every object (tens of milliseconds to a second).
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

PATH_VARIABLE = "SCHOLARINDEX_HEAPWATCH"
EVERY_VARIABLE = "SCHOLARINDEX_HEAPWATCH_EVERY"
TRACE_VARIABLE = "SCHOLARINDEX_HEAPWATCH_TRACEMALLOC"
COLLECT_VARIABLE = "SCHOLARINDEX_HEAPWATCH_COLLECT"
TYPES = 30  # object types reported, the most numerous first
LINES = 30  # source lines reported, the most memory first
_MAPPING = re.compile(r"[0-9a-f]+-[0-9a-f]+")
# ``sys._debugmallocstats``'s summary lines, by the name each gets here.
_PYMALLOC = {"arenas allocated current": "arenas", "arenas highwater mark": "arenas_peak",
             "bytes in allocated blocks": "live_mb", "bytes in available blocks": "free_mb"}


class HeapWatch:
    """Counts jobs; every ``every``-th, appends what the process holds to ``path``."""

    def __init__(self, path: Path, every: int = 10, trace: bool = False,
                 collect: bool = False) -> None:
        self.path, self.every, self.trace, self.collect = path, max(1, every), trace, collect
        self.jobs = 0
        if trace and not tracemalloc.is_tracing():
            tracemalloc.start()

    @classmethod
    def from_environment(cls) -> HeapWatch | None:
        """The watch the environment asks for (``PATH_VARIABLE``), or None."""
        path = os.environ.get(PATH_VARIABLE)
        if not path:
            return None
        return cls(Path(path), int(os.environ.get(EVERY_VARIABLE) or 10),
                   _flag(TRACE_VARIABLE), _flag(COLLECT_VARIABLE))

    def done(self, extra: dict[str, Any] | None = None) -> None:
        """One job done; on every ``every``-th, a line (``extra`` added to it)."""
        self.jobs += 1
        if self.jobs % self.every == 0:
            self.write(extra)

    def write(self, extra: dict[str, Any] | None = None) -> None:
        """Append one line now."""
        line = {"pid": os.getpid(), "jobs": self.jobs, "time": time.time(), **snapshot(),
                **(extra or {})}
        if self.trace:
            line.update(traced())
        if self.collect:
            line["collected"] = gc.collect()
            line["rss_mb_collected"] = resident_mb()
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


def _flag(variable: str) -> bool:
    return os.environ.get(variable, "") not in ("", "0")


def resident_mb(field: str = "VmRSS") -> float:
    """This process's resident size (or its peak: ``VmHWM``), MB (Linux; 0 elsewhere)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0.0
    fields = dict(row.split(":", 1) for row in status.splitlines() if ":" in row)
    return int(fields[field].split()[0]) / 1024


def snapshot() -> dict[str, Any]:
    """Resident size and peak (MB), where it is, the collector's state, the objects it
    tracks (not the frozen ones) by type, the memo caches' entries."""
    types = Counter(type(o).__name__ for o in gc.get_objects())
    return {"rss_mb": resident_mb(), "peak_mb": resident_mb("VmHWM"),
            "mappings_mb": mappings_mb(), "pymalloc": pymalloc(),
            "tracked": sum(types.values()), "frozen": gc.get_freeze_count(),
            "gc_counts": gc.get_count(),
            "gc_collections": [s["collections"] for s in gc.get_stats()],
            "types": dict(types.most_common(TYPES)), "memo": memo_entries()}


def mappings_mb() -> dict[str, float]:
    """Resident MB of glibc's heap (``[heap]``, grown with brk), of other anonymous
    mappings (mmap: Python's 1 MiB arenas, glibc's largest blocks), and of files."""
    sizes = {"heap": 0.0, "anonymous": 0.0, "files": 0.0}
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return sizes
    kind = "files"
    for line in lines:
        fields = line.split()
        if fields and _MAPPING.fullmatch(fields[0]):
            name = fields[5] if len(fields) > 5 else ""
            kind = "heap" if name == "[heap]" else "files" if name else "anonymous"
        elif fields and fields[0] == "Rss:":
            sizes[kind] += int(fields[1]) / 1024
    return sizes


def pymalloc() -> dict[str, Any]:
    """Python's small-object allocator's summary (``sys._debugmallocstats``, which
    prints to the C stderr): arenas held, MB in live and in free blocks and pools, and
    the free blocks' MB by block size (where over 1 MB)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+") as out:
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    found: dict[str, Any] = {"free_mb_by_size": {}}
    for line in text.splitlines():
        row = line.split()
        if len(row) == 5 and all(cell.isdigit() for cell in row):  # a size class
            size, free = int(row[1]), int(row[4])
            if free * size >= 2**20:
                found["free_mb_by_size"][size] = round(free * size / 2**20, 1)
            continue
        name, equals, value = line.partition("=")
        name = name.strip().lstrip("#").strip()
        if not equals:
            continue
        if name in _PYMALLOC:
            key = _PYMALLOC[name]
        elif name.endswith("unused pools * 16384 bytes"):
            key = "unused_pools_mb"
        else:
            continue
        number = float(value.strip().replace(",", ""))
        found[key] = number / 2**20 if key.endswith("_mb") else number
    return found


def memo_entries() -> dict[str, int]:
    """Entries of every non-empty memo cache of the product's loaded modules."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("scholarindex") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            info = getattr(value, "cache_info", None)
            if callable(info) and getattr(value, "__module__", None) == name:
                size = info().currsize
                if size:
                    found[f"{name.removeprefix('scholarindex.')}.{attr}"] = size
    return found


def traced() -> dict[str, Any]:
    """Python's heap as ``tracemalloc`` sees it (MB) and the lines holding the most."""
    current, peak = tracemalloc.get_traced_memory()
    stats = tracemalloc.take_snapshot().statistics("lineno")[:LINES]
    return {"traced_mb": current / 2**20, "traced_peak_mb": peak / 2**20,
            "lines": [[str(s.traceback), round(s.size / 2**20, 2), s.count] for s in stats]}
