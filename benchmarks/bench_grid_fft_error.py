"""The pessimistic grid composition with its proven FFT error against a base revision's (measured slack), one run.

Run:  git worktree add --detach /tmp/base-NAME <rev>
      .venv/bin/python benchmarks/bench_grid_fft_error.py --base /tmp/base-NAME

For two tables (K = 1, γ ≡ 1 with a pure (0.007, 0) member, the exact total is Kairouz–Oh–Viswanath's;
K = 11, m = 3, γ_Sub, Δ = 1e-10) and Q in 10², …, 10⁵, both trees' ``accounting/queries.py`` compose the
table on the interval they choose (``_grid_composed``) and read ε at δ = 1e-5 on the pessimistic side
(``_side``); the base module is loaded from the base tree's file beside this tree's package (the
rest of the package is this tree's).  Printed: ε and seconds per tree, the proven error
(``GridPLD.error``) of this tree, and the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a worktree of the base revision")
    args = ap.parse_args()
    import mpmath  # noqa: F401  (imported once, not timed)
    import numpy as np

    import darrm
    import darrm.accounting.queries as new
    from darrm.table import GammaTable

    path = Path(args.base) / "accounting" / "queries.py"
    spec = importlib.util.spec_from_file_location("darrm.accounting._base_queries", path)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    old.__package__ = "darrm.accounting"
    sys.modules[spec.name] = old
    spec.loader.exec_module(old)
    pure = GammaTable(darrm.PrivacyParams(1, 1, 0.007, 0.0), np.ones(2), "custom", violation=-1.0)
    sub = darrm.solve(darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-10), family="sub")
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| table | Q | ε base | s base | ε this | s this | proven error (this) |")
    print("|---|---|---|---|---|---|---|")
    for name, table in (("pure (0.007, 0)", pure), ("K=11 m=3 sub, Δ=1e-10", sub)):
        for q in (100, 1000, 10_000, 100_000):
            row: list = [name, q]
            err = None
            for mod in (old, new):
                h = mod.choose_interval([(table, q)], None, None, mod.DEFAULT_BRACKET)
                t0 = time.perf_counter()
                grid = mod._grid_composed([(table, q)], h, None)
                eps = mod._side(grid, 1e-5, True, True)
                row += [f"{eps:.6f}", f"{time.perf_counter() - t0:.2f}"]
                err = getattr(grid, "error", None)
            print("| " + " | ".join(str(x) for x in row) + f" | {err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
