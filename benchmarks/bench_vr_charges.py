"""Benchmark for the rounding of the variation-ratio δ(ε) (``variation_ratio.vr_delta`` through
``vr_sum``): the previous module (plain path charging only the window's dropped mass), read from a
git revision, against the current one, in the same run.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_vr_charges.py [--rev a4a6564]

Rows: ε(δ = 0.01/n) by Algorithm 1 (``vr_eps``, T = 20 halvings) for the general parameters
p = q = e^{ε0}; CPU seconds of each search (the binomial window already cached, min of 3), the two ε,
and the largest relative move of δ(ε) (upper and lower) at 8 values of ε where the old δ >= 1e-6.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from darrm.accounting.shuffle import variation_ratio as new


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _old_module(rev: str):
    src = subprocess.run(["git", "show", f"{rev}:accounting/shuffle/variation_ratio.py"], check=True,
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent).stdout
    path = Path(tempfile.mkdtemp()) / "vr_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("darrm.accounting.shuffle._vr_old", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _best(mod, n: int, pr, reps: int = 3) -> tuple[float, float]:
    """(min CPU s, ε) of Algorithm 1 for δ = 0.01/n, T = 20."""
    best, out = math.inf, math.nan
    for _ in range(reps):
        t = _cpu()
        out = mod.vr_eps(0.01 / n, n, pr, T=20)
        best = min(best, _cpu() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default="a4a6564", help="git revision of the previous module")
    args = ap.parse_args()
    old = _old_module(args.rev)
    import os

    print(f"load average {os.getloadavg()}")
    print("| n | ε0 | old CPU s | new CPU s | new/old | old ε | new ε | max upper move | max lower move |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (10**4, 10**6, 10**8):
        for e0 in (1.0, 5.0):
            pr_old, pr_new = old.general_params(e0), new.general_params(e0)
            old.vr_delta(1e-3, n, pr_old)
            new.vr_delta(1e-3, n, pr_new)
            t_old, e_old = _best(old, n, pr_old)
            t_new, e_new = _best(new, n, pr_new)
            up = lo = 0.0
            for k in range(8):
                eps = e_old * k / 4
                d_old = old.vr_delta(eps, n, pr_old)
                if d_old < 1e-6:
                    continue
                up = max(up, new.vr_delta(eps, n, pr_new) / d_old - 1)
                lo_old = old.vr_delta(eps, n, pr_old, kind="lower")
                lo = min(lo, new.vr_delta(eps, n, pr_new, kind="lower") / lo_old - 1)
            print(f"| {n:.0e} | {e0:g} | {t_old:.3f} | {t_new:.3f} | {t_new / t_old:.2f} | {e_old:.10g} | {e_new:.10g} "
                  f"| {up:+.2e} | {lo:+.2e} |")


if __name__ == "__main__":
    main()
