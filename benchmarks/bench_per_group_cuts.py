"""Benchmark: cuts per round for γ(l_1, …, l_G) (darrm.models.groups.solver.cuts_per_round), old against new.

Run:  .venv/bin/python benchmarks/bench_per_group_cuts.py [--large]

For each setting it solves the per-group form twice in one process, each from scratch: "old" with
``cuts_per_round`` = 256 cuts per round whatever the number of LP variables
(``SCALE_PER_GROUP_CUTS = False``), "new" with 256 per (K + 1)/2 variables (the default), and
reports rounds, LP rows, the proven gap, the error and the process CPU seconds of each solve (CPU,
not wall: the machine is shared).  ``--large`` adds G = 3 at K = 21 (7 + 7 + 7), new only, which
takes tens of CPU minutes.
"""

from __future__ import annotations

import json
import sys
import time

SETTINGS = [
    [(5, 0.1, 1e-5), (6, 0.3, 1e-5)],                     # issue 26's reference, K = 11
    [(3, 0.1, 1e-5), (3, 0.2, 1e-5), (3, 0.3, 1e-5)],     # K = 9
    [(5, 0.1, 1e-5), (5, 0.2, 1e-5), (5, 0.3, 1e-5)],     # K = 15
]
LARGE = [(7, 0.1, 1e-5), (7, 0.2, 1e-5), (7, 0.3, 1e-5)]  # K = 21


def run(groups, scale: bool) -> dict:
    import darrm
    from darrm.models.groups import solver

    solver.SCALE_PER_GROUP_CUTS = scale
    params = darrm.GroupParams(tuple(groups), 0.5, 1e-4, "per-group")
    t0 = time.process_time()
    table = darrm.solve(params, darrm.IIDPrior(0.75))
    return {"groups": groups, "K": params.K, "cuts": solver.cuts_per_round(params, darrm.SolveOptions()),
            "status": table.status, "error": round(float(table.objective or 0.0), 8),
            "gap": table.info["optimality_gap"], "rounds": table.info["rounds"], "lp_rows": table.info["lp_rows"],
            "cpu_s": round(time.process_time() - t0, 1)}


def main() -> None:
    for groups in SETTINGS:
        for scale in (False, True):
            print(json.dumps({"variant": "new" if scale else "old", **run(groups, scale)}), flush=True)
    if "--large" in sys.argv[1:]:
        print(json.dumps({"variant": "new", **run(LARGE, True)}), flush=True)


if __name__ == "__main__":
    main()
