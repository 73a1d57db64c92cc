"""Accountant time against the number of queries Q, this tree against a base revision, one run.

Run:  git worktree add --detach /tmp/base-NAME <rev>
      .venv/bin/python benchmarks/bench_accountant_q.py --base /tmp/base-NAME [--timeout 300]

The table: K = 1, γ ≡ 1, member (0.007, 0)-DP, so one query's profile is exactly the pure (0.007, 0)
randomised response and the exact total is Kairouz–Oh–Viswanath's (printed beside).  For each
Q in 10², …, 10⁷ and each tree, a fresh subprocess imports that tree's ``darrm`` and times
``composed_epsilon(table, Q, delta_total=1e-6, member_randomness="fresh")`` (the profile computed
and cached first, not timed), wall-clock and CPU seconds (the CPU figure is the one to compare on a
shared machine); a run past ``--timeout`` seconds is reported as such.  The load average is printed
with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
root = sys.argv[1]
sys.path.insert(0, root)
import darrm
darrm.__path__.append(root)
import numpy as np
from darrm import PrivacyParams
from darrm.table import GammaTable
from darrm.accounting.queries import composed_epsilon, table_profile
t = GammaTable(PrivacyParams(1, 1, 0.007, 0.0), np.ones(2), "custom", violation=-1.0)
table_profile(t)
t0, c0 = time.perf_counter(), time.process_time()
b = composed_epsilon(t, int(sys.argv[2]), delta_total=1e-6, member_randomness="fresh")
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "epsilon": b.epsilon,
                  "bound": b.bound}))
"""


def _one(root: str, q: int, timeout: float) -> dict:
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, root, str(q)], capture_output=True, text=True,
                           timeout=timeout, cwd="/tmp")
    except subprocess.TimeoutExpired:
        return {"seconds": None, "epsilon": None, "note": f"> {timeout:g} s"}
    if r.returncode != 0:  # an empty stderr: killed by a signal (the kernel's, for memory)
        lines = r.stderr.strip().splitlines()
        return {"seconds": None, "epsilon": None, "note": lines[-1][:80] if lines else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a git worktree of the base revision")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--qs", type=int, nargs="+", default=[10**k for k in range(2, 8)])
    ap.add_argument("--base-max-q", type=int, default=10**7,
                    help="run the base only up to this Q (it may exhaust the memory beyond)")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    from darrm.accounting.composition import optimal_homogeneous_epsilon

    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| Q | exact | base s | base CPU s | base ε | new s | new CPU s | new ε | new bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for q in args.qs:
        base = _one(args.base, q, args.timeout) if q <= args.base_max_q else {"note": "not run"}
        new = _one(here, q, args.timeout)
        exact = optimal_homogeneous_epsilon(0.007, 0.0, q, 1e-6)

        def cell(r: dict, key: str) -> str:
            val = r.get(key)
            return r.get("note", "—") if val is None else (f"{val:.2f}" if key in ("seconds", "cpu") else f"{val:.6g}")

        print(f"| {q:.0e} | {exact:.6g} | {cell(base, 'seconds')} | {cell(base, 'cpu')} | {cell(base, 'epsilon')} | "
              f"{cell(new, 'seconds')} | {cell(new, 'cpu')} | {cell(new, 'epsilon')} | {new.get('bound', '')} |",
              flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
