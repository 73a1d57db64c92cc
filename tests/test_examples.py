"""The example scripts of examples/ run as documented and write their figures.

Each script runs in a fresh process (as a user runs it) with ``--out`` in a temporary folder;
each checks its own claims with ``assert`` (γ_opt no worse than the closed forms, a table's PLD
total never above the generic bound, a valid lower bound below the valid upper bound, more
users more amplification), so a wrong number fails the run.  The figure must be a real PNG.
The notebooks of examples/notebooks/ are run by tests/test_notebooks.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {
    "solve_certify_aggregate.py": ("gamma_shapes.png", "gamma_opt   expected error"),
    "total_budget.py": ("total_budget.png", "total epsilon at delta_total=0.001"),
    "shuffle_bounds.py": ("shuffle_bounds.png", "binary RR, eps0=1, delta=1e-06"),
    "opacus_ensemble.py": ("opacus_ensemble.png", "5 DP-SGD teachers, 1000 images each"),
}
SHARED = ROOT / ".." / "shared" / "datasets"
PNG = b"\x89PNG\r\n\x1a\n"


def test_every_example_script_is_tested_and_documented():
    scripts = {p.name for p in (ROOT / "examples").glob("*.py")}
    assert scripts == set(EXAMPLES)
    guide = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    assert all(f"examples/{name}" in guide for name in scripts)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_and_writes_its_figure(name, tmp_path):
    figure, first_line = EXAMPLES[name]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    extra = []
    if name == "opacus_ensemble.py":   # trains DP-SGD teachers on MNIST (~30 s on one CPU core)
        pytest.importorskip("opacus", reason="the Opacus example needs the experiments extra")
        if not (SHARED / "mnist" / "train-labels-idx1-ubyte.gz").is_file():
            pytest.skip("shared/datasets (MNIST) not present next to the repository")
        extra = ["--data-dir", str(SHARED.resolve())]
    run = subprocess.run([sys.executable, str(ROOT / "examples" / name), "--out", str(tmp_path / "out"), *extra],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines()[0].startswith(first_line)
    png = (tmp_path / "out" / figure).read_bytes()
    assert png.startswith(PNG) and len(png) > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing written beside --out
