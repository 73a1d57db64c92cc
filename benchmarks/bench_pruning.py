"""Benchmark for issue 27: exact block maxima (pruning) against the tuple-by-tuple sweep.

Run:  nice .venv/bin/python benchmarks/bench_pruning.py [--K 41 61 81] [--json FILE]

For each K (m = 5, ε = 0.1, Δ = 1e-5, prior i.i.d. μ = 0.75) γ_opt is solved (darrm.solve, gap 1e-9),
then, in this one process and serially (one core, BLAS one thread):

- every block's exact maximum v̂ (:mod:`darrm.privacy.block_maxima`): how many blocks lie within
  1e-3 (and 1e-6) of the threshold 0, by count and by tuples;
- one certificate sweep (top = 1) unpruned and pruned, timed in the same run (ratio), with the
  share of the C(K+6, 6) reduced tuples the pruned sweep still visits.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import time

import numpy as np


def block_distribution(g: np.ndarray, P) -> dict:
    from darrm.backends.executors import one_blas_thread
    from darrm.privacy.block_maxima import ExtremeCubes, block_maximum
    from darrm.privacy.sweep import build_tables

    K = P.K
    T = build_tables(g, P)
    vals, sizes = [], []
    with one_blas_thread():
        for R in range(K + 1):
            S, cd = R + 1, K - R
            UR = np.concatenate([u[:, : cd + 1] for u in T.U[:S]])
            c_all = np.arange(cd + 1)
            VR = T.H[T.lut[c_all, cd - c_all]][:, : cd + 1] @ UR.T
            cubes = ExtremeCubes(R)
            for c in range((cd + 1) // 2, cd + 1):
                vals.append(block_maximum(VR[c], VR[cd - c], R, P.check, cubes))
                sizes.append(math.comb(R + 4, 4))
    v, w = np.array(vals), np.array(sizes, dtype=float)
    out = {"blocks": int(v.size), "max": float(v.max())}
    for tol in (1e-3, 1e-6):
        near = v >= -tol
        out[f"near_{tol:g}_blocks"] = float(near.mean())
        out[f"near_{tol:g}_tuples"] = float(w[near].sum() / w.sum())
    return out


def timed_sweeps(g: np.ndarray, P) -> dict:
    from darrm.backends.executors import SerialExecutor
    from darrm.privacy.sweep import sweep

    out = {}
    for prune in (False, True):
        t = time.perf_counter()
        r = sweep(g, P, top=1, threshold=-np.inf, prune=prune, executor=SerialExecutor())
        out[f"{'pruned' if prune else 'full'}_s"] = time.perf_counter() - t
        out[f"{'pruned' if prune else 'full'}_max"] = r.max_violation
    assert out["full_max"] == out["pruned_max"], out
    K = P.K
    total = sum((K - R + 2) // 2 * math.comb(R + 4, 4) for R in range(K + 1))
    out["visited_tuples"] = sum(math.comb(R + 4, 4) for R in range(K + 1)) / total  # one block per R
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--K", type=int, nargs="+", default=[41, 61, 81])
    ap.add_argument("--json")
    args = ap.parse_args()
    import darrm

    darrm.solve(darrm.PrivacyParams(5, 3, 0.1, 1e-5), darrm.IIDPrior(0.75))  # warm-up
    rows = []
    for K in args.K:
        P = darrm.PrivacyParams(K, 5, 0.1, 1e-5)
        t = time.perf_counter()
        g = darrm.solve(P, darrm.IIDPrior(0.75)).gamma
        row = {"K": K, "solve_s": time.perf_counter() - t}
        row.update(block_distribution(g, P))
        row.update(timed_sweeps(g, P))
        row["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
