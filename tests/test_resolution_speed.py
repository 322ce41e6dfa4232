"""A short run of the resolution speed bench (the full 70,000 atoms: ``make bench-resolution``)."""

from __future__ import annotations

import time

from bench.resolution_speed import main, synthetic_atoms
from scholarindex.core.resolution import resolve


def test_a_few_thousand_synthetic_atoms_resolve_quickly() -> None:
    atoms = synthetic_atoms(3000, seed=7)
    started = time.process_time()
    resolution = resolve(atoms)
    cpu = time.process_time() - started
    assert sorted(w for c in resolution.clusters for w in c) == sorted(a.work_id for a in atoms)
    joined = sum(len(c) for c in resolution.clusters if len(c) > 1)
    assert joined > 0  # the variants (typos, cut titles) do meet their originals
    assert cpu < 20, f"{cpu:.1f} CPU seconds for 3,000 atoms"  # ~1 s on an idle core


def test_the_bench_prints_its_phases(capsys) -> None:
    main(["--atoms", "500"])
    out = capsys.readouterr().out
    assert "candidate pairs" in out and "resolve, caches cleared first" in out
