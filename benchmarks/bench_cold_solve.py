"""Benchmark for issue 27: a cold constraint-generation solve with this checkout's code or an older
revision's, same run.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_cold_solve.py --old REV [--K 61 81 101]
                                                                 [--m 5] [--eps 0.1] [--delta 1e-5]

``REV``'s ``darrm`` package is exported (``git archive``) to a temporary folder and put first on the
child's ``PYTHONPATH``; "new" is this checkout.  For each K, one certified γ_opt solve (constraint
generation, gap_tol 1e-9, default options) per side in a fresh subprocess, in the order old, new,
new, old, so both see the same load.  CPU seconds are the subprocess tree's user + system time
(``resource.getrusage(RUSAGE_CHILDREN)`` around it: sweep workers are joined before it exits, so
their time is included), the measure a machine loaded by other work distorts least; wall seconds
are reported beside it.  Objectives are asserted equal to 1e-12 and both tables certified optimal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solve_runs import add_problem_args, cpu_children

ROOT = Path(__file__).resolve().parents[1]


def child(K: int, m: float, eps: float, delta: float) -> dict:
    import darrm

    t = darrm.solve(darrm.PrivacyParams(K, m, eps, delta), progress=False,
                    options=darrm.SolveOptions(method="cutting-planes"))
    i = t.info
    return {"rounds": i["rounds"], "exhaustive_sweeps": i["exhaustive_sweeps"], "screens": i["screens"],
            "objective": t.objective, "gap": i["optimality_gap"], "status": t.status, "violation": t.violation,
            "seconds_sweeps": i["seconds_sweeps"], "seconds_exhaustive": i["seconds_exhaustive_sweeps"],
            "darrm": str(Path(darrm.__file__).parent)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=False, help="git revision to compare with (its darrm package)")
    add_problem_args(ap)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.K[0], a.m, a.eps, a.delta)))
        return
    if not a.old:
        ap.error("--old REV is required")
    with tempfile.TemporaryDirectory() as d:
        archive = subprocess.run(["git", "archive", a.old, "darrm"], check=True, capture_output=True, cwd=ROOT).stdout
        subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
        paths = {"old": d, "new": str(ROOT)}
        print(f"old = {a.old}, new = working tree")
        print("| K | code | rounds | exhaustive sweeps | screens | CPU s | wall s | sweeps s (in-process wall) "
              "| objective | proven gap |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for K in a.K:
            objs = []
            for side in ("old", "new", "new", "old"):
                env = {**os.environ, "PYTHONPATH": paths[side]}
                cmd = [sys.executable, __file__, "--child", "--K", str(K), "--m", str(a.m), "--eps", repr(a.eps),
                       "--delta", repr(a.delta)]
                c0, t0 = cpu_children(), time.perf_counter()
                out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env)
                wall, cpu = time.perf_counter() - t0, cpu_children() - c0
                r = json.loads(out.stdout.strip().splitlines()[-1])
                assert Path(r["darrm"]).resolve() == (Path(paths[side]) / "darrm").resolve(), r["darrm"]
                assert r["status"] == "optimal" and r["violation"] <= 0.0, r
                objs.append(r["objective"])
                assert abs(objs[-1] - objs[0]) <= 1e-12, objs
                print(f"| {K} | {side} | {r['rounds']} | {r['exhaustive_sweeps']} | {r['screens']} | {cpu:.1f} | "
                      f"{wall:.1f} | {r['seconds_sweeps']:.1f} | {r['objective']:.10f} | {r['gap']:.1e} |",
                      flush=True)


if __name__ == "__main__":
    main()
