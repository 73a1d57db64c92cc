"""Design time of the total-budget design (darrm.design_for_budget): disjoint members at K = 11, 101,
1001 and shared members at K = 11, 41.  Prints one line per point (wall and CPU seconds) and the load average.

    nice -n 10 .venv/bin/python benchmarks/bench_total_budget.py disjoint
    nice -n 10 .venv/bin/python benchmarks/bench_total_budget.py shared
"""

from __future__ import annotations

import os
import sys
import time

import darrm
from darrm.models.disjoint import DisjointParams, NonPrivate


def line(label: str, seconds: float, cpu: float, d: darrm.BudgetDesign) -> str:
    best = {k: round(c.error, 6) for k, c in d.best.items()}
    return (f"{label}: {seconds:.1f} s wall, {cpu:.1f} s CPU, winner {d.winner.family}, error {d.table.objective:.6g}, "
            f"total ε {d.table.info['total_budget']['composed_epsilon']:.6g}, best {best}")


def main(which: str) -> None:
    print("load", os.getloadavg(), flush=True)
    if which == "disjoint":
        for K, Q in [(11, 100), (101, 100), (1001, 100_000)]:
            t, c = time.perf_counter(), time.process_time()
            d = darrm.design_for_budget(DisjointParams(K, NonPrivate(), 1.0), darrm.TotalBudget(2.0, 1e-5, Q),
                                        darrm.IIDPrior(0.85))
            print(line(f"disjoint non-private K={K} Q={Q} ε_total=2 p=0.85", time.perf_counter() - t,
                       time.process_time() - c, d), flush=True)
    else:
        for K in (11, 41):
            t, c = time.perf_counter(), time.process_time()
            d = darrm.design_for_budget(darrm.PrivacyParams(K, 1, 0.02, 0.0), darrm.TotalBudget(4.0, 1e-5, 1000),
                                        darrm.IIDPrior(0.75))
            print(line(f"shared K={K} ε=0.02 Q=1000 ε_total=4 p=0.75", time.perf_counter() - t,
                       time.process_time() - c, d), flush=True)
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "disjoint")
