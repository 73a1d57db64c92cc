"""Benchmark for issue 27: the two-phase pruned sweep against today's per-R pruned sweep, same run.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_two_phase.py [--K 101 151 201] [--json FILE]
      (one K alone: --child K)

Settings as in the issue: m = 5, ε = 0.1, Δ = 1e-5.  Table: γ_Sub(K, 5), a valid table of every
size (a certificate sweep's visits do not depend on γ: one block per R on the per-R path, one block
in all on the two-phase path).  Each K runs in a fresh subprocess; in it, one certificate sweep
(top = 1, every multiset, serial: one process, BLAS one thread) per path, one after the other:

- ``per_R``: ``TWO_PHASE = False``, the pruned sweep as it was (each R: its blocks' exact maxima,
  then that R's reporting block visited tuple by tuple);
- ``two_phase``: ``TWO_PHASE = True`` (:mod:`darrm.privacy.two_phase`: every maximum first, then
  the one worst block visited).

Visited tuples are counted by instrumenting the functions that choose the visits
(``approx_blocks.blocks_to_visit`` and ``two_phase.worst_blocks``: C(R+4, 4) tuples per visited
block) and given as a share of the C(K+6, 6)/2 reduced tuples.  The two maxima are asserted equal
bit for bit.  Times: wall and CPU seconds (``time.process_time``) of each sweep, the γ tables'
build included (both paths build them once).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
M, EPS, DELTA = 5, 0.1, 1e-5


def reduced_tuples(K: int) -> int:
    """Tuples an exhaustive Δ > 0 sweep visits: ⌈(K−R+1)/2⌉ blocks of C(R+4, 4) per R."""
    return sum((K - R + 2) // 2 * math.comb(R + 4, 4) for R in range(K + 1))


def one_sweep(g: np.ndarray, P, two: bool, prune: bool = True) -> dict:
    """One serial certificate sweep on one path, timed, with its visited tuples counted (``prune``
    False: the exhaustive sweep, every tuple visited; benchmarks/bench_pruning.py uses that)."""
    from darrm.backends.executors import SerialExecutor
    from darrm.privacy import approx_blocks, two_phase
    from darrm.privacy import sweep as sweep_mod

    tuples = [0, 0]  # visited tuples, visited blocks
    real_R, real_2 = approx_blocks.blocks_to_visit, two_phase.worst_blocks

    def per_R(maxima, *a, **kw):
        chosen = real_R(maxima, *a, **kw)
        if chosen:
            R = P.K - max(maxima)  # the keys of one R are c = ⌈(K−R)/2⌉..K−R
            tuples[0] += len(chosen) * math.comb(R + 4, 4)
            tuples[1] += len(chosen)
        return chosen

    def worst(rows, threshold, top):
        chosen = real_2(rows, threshold, top)
        tuples[0] += sum(math.comb(R + 4, 4) for R, _, _ in chosen)
        tuples[1] += len(chosen)
        return chosen

    approx_blocks.blocks_to_visit, two_phase.worst_blocks = per_R, worst
    was, sweep_mod.TWO_PHASE = sweep_mod.TWO_PHASE, two
    try:
        w, c = time.perf_counter(), time.process_time()
        r = sweep_mod.sweep(g, P, top=1, threshold=-np.inf, prune=prune, executor=SerialExecutor())
        wall, cpu = time.perf_counter() - w, time.process_time() - c
    finally:
        approx_blocks.blocks_to_visit, two_phase.worst_blocks = real_R, real_2
        sweep_mod.TWO_PHASE = was
    return {"wall_s": wall, "cpu_s": cpu, "max": r.max_violation, "checked": r.checked,
            "visited_tuples": tuples[0], "visited_blocks": tuples[1],
            "visited_share": tuples[0] / reduced_tuples(P.K)}


def child(K: int) -> dict:
    import darrm
    from darrm.gamma import gamma_sub

    P = darrm.PrivacyParams(K, M, EPS, DELTA)
    g = gamma_sub(K, M)
    row: dict = {"K": K, "reduced_tuples": reduced_tuples(K)}
    for name, two in (("per_R", False), ("two_phase", True)):
        row.update({f"{name}_{k}": v for k, v in one_sweep(g, P, two).items()})
    assert row["per_R_max"] == row["two_phase_max"], row  # bit for bit
    assert row["per_R_checked"] == row["two_phase_checked"] == math.comb(K + 7, 7), row
    assert row["per_R_visited_blocks"] == K + 1 and row["two_phase_visited_blocks"] == 1, row
    row["cpu_ratio"] = row["per_R_cpu_s"] / row["two_phase_cpu_s"]
    row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--K", type=int, nargs="*", default=[101, 151, 201])
    ap.add_argument("--child", type=int)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)), flush=True)
        return
    rows = []
    for K in args.K:
        out = subprocess.run([sys.executable, __file__, "--child", str(K)], capture_output=True, text=True,
                             check=True, cwd=ROOT)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
