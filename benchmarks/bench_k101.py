"""Benchmark for issue 17: γ_opt with Δ > 0 up to K = 101 (and pure DP at K = 1001) on two cores.

Run:  .venv/bin/python benchmarks/bench_k101.py [--K 21 41 61 81 101] [--baseline-K 21 41 61]
                                                 [--baseline-sweep-K 81] [--pure 1001] [--plot FILE]

"Today's path" is the code at the git ref ``--baseline`` (default dfb66cb, the tree before the
reduced sweep), extracted with ``git archive`` into a temporary folder and imported from there;
"new" is this checkout.  Both run in the same session, each (K, path) in a fresh subprocess, so
that peak memory is its own (the maximum of the process and its sweep workers).  Settings as in
the issue: m = 5, ε = 0.1, Δ = 1e-5, δ = 1−(1−Δ)^m, prior i.i.d. μ = 0.75, gap_tol 1e-9; pure DP:
m = 10, Δ = δ = 0.  Executors are each path's default (the baseline's is serial; the new path
uses one worker per core for big sweeps).  Where the baseline would take too long for one
session (K ≥ 81: > 10 min), one exhaustive sweep of the baseline is timed instead
(``--baseline-sweep-K``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rss_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def child_solve(K: int, m: float, Delta: float) -> dict:
    import darrm

    # warm-up (imports, lazy modules, caches) so that small K times the solve, not the start-up
    darrm.solve(darrm.PrivacyParams(5, min(m, 3), 0.1, Delta), progress=False,
                options=darrm.SolveOptions(method="cutting-planes", accept_gap=True))
    t0 = time.perf_counter()
    t = darrm.solve(darrm.PrivacyParams(K, m, 0.1, Delta), progress=False,
                    options=darrm.SolveOptions(method="cutting-planes", accept_gap=True))
    i = t.info
    sweeps = i.get("exhaustive_sweeps", i.get("rounds"))
    sweep_s = i.get("seconds_exhaustive_sweeps", i.get("seconds_sweeps"))
    return {"K": K, "seconds": time.perf_counter() - t0, "rounds": i["rounds"], "exhaustive_sweeps": sweeps,
            "screens": i.get("screens", 0), "seconds_per_sweep": sweep_s / max(sweeps, 1),
            "seconds_certify": i.get("seconds_certify"), "objective": t.objective, "gap": i["optimality_gap"],
            "status": t.status, "stop": i["stop"], "multisets": i["multisets"], "peak_rss_mib": _rss_mib()}


def child_sweep(K: int, m: float, Delta: float) -> dict:
    """One exhaustive sweep of γ_Sub·1.05 (clipped): the cost of one constraint-generation round."""
    import numpy as np

    from darrm.gamma import gamma_sub
    from darrm.params import PrivacyParams
    from darrm.privacy.sweep import sweep

    P = PrivacyParams(K, m, 0.1, Delta)
    g = np.minimum(1.05 * gamma_sub(K, int(m)), 1.0)
    t0 = time.perf_counter()
    r = sweep(g, P, top=256, threshold=1e-10, progress=False)
    return {"K": K, "seconds_per_sweep": time.perf_counter() - t0, "checked": r.checked, "peak_rss_mib": _rss_mib()}


def run_within(kind: str, K: int, m: float, Delta: float, pythonpath: str | None,
               timeout: float | None = None) -> dict | None:
    """One child's JSON record, or None when it ran past ``timeout`` seconds."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        out = subprocess.run([sys.executable, __file__, "--child", kind, str(K), str(m), str(Delta)], env=env,
                             capture_output=True, text=True, check=True, cwd=pythonpath or ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(kind: str, K: int, m: float, Delta: float, pythonpath: str | None) -> dict:
    r = run_within(kind, K, m, Delta, pythonpath)
    assert r is not None
    return r


def baseline_tree(ref: str) -> str:
    d = tempfile.mkdtemp(prefix="darrm-baseline-")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "darrm"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", d], input=archive.stdout, check=True)
    return d


def fmt_row(r: dict, path: str) -> str:
    return (f"| {r['K']} | {r['multisets']:,} | {path} | {r['seconds']:.1f} | {r['rounds']} | "
            f"{r['exhaustive_sweeps']} | {r['screens']} | {r['seconds_per_sweep']:.2f} | {r['peak_rss_mib']:.0f} | "
            f"{r['objective']:.10f} | {r['gap']:.1e} | {r['status']} |")


def plot(rows: list[dict], base_rows: list[dict], base_sweeps: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for rs, label, mk, col in ((rows, "new (reduced sweep, screening, 2 workers)", "o", "tab:blue"),
                               (base_rows, "today's path (dfb66cb, serial)", "s", "tab:orange")):
        if rs:
            ks = [r["K"] for r in rs]
            a1.loglog(ks, [r["seconds_per_sweep"] for r in rs], marker=mk, color=col, label=label + ": per sweep")
            a1.loglog(ks, [r["seconds"] for r in rs], marker=mk, ls=":", color=col, label=label + ": whole solve")
            a2.loglog(ks, [r["rounds"] for r in rs], marker=mk, color=col, label=label + ": rounds")
    if base_sweeps:
        a1.loglog([r["K"] for r in base_sweeps], [r["seconds_per_sweep"] for r in base_sweeps], "s", mfc="none",
                  color="tab:orange", label="today's path, one sweep only")
    if rows:
        a2.loglog([r["K"] for r in rows], [r["exhaustive_sweeps"] for r in rows], marker="^", ls="--",
                  color="tab:green", label="new: exhaustive sweeps (the rest are screens)")
    a1.set_xlabel("K (log)")
    a1.set_ylabel("seconds (log)")
    a1.set_title("Time per exhaustive sweep and per solve (Δ = 1e-5, m = 5, ε = 0.1)", fontsize=9)
    a2.set_xlabel("K (log)")
    a2.set_ylabel("count (log)")
    a2.set_title("Rounds to a proven gap ≤ 1e-9", fontsize=9)
    for a in (a1, a2):
        a.grid(alpha=0.3, which="both")
        a.legend(fontsize=7)
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, nargs="*", default=[21, 41, 61, 81, 101])
    ap.add_argument("--baseline-K", type=int, nargs="*", default=[21, 41, 61])
    ap.add_argument("--baseline-sweep-K", type=int, nargs="*", default=[81])
    ap.add_argument("--pure", type=int, nargs="*", default=[1001])
    ap.add_argument("--pure-baseline-solve", type=float, default=900.0, metavar="SECONDS",
                    help="also solve pure DP with today's path, up to this long (0: skip)")
    ap.add_argument("--baseline", default="dfb66cb")
    ap.add_argument("--plot", default=None)
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, K, m, D = a.child
        fn = child_solve if kind == "solve" else child_sweep
        print(json.dumps(fn(int(K), float(m), float(D))))
        return
    base = baseline_tree(a.baseline)
    print(f"baseline {a.baseline} in {base}; {os.cpu_count()} cores", flush=True)
    head = ("| K | multisets | path | wall s | rounds | exhaustive sweeps | screens | s per sweep | peak RSS MiB | "
            "objective | proven gap | status |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(head, flush=True)
    rows, base_rows, base_sweeps = [], [], []
    for K in sorted(set(a.K) | set(a.baseline_K)):
        if K in a.baseline_K:
            b = run("solve", K, 5, 1e-5, base)
            base_rows.append(b)
            print(fmt_row(b, "today's path"), flush=True)
        if K in a.K:
            r = run("solve", K, 5, 1e-5, None)
            rows.append(r)
            speed = next((f" ({b['seconds'] / r['seconds']:.1f}× faster)" for b in base_rows if b["K"] == K), "")
            print(fmt_row(r, "new") + speed, flush=True)
    for K in a.baseline_sweep_K:
        b = run("sweep", K, 5, 1e-5, base)
        n = run("sweep", K, 5, 1e-5, None)
        base_sweeps.append(b)
        print(f"one exhaustive sweep at K={K}: today's path {b['seconds_per_sweep']:.1f} s "
              f"({b['peak_rss_mib']:.0f} MiB), new {n['seconds_per_sweep']:.1f} s ({n['peak_rss_mib']:.0f} MiB): "
              f"{b['seconds_per_sweep'] / n['seconds_per_sweep']:.1f}×", flush=True)
    for K in a.pure:
        b = run("sweep", K, 10, 0.0, base)
        n = run("sweep", K, 10, 0.0, None)
        print(f"pure DP one exhaustive sweep at K={K}: today's path {b['seconds_per_sweep']:.1f} s "
              f"({b['peak_rss_mib']:.0f} MiB), new {n['seconds_per_sweep']:.1f} s ({n['peak_rss_mib']:.0f} MiB)",
              flush=True)
        r = run("solve", K, 10, 0.0, None)
        print(f"pure DP solve K={K}, m=10: " + fmt_row(r, "new"), flush=True)
        if a.pure_baseline_solve:
            bp = run_within("solve", K, 10, 0.0, base, timeout=a.pure_baseline_solve)
            what = (fmt_row(bp, "today's path") + f" (new is {bp['seconds'] / r['seconds']:.1f}× faster)" if bp
                    else f"today's path did not finish within {a.pure_baseline_solve:.0f} s")
            print(f"pure DP solve K={K}, m=10: " + what, flush=True)
    if a.plot:
        plot(rows, base_rows, base_sweeps, a.plot)
        print(f"wrote {a.plot}")


if __name__ == "__main__":
    main()
