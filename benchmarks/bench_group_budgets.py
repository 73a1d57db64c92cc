"""Design time of the total-budget designers with per-group budgets or member groups
(darrm.accounting.budget.shard_groups / groups / weighted_shards): one line per point (wall and CPU
seconds, the winner, each shape's best error) and the load average.

    nice -n 10 .venv/bin/python benchmarks/bench_group_budgets.py [shard-groups|groups|weighted-shards ...]
"""

from __future__ import annotations

import os
import sys
import time

import darrm
from darrm.accounting.budget import groups, shard_groups
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.models.disjoint import NonPrivate


def line(label: str, seconds: float, cpu: float, d: darrm.BudgetDesign) -> str:
    best = {k: round(c.error, 6) for k, c in d.best.items()}
    totals = [round(g["composed_epsilon"], 4) for g in d.table.info["group_budgets"]["groups"]]
    return (f"{label}: {seconds:.1f} s wall, {cpu:.1f} s CPU, winner {d.winner.family}, error {d.table.objective:.6g}, "
            f"charged ε per part {totals}, best {best}")


def timed(label: str, design, *args) -> None:
    t, c = time.perf_counter(), time.process_time()
    d = design(*args)
    print(line(label, time.perf_counter() - t, time.process_time() - c, d), flush=True)


def main(which: list[str]) -> None:
    print("load", os.getloadavg(), flush=True)
    if "shard-groups" in which:  # the experiments' Individualized PATE setting (experiments/RESULTS.md)
        for Q in (100, 500):
            params = darrm.ShardGroupParams(101, NonPrivate(), [(1, 1.0, 0.0), (2, 1.0, 0.0), (3, 1.0, 0.0)])
            budgets = GroupBudgets(tuple(TotalBudget(e, 1e-5, Q) for e in (1.0, 2.0, 3.0)))
            timed(f"shard-groups K=101 copies 1,2,3 totals 1/2/3 δ=1e-5 Q={Q} p=0.9", shard_groups.design, params,
                  budgets, darrm.IIDPrior(0.9))
    if "groups" in which:
        for gs, Q in (([(5, 0.1, 0.0), (6, 0.3, 0.0)], 100), ([(3, 0.05, 0.0), (4, 0.2, 0.0)], 1000)):
            timed(f"groups {gs} ε_total=4 δ=1e-5 Q={Q} p=0.75", groups.design, darrm.GroupParams(gs, 1.0, 0.0),
                  TotalBudget(4.0, 1e-5, Q), darrm.IIDPrior(0.75))
    if "weighted-shards" in which:
        from darrm.accounting.budget import weighted_shards

        for Q in (100, 500):
            params = darrm.WeightedShardParams(NonPrivate(), [(5, 1.0, 0.0), (5, 1.0, 0.0), (3, 1.0, 0.0)])
            budgets = GroupBudgets(tuple(TotalBudget(e, 1e-5, Q) for e in (1.0, 2.0, 3.0)))
            timed(f"weighted-shards sizes 5,5,3 totals 1/2/3 δ=1e-5 Q={Q} p=0.9", weighted_shards.design, params,
                  budgets, darrm.IIDPrior(0.9))
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["shard-groups", "groups", "weighted-shards"])
