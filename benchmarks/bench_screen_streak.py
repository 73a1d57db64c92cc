"""Benchmark for issue 27: end a screening streak early (``SCREEN_MIN_ROWS``) or not, same run.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_screen_streak.py [--K 61 81 101] [--min-rows 0 8]
                                                                     [--m 5] [--eps 0.1] [--delta 1e-5]

For each K and each value of :data:`darrm.solver.cutting_planes.SCREEN_MIN_ROWS` (0: the rule off,
the streak ends only after ``SCREEN_STREAK`` screens or a screen that finds nothing), one certified
γ_opt solve (constraint generation, gap_tol 1e-9, default options) runs in a fresh subprocess.
CPU seconds are the subprocess tree's user + system time (``resource.getrusage(RUSAGE_CHILDREN)``
around it: the solve's sweep workers are joined before it exits, so their time is included), the
measure that a machine loaded by other work distorts least; wall seconds are reported beside it.
The values alternate within each K, so both see the same load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from solve_runs import add_problem_args, cpu_children

ROOT = Path(__file__).resolve().parents[1]


def child(K: int, m: float, eps: float, delta: float, min_rows: int) -> dict:
    import darrm
    import darrm.solver.cutting_planes as cp

    cp.SCREEN_MIN_ROWS = min_rows
    t = darrm.solve(darrm.PrivacyParams(K, m, eps, delta), progress=False,
                    options=darrm.SolveOptions(method="cutting-planes", accept_gap=True))
    i = t.info
    return {"rounds": i["rounds"], "exhaustive_sweeps": i["exhaustive_sweeps"], "screens": i["screens"],
            "cuts_added": i["cuts_added"], "objective": t.objective, "gap": i["optimality_gap"],
            "status": t.status, "stop": i["stop"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_problem_args(ap)
    ap.add_argument("--min-rows", type=int, nargs="+", default=[0, 8], help="SCREEN_MIN_ROWS values (default 0 8)")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.K[0], a.m, a.eps, a.delta, a.min_rows[0])))
        return
    print("| K | SCREEN_MIN_ROWS | rounds | exhaustive sweeps | screens | CPU s | wall s | objective | proven gap "
          "| status |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for K in a.K:
        for mr in a.min_rows:
            c0, t0 = cpu_children(), time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--child", "--K", str(K), "--min-rows", str(mr),
                                  "--m", str(a.m), "--eps", str(a.eps), "--delta", str(a.delta)],
                                 check=True, capture_output=True, text=True, cwd=ROOT)
            wall, cpu = time.perf_counter() - t0, cpu_children() - c0
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {K} | {mr} | {r['rounds']} | {r['exhaustive_sweeps']} | {r['screens']} | {cpu:.1f} | "
                  f"{wall:.1f} | {r['objective']:.10f} | {r['gap']:.1e} | {r['status']} |", flush=True)


if __name__ == "__main__":
    main()
