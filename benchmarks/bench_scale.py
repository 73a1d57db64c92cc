"""Benchmark: γ_opt at scale — full-enumeration LP vs constraint generation (issue: γ_opt at scale).

Run:  .venv/bin/python benchmarks/bench_scale.py [--K 11 15 21 31 41] [--big 61] [--executor local:2]
      .venv/bin/python benchmarks/bench_scale.py --Delta 0 --m 10 --K 101 301 --big 1001 --cuts 1024

Each (K, path) runs in a fresh subprocess so that its peak resident memory is its own.
Settings: ε = 0.1, Δ = 1e-5, m = 5, δ = 1−(1−Δ)^m, prior i.i.d. μ = 0.75.  The full path
materialises every folded row (pruned to the possibly-binding ones) and is run where it
fits (K ≤ 21); both are certified by the exact sweep over ALL multisets.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

from darrm.privacy.corners import corner_count


def child(K: int, method: str, executor: str, m: float, Delta: float, opts: dict) -> dict:
    import darrm
    from darrm.backends.executors import make_executor

    t0 = time.perf_counter()
    kw = {} if method == "full" else {"cuts_per_round": opts["cuts"], "stabilize": opts["stabilize"],
                                      "max_rounds": opts["max_rounds"], "accept_gap": True}
    t = darrm.solve(darrm.PrivacyParams(K, m, 0.1, Delta), progress=False, executor=make_executor(executor),
                    options=darrm.SolveOptions(method=method, **kw))
    return {
        "stop": t.info.get("stop", "LP optimum"), "gap": t.info.get("optimality_gap", 0.0),
        "K": K, "method": method, "seconds": time.perf_counter() - t0, "objective": t.objective,
        "violation": t.violation, "rounds": t.info.get("rounds", 1), "rows": t.info.get("lp_rows"),
        "multisets": t.info["multisets"], "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run(K: int, method: str, executor: str, m: float, Delta: float, opts: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(K), method, executor, str(m), str(Delta),
                          json.dumps(opts)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--K", type=int, nargs="*", default=[11, 15, 21, 31, 41])
    ap.add_argument("--big", type=int, nargs="*", default=[])
    ap.add_argument("--m", type=float, default=5.0)
    ap.add_argument("--member-delta", type=float, default=1e-5)
    ap.add_argument("--executor", default="serial")
    ap.add_argument("--cuts", type=int, default=256, help="cuts per round")
    ap.add_argument("--stabilize", type=lambda v: v if v == "auto" else float(v), default="auto",
                    help="in-out λ in (0, 1] (1 = plain Kelley) or auto (default)")
    ap.add_argument("--max-rounds", type=int, default=500)
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        K, method, ex, m, D, opts = a.child
        print(json.dumps(child(int(K), method, ex, float(m), float(D), json.loads(opts))))
        return
    opts = {"cuts": a.cuts, "stabilize": a.stabilize, "max_rounds": a.max_rounds}
    print(f"ε=0.1, Δ={a.member_delta:g}, m={a.m:g}, executor={a.executor}, {opts}")
    print("| K | multisets | path | wall s | peak RSS MiB | rounds | LP rows | objective | certified violation "
          "| proven gap | stop | full/CG time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for K in [*a.K, *a.big]:
        C = corner_count(a.member_delta)
        n = math.comb(K + C - 1, K)
        res = {}
        methods = ("full", "cutting-planes") if n <= 1_200_000 else ("cutting-planes",)
        for meth in methods:
            res[meth] = run(K, meth, a.executor, a.m, a.member_delta, opts)
        for meth, r in res.items():
            ratio = f"{res['full']['seconds'] / r['seconds']:.1f}x" if "full" in res and meth != "full" else ""
            print(f"| {K} | {n:,} | {meth} | {r['seconds']:.2f} | {r['peak_rss_mib']:.0f} | {r['rounds']} | "
                  f"{r['rows']:,} | {r['objective']:.10f} | {r['violation']:.1e} | {r['gap']:.1e} | {r['stop']} | "
                  f"{ratio} |", flush=True)


if __name__ == "__main__":
    main()
