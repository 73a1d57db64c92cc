"""Benchmark: γ_opt solve + certificate vs a naive row-by-row build (issue: DaRRM core).

Run:  .venv/bin/python benchmarks/bench_solve.py [--K 11 15 19 21]

The naive reference mirrors the paper's published code: one Python loop iteration per
corner multiset (itertools.combinations_with_replacement), a Python-loop Poisson-binomial
convolution per row, then the same cvxpy+HiGHS LP.  Both run in this process, so the
ratio is measured on one machine in one run.  Each fast-path size also runs in a fresh
subprocess to report its peak resident memory.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import subprocess
import sys
import time

import numpy as np


def naive_rows(K: int, m: float, eps: float, Delta: float) -> np.ndarray:
    from darrm.privacy.corners import corners

    e = math.exp(m * eps)
    mid = (K + 1) // 2
    rows = []
    for combo in itertools.combinations_with_replacement([tuple(c) for c in corners(eps, Delta)], K):
        a = [1.0] + [0.0] * K
        b = [1.0] + [0.0] * K
        for p, q in combo:
            for l in range(K, 0, -1):
                a[l] = a[l] * (1 - p) + a[l - 1] * p
                b[l] = b[l] * (1 - q) + b[l - 1] * q
            a[0] *= 1 - p
            b[0] *= 1 - q
        rows.append([(a[l] - e * b[l]) + (e * b[K - l] - a[K - l]) for l in range(mid, K + 1)])
    return np.array(rows)


def fast(K: int) -> dict:
    from darrm.params import PrivacyParams
    from darrm.solver.gamma_opt import solve_gamma_opt

    t0 = time.perf_counter()
    t = solve_gamma_opt(PrivacyParams(K, 3, 0.1, 1e-5), progress=False)
    wall = time.perf_counter() - t0
    return {"K": K, "seconds": wall, "objective": t.objective, "violation": t.violation, **t.info}


def naive(K: int) -> dict:
    from darrm.gamma import symmetric_from_upper
    from darrm.params import PrivacyParams
    from darrm.prior import IIDPrior
    from darrm.privacy.certify import certify
    from darrm.solver.full_lp import solve_all_rows
    from darrm.solver.objective import objective_coefficients

    P = PrivacyParams(K, 3, 0.1, 1e-5)
    t0 = time.perf_counter()
    rows = naive_rows(K, P.m, P.eps, P.member_delta)
    c, A = objective_coefficients(K, IIDPrior())
    x, _ = solve_all_rows(rows, P.rhs, c)
    g = symmetric_from_upper(np.clip(x, 0, 1), K)
    certify(g, P)
    return {"K": K, "seconds": time.perf_counter() - t0, "objective": A + float(c @ x), "rows": rows.shape[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--K", type=int, nargs="*", default=[11, 15, 19, 21])
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        r = fast(a.child)
        r["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(r))
        return
    fast(11)  # warm-up (imports, cvxpy canonicalisation caches)
    reps = [fast(11)["seconds"] for _ in range(5)]
    nv = naive(11)
    f = min(reps)
    print(f"K=11 Δ>0 (31,824 multisets): fast solve+certify {f:.3f} s (best of 5), "
          f"naive {nv['seconds']:.2f} s, ratio {nv['seconds'] / f:.1f}x")
    print("| K | multisets | LP rows kept | wall s (solve+certify) | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for K in a.K:
        out = subprocess.run([sys.executable, __file__, "--child", str(K)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {K} | {r['multisets']:,} | {r['lp_rows']:,} | {r['seconds']:.2f} | {r['peak_rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
