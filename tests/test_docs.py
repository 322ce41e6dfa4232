"""The README and ``docs/`` name only what exists.

Every path, module, make target and setting they name in backticks (or link to) is
looked up in the checkout: a renamed module or a dropped target fails here rather than
in a newcomer's first hour. The same holds for the paths the code's own comments and
messages point readers to.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CODE_FOLDERS = ("bench", "crawler", "demo", "engine", "pipelines", "scholarindex", "standins",
                "tests")
PACKAGES = ("bench", "crawler", "demo", "engine", "pipelines", "scholarindex", "standins",
            "tests")
FILE_ENDINGS = (".py", ".md", ".json", ".toml", ".cfg", ".sh", ".service", ".timer", ".env",
                ".html", ".txt", ".java", ".xml", ".jsonl", ".css", ".js")

BACKTICKED = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
MAKE = re.compile(r"^\s*(?:\$ )?make ([a-z][\w-]*)", re.M)  # a command line in a code block
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
PYTHON_M = re.compile(r"python -m ([\w.]+)")
SETTING = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
DOTTED = re.compile(rf"(?:{'|'.join(PACKAGES)})(?:\.\w+)+")


def _words(doc: Path) -> list[str]:
    text = doc.read_text()
    return [w.strip() for w in BACKTICKED.findall(text)]


def _is_path(token: str) -> bool:
    if any(c in token for c in " {}<>=$:\"'") or token.startswith(("../", "~", "/", "http")):
        return False
    if re.fullmatch(r"\.\w+", token):  # a file ending, not a file
        return False
    if token.endswith("/") or token.endswith(FILE_ENDINGS):
        return True
    return "/" in token and token.split("/")[0] in _top_level()


@cache
def _top_level() -> frozenset[str]:
    return frozenset(p.name for p in ROOT.iterdir() if not p.name.startswith("."))


def _exists(token: str, base: Path) -> bool:
    """A path from the checkout's root or the document's folder; a bare file name anywhere
    in the tree; ``...`` and ``*`` as wildcards."""
    pattern = token.replace("...", "**").rstrip("/")
    for root in (ROOT, base):
        if any(True for _ in root.glob(pattern)) if "*" in pattern else (root / pattern).exists():
            return True
    if "/" not in token and any(True for _ in ROOT.rglob(pattern) if ".venv" not in _.parts):
        return True
    # What the product or a benchmark writes when it runs (a dead-letter file, a state
    # folder, a results file): named with a dot, and written by name in the code.
    name = token.rstrip("/").rsplit("/", 1)[-1]
    return "." in name and not name.endswith(".py") and name in _code_text()


def _module_exists(dotted: str) -> bool:
    """``a.b.c`` is a module, or a module and a name defined in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        source = base.with_suffix(".py")
        if not source.exists():
            source = base / "__init__.py"
        if source.exists():
            rest = parts[cut:]
            if not rest:
                return True
            return re.search(rf"\b{re.escape(rest[0])}\b", source.read_text()) is not None
    return False


@cache
def _make_targets() -> frozenset[str]:
    makefile = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([a-z][\w-]*):", makefile, re.M))


@cache
def _code_text() -> str:
    files = [ROOT / "Makefile", ROOT / "pyproject.toml", ROOT / "scrapy.cfg"]
    for folder in (*CODE_FOLDERS, "index_mappings", "docs/deploy"):
        files += [p for p in (ROOT / folder).rglob("*") if p.is_file()
                  and p.suffix in (".py", ".json", ".sh", ".env", ".service", ".timer", "")
                  and "__pycache__" not in p.parts]
    return "\n".join(p.read_text(errors="replace") for p in files)


def _read_somewhere(setting: str) -> bool:
    """Named in the code, or built there from a prefix (``f"OPENSEARCH_TEST_{name}"``)
    and the name of a setting the code reads."""
    code = _code_text()
    if setting in code:
        return True
    words = setting.split("_")
    return any(f"{'_'.join(words[:cut])}_{{" in code and "_".join(words[cut:]) in code
               for cut in range(1, len(words)))


def _doc_id(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


def _paths(doc: Path) -> list[str]:
    """The paths a document names; a bare file name after a path on the same line (a table
    cell's ``a/b/c.py``, ``d.py``) is read in that path's folder."""
    paths = []
    for line in doc.read_text().splitlines():
        folder = None
        for word in (w.strip() for w in BACKTICKED.findall(line)):
            if not _is_path(word):
                continue
            if "/" in word:
                folder = word if word.endswith("/") else word.rsplit("/", 1)[0] + "/"
            elif folder and word.endswith(".py"):
                word = folder + word
            paths.append(word)
    return paths


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_path_a_document_names_exists(doc: Path) -> None:
    names = _paths(doc)
    names += [link for link in LINK.findall(doc.read_text()) if not link.startswith("http")]
    missing = sorted({n for n in names if not _exists(n, doc.parent)})
    assert not missing, f"{_doc_id(doc)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_make_target_and_module_a_document_names_exists(doc: Path) -> None:
    text = doc.read_text()
    commands = [w for w in _words(doc) if w.startswith("make ")] + FENCE.findall(text)
    targets = sorted({t for c in commands for t in MAKE.findall(c)} - _make_targets())
    assert not targets, f"{_doc_id(doc)} names make targets the Makefile lacks: {targets}"
    modules = set(PYTHON_M.findall(text)) | {w for w in _words(doc) if DOTTED.fullmatch(w)
                                             and not w.endswith(FILE_ENDINGS)}
    missing = sorted(m for m in modules
                     if m.split(".")[0] in PACKAGES and not _module_exists(m))
    assert not missing, f"{_doc_id(doc)} names modules that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_setting_a_document_names_is_read_somewhere(doc: Path) -> None:
    settings = {w for w in _words(doc) if SETTING.fullmatch(w)}
    unknown = sorted(s for s in settings if not _read_somewhere(s))
    assert not unknown, f"{_doc_id(doc)} names settings no code reads: {unknown}"


def test_every_path_the_code_points_readers_to_exists() -> None:
    pointer = re.compile(r"`((?:[\w-]+/)+[\w-]+\.(?:py|md|json))`")
    wrong = []
    for folder in CODE_FOLDERS:
        for source in (ROOT / folder).rglob("*.py"):
            for token in pointer.findall(source.read_text()):
                if token.split("/")[0] in _top_level() and not _exists(token, source.parent):
                    wrong.append(f"{source.relative_to(ROOT)}: {token}")
    assert not wrong, "the code points readers to paths that do not exist:\n" + "\n".join(wrong)


def test_cost_figures_live_in_the_performance_doc_not_in_the_code() -> None:
    """A share of CPU or time measured once goes stale in a docstring; performance.md
    keeps it with the command that measured it."""
    figure = re.compile(r"(?:\d+(?:-\d+)? ?%|\ba (?:tenth|third|quarter|fifth)|\d+(?:\.\d+)? ?"
                        r"(?:ms|µs)) of (?:the|its|a) [\w' ]{0,30}(?:CPU|time|decision)")
    found = []
    for folder in ("crawler", "pipelines", "scholarindex"):
        for source in (ROOT / folder).rglob("*.py"):
            found += [f"{source.relative_to(ROOT)}: {m.group(0)}"
                      for m in figure.finditer(source.read_text())]
    assert not found, "cost figures in the code (move them to docs/performance.md):\n" + \
        "\n".join(found)
