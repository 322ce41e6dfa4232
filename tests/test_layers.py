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
PACKAGES = ("core", "indexing", "enrichment", "crawler", "pipelines", "ops", "webui",
            "standins", "index_mappings", "distributed")


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
        ("indexing/documents.py", "import crawler.extract", "indexing is not allowed to import"),
        ("core/text.py", "import scrapy", "core is not allowed to import scrapy"),
        ("webui/app.py", "import crawler.spiders.profiles", "webui is not allowed to import"),
        ("crawler/identity_shim.py", "import ops.cli", "crawler is not allowed to import ops"),
        ("ops/demo_bench.py", "import bench.run", "ops is not allowed to import bench"),
        ("distributed/frontier.py", "import scrapy", "distributed is not allowed to import"),
        ("distributed/jobs.py", "import enrichment.cache", "distributed is not allowed to import"),
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
