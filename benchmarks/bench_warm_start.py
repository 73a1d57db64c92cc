"""Benchmark for issue 27: constraint generation from a warm start (``SolveOptions.warm_start``) or cold.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_warm_start.py [--K 61 81 101] [--sweep eps|m|K]
                                                                  [--m 5] [--eps 0.1] [--delta 1e-5]

For each K: a source solve at (K, m, ε, Δ) writes its checkpoint (its working set); then the target
problem — ε → 1.2·ε (``--sweep eps``), m → m + 1 (``--sweep m``) or K → K + 2 (``--sweep K``) — is
solved cold and warm-started from the source's checkpoint (:meth:`darrm.WarmStart.from_checkpoint`),
in that order and then again in the opposite order, so both see the same load (``--repeats 1``:
once each).  Every solve is a
certified γ_opt (constraint generation, gap_tol 1e-9, default options) in a fresh subprocess.  CPU
seconds are the subprocess tree's user + system time (``resource.getrusage(RUSAGE_CHILDREN)`` around
it: sweep workers are joined before it exits, so their time is included), the measure that a machine
loaded by other work distorts least; wall seconds are reported beside it.  Cold and warm objectives
are asserted equal to 1e-9 and both tables certified optimal.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solve_runs import add_problem_args, cpu_children

ROOT = Path(__file__).resolve().parents[1]


def child(K: int, m: float, eps: float, delta: float, checkpoint: str | None, warm: str | None) -> dict:
    import darrm

    ws = darrm.WarmStart.from_checkpoint(warm) if warm else None
    t = darrm.solve(darrm.PrivacyParams(K, m, eps, delta), progress=False, checkpoint=checkpoint,
                    options=darrm.SolveOptions(method="cutting-planes", warm_start=ws))
    i = t.info
    return {"rounds": i["rounds"], "exhaustive_sweeps": i["exhaustive_sweeps"], "screens": i["screens"],
            "objective": t.objective, "gap": i["optimality_gap"], "status": t.status, "violation": t.violation,
            "warm_rows": (i.get("warm_start") or {}).get("rows", 0)}


def run(K: int, m: float, eps: float, delta: float, checkpoint: str | None = None,
        warm: str | None = None) -> tuple[dict, float, float]:
    cmd = [sys.executable, __file__, "--child", "--K", str(K), "--m", str(m), "--eps", repr(eps), "--delta",
           repr(delta)]
    cmd += ["--checkpoint", checkpoint] if checkpoint else []
    cmd += ["--warm", warm] if warm else []
    c0, t0 = cpu_children(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    wall, cpu = time.perf_counter() - t0, cpu_children() - c0
    return json.loads(out.stdout.strip().splitlines()[-1]), cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_problem_args(ap)
    ap.add_argument("--sweep", choices=("eps", "m", "K"), default="eps")
    ap.add_argument("--repeats", type=int, choices=(1, 2), default=2,
                    help="2: cold, warm, warm, cold; 1: cold, warm (default 2)")
    ap.add_argument("--checkpoint", help=argparse.SUPPRESS)
    ap.add_argument("--warm", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.K[0], a.m, a.eps, a.delta, a.checkpoint, a.warm)))
        return
    print("| K | source | target | start | rounds | exhaustive sweeps | screens | warm rows | CPU s | wall s "
          "| objective | proven gap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for K in a.K:
            ck = str(Path(d) / f"source_{K}.npz")
            src = (K, a.m, a.eps, a.delta)
            tgt = {"eps": (K, a.m, round(1.2 * a.eps, 12), a.delta), "m": (K, a.m + 1, a.eps, a.delta),
                   "K": (K + 2, a.m, a.eps, a.delta)}[a.sweep]
            r, cpu, wall = run(*src, checkpoint=ck)
            s_txt, t_txt = f"K={src[0]} m={src[1]:g} ε={src[2]:g}", f"K={tgt[0]} m={tgt[1]:g} ε={tgt[2]:g}"
            print(f"| {K} | {s_txt} | (source) | cold | {r['rounds']} | {r['exhaustive_sweeps']} | {r['screens']} "
                  f"| 0 | {cpu:.1f} | {wall:.1f} | {r['objective']:.10f} | {r['gap']:.1e} |", flush=True)
            objs: dict[str, float] = {}
            for start in ("cold", "warm", "warm", "cold")[: 2 * a.repeats]:
                r, cpu, wall = run(*tgt, warm=ck if start == "warm" else None)
                assert r["status"] == "optimal" and r["violation"] <= 0.0, r
                objs.setdefault(start, r["objective"])
                assert abs(r["objective"] - objs["cold" if "cold" in objs else start]) <= 1e-9, (objs, r)
                print(f"| {K} | {s_txt} | {t_txt} | {start} | {r['rounds']} | {r['exhaustive_sweeps']} | "
                      f"{r['screens']} | {r['warm_rows']} | {cpu:.1f} | {wall:.1f} | {r['objective']:.10f} | "
                      f"{r['gap']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
