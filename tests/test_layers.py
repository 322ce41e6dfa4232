"""The layer contracts hold, and they catch a wrong-way import.

The contracts live in pyproject.toml ([tool.importlinter]); docs/architecture.md
explains the layers. ``make test`` runs ``lint-imports`` too; these tests prove the
contracts can fail, on a copy of the tree with one import added the wrong way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
PACKAGES = ("scholarindex", "crawler", "pipelines", "index_mappings", "standins", "demo")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    # The copy comes first on the path, ahead of the editable install's finder.
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("tree")
    shutil.copy(ROOT / "pyproject.toml", tree)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tree / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def test_the_tree_keeps_every_contract(tree_copy: Path) -> None:
    result = lint_imports(tree_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "wrong_import", "broken"),
    [
        ("scholarindex/indexing/documents.py", "import crawler.extract",
         "scholarindex is not allowed to import crawler"),
        ("scholarindex/ops/cli.py", "import crawler.settings",
         "scholarindex is not allowed to import crawler"),
        ("crawler/distributed/scheduler.py", "import pipelines.index",
         "crawler is not allowed to import pipelines"),
        ("scholarindex/core/text.py", "import scrapy",
         "scholarindex.core is not allowed to import scrapy"),
        ("scholarindex/webui/app.py", "import scholarindex.enrichment.client",
         "scholarindex.webui is not allowed to import scholarindex.enrichment"),
        ("crawler/identity_shim.py", "import scholarindex.ops.cli",
         "crawler is not allowed to import scholarindex.ops"),
        ("scholarindex/ops/demo_bench.py", "import bench.run",
         "scholarindex is not allowed to import bench"),
        ("scholarindex/distributed/jobs.py", "import scholarindex.enrichment.cache",
         "scholarindex.distributed is not allowed to import scholarindex.enrichment"),
    ],
)
def test_a_wrong_way_import_breaks_a_contract(tree_copy: Path, module: str, wrong_import: str,
                                              broken: str) -> None:
    path = tree_copy / module
    original = path.read_text() if path.exists() else None
    path.write_text((original or "") + f"\n{wrong_import}  # the wrong way\n")
    try:
        result = lint_imports(tree_copy)
    finally:
        if original is None:
            path.unlink()
        else:
            path.write_text(original)
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout


def test_no_cycle_among_the_top_level_packages() -> None:
    import grimp

    graph = grimp.build_graph(*PACKAGES)
    edges: dict[str, set[str]] = {package: set() for package in PACKAGES}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            source, target = module.split(".")[0], imported.split(".")[0]
            if source != target and target in edges:
                edges[source].add(target)

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n}))
                   for n in edges[start])

    assert edges["pipelines"] >= {"crawler"}  # the check sees real edges
    assert [p for p in PACKAGES if reaches(p, p)] == []
