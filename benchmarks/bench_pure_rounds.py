"""Benchmark for issue 27: pure-DP constraint generation, the paths of the fourth and fifth sessions, same run.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_pure_rounds.py [--K 301 1001]
          [--paths old seed s4 lp new] [--m 10] [--eps 0.1] [--purge-after 5]

Paths (each a set of the module switches, in a fresh subprocess): "old" — no seed, no ramp, purging
(before the fourth session); "seed" — the seed only; "s4" — seed, ramp and keeping rows (the fourth
session's default); "lp" — s4 plus the fifth session's LP levers (the exact-objective re-solves on a
second warm model, ``cutting_planes.EXACT_TWIN``; backing off once the bound settled,
``TIGHT_BACKOFF``; HiGHS's scaling for Δ = 0, ``pure_rounds.PURE_HIGHS``); "new" — lp plus the segment
line search (``pure_rounds.PURE_LINE_SEARCH``): the default.  Default: s4 lp new.

For each K and each path, one certified γ_opt solve (Δ = 0, constraint generation, gap_tol 1e-9,
default options, i.i.d. prior 0.75) runs in a fresh subprocess ("old" starts from an empty working
set, separates at the LP point after every feasible separation point and purges rows slack for 5
rounds: :mod:`darrm.solver.pure_rounds`'s ``PURE_SEED``, ``PURE_RAMP`` and ``PURE_KEEP_ROWS`` off).
CPU seconds are the subprocess tree's user + system time
(``resource.getrusage(RUSAGE_CHILDREN)`` around it: the sweep workers are joined before it exits, so
their time is included), the measure that a machine loaded by other work distorts least; wall seconds
are beside it.  Peak RSS is the largest of the subprocess and its workers (``ru_maxrss`` of
RUSAGE_CHILDREN, read in the child after the solve).  The paths alternate within each K.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(K: int, m: float, eps: float, path: str, purge_after: int | None) -> dict:
    import darrm
    import darrm.solver.gamma_opt as go
    from darrm.solver import cutting_planes, pure_rounds

    pure_rounds.PURE_SEED = path != "old"
    pure_rounds.PURE_RAMP = pure_rounds.PURE_KEEP_ROWS = path in ("s4", "lp", "new")
    # fifth session: the LP levers (exact-objective twin model, backing off the exact re-solves,
    # HiGHS's scaling for Δ = 0) and the segment line search
    lp = path in ("lp", "new")
    cutting_planes.EXACT_TWIN = cutting_planes.TIGHT_BACKOFF = lp
    if not lp:
        pure_rounds.PURE_HIGHS = None
    pure_rounds.PURE_LINE_SEARCH = path == "new"
    if purge_after is not None:
        inner = go.solve_cutting_planes

        def with_purge(*args, **kw):
            return inner(*args, **{**kw, "purge_after": purge_after})

        go.solve_cutting_planes = with_purge
    t = darrm.solve(darrm.PrivacyParams(K, m, eps, 0.0), darrm.IIDPrior(0.75), progress=False,
                    options=darrm.SolveOptions(method="cutting-planes", accept_gap=True))
    i = t.info
    rss = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {"rounds": i["rounds"], "exhaustive_sweeps": i["exhaustive_sweeps"], "lp_rows": i["lp_rows"],
            "line_search_rounds": i.get("line_search_rounds", 0),
            "cuts_added": i["cuts_added"], "objective": t.objective, "gap": i["optimality_gap"],
            "status": t.status, "stop": i["stop"], "seconds_sweeps": i["seconds_sweeps"],
            "violation": t.violation, "peak_rss_mib": rss / 1024}


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, nargs="+", default=[301, 1001])
    ap.add_argument("--paths", nargs="+", choices=("old", "seed", "s4", "lp", "new"), default=["s4", "lp", "new"])
    ap.add_argument("--m", type=float, default=10.0)
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--purge-after", type=int, default=None, help="purge_after of the solver (default: its own)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.K[0], a.m, a.eps, a.child, a.purge_after)))
        return
    print("| K | path | rounds (line search) | exhaustive sweeps | LP rows at the end | CPU s | wall s | peak RSS MiB "
          "| objective | proven gap | status |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for K in a.K:
        for path in a.paths:
            c0, t0 = cpu_children(), time.perf_counter()
            cmd = [sys.executable, __file__, "--child", path, "--K", str(K), "--m", str(a.m), "--eps", str(a.eps)]
            if a.purge_after is not None:
                cmd += ["--purge-after", str(a.purge_after)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
            wall, cpu = time.perf_counter() - t0, cpu_children() - c0
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {K} | {path} | {r['rounds']} ({r['line_search_rounds']}) | {r['exhaustive_sweeps']} "
                  f"| {r['lp_rows']} | {cpu:.1f} | "
                  f"{wall:.1f} | {r['peak_rss_mib']:.0f} | {r['objective']:.10f} | {r['gap']:.1e} | {r['status']} |",
                  flush=True)


if __name__ == "__main__":
    main()
