"""Benchmark for issue 28: composed randomizers, the lower bound's datasets, composition over rounds.

    PYTHONPATH=. python benchmarks/bench_shuffle_issue28.py [--quick]

Rows: the docs' joint of two 4-RR at n = 5000, δ = 1e-6 (best upper bound, optimal-decomposition
upper and fft-lower lower bound); the joint of two 10-RR at ε0 = 0.5, n = 1e4, δ = 1e-6 (Su et
al.'s example: they report 0.0138); the lower bound's distinct datasets of that joint; and
composition of 100 rounds at n = 1e6, total δ = 1e-6.  Wall times of plain calls (``--quick``
leaves out the two slowest rows).
"""

from __future__ import annotations

import argparse
import time

from darrm.accounting.shuffle import (
    GenericLDP,
    RandomizedResponse,
    ShuffleRound,
    best_upper_bound,
    decomposition,
    joint,
    lower_datasets,
    rounds_epsilon,
)


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="leave out the two slowest rows (default: all)")
    args = ap.parse_args()
    j4 = joint(RandomizedResponse(0.5, 4).to_finite(), RandomizedResponse(0.5, 4).to_finite())
    j10 = joint(RandomizedResponse(0.5, 10).to_finite(), RandomizedResponse(0.5, 10).to_finite())
    rows = []
    b, dt = _timed(lambda: best_upper_bound(j4, 5000, delta=1e-6))
    rows.append(("joint 4-RR x 4-RR, n=5000", "best_upper_bound", f"{b.eps:.5f} ({b.method})", dt))
    if not args.quick:
        b, dt = _timed(lambda: decomposition.lower_eps_bound(j4, 5000, 1e-6))
        rows.append(("joint 4-RR x 4-RR, n=5000", "fft-lower (lower)", f"{b.eps:.5f}", dt))
    ds, dt = _timed(lambda: lower_datasets.distinct_datasets(j10.array))
    rows.append(("joint 10-RR x 10-RR", "distinct lower-bound datasets", f"{len(ds)} of 990000", dt))
    if not args.quick:
        b, dt = _timed(lambda: decomposition.eps_bound(j10, 10_000, 1e-6))
        rows.append(("joint 10-RR x 10-RR, n=1e4", "optimal-decomposition", f"{b.eps:.5f}", dt))
    for r in (GenericLDP(1.0), RandomizedResponse(1.0, 2)):
        e, dt = _timed(lambda r=r: rounds_epsilon([ShuffleRound(r, 10**6, 100)], 1e-6))
        rows.append((f"{r.name}, n=1e6", "100 rounds, rounds_epsilon", f"{e:.5f}", dt))
    print("| case | what | result | time s |\n|---|---|---|---|")
    for case, what, res, dt in rows:
        print(f"| {case} | {what} | {res} | {dt:.2f} |")


if __name__ == "__main__":
    main()
