"""Benchmark for issue 27: exact pruning (block maxima) against the exhaustive tuple-by-tuple sweep.

Run:  nice .venv/bin/python benchmarks/bench_pruning.py [--opt-K 41 61 81 101] [--sub-K 121 151 201]
          [--full-max-K 121] [--dask-K 201] [--json FILE] [--plot FILE]
      (one child alone: --child KIND K [--no-serial]; a plot of saved rows: --rows FILE… --plot FILE)

Settings as in the issue: m = 5, ε = 0.1, Δ = 1e-5 (δ = 1 − (1 − Δ)^m), prior i.i.d. μ = 0.75.
"Today's path" is the same code with ``prune=False`` (the exhaustive sweep: every block visited
tuple by tuple), so both paths run in the same session.  Every (K, kind) runs in a fresh
subprocess (its own peak RSS):

- ``opt`` (K ≤ 101): γ_opt is solved (darrm.solve, gap 1e-9, default executor: two worker
  processes, pruning on), then, serially on one core (BLAS one thread): every block's exact
  maximum v̂, how many blocks lie within 1e-3 / 1e-6 of the threshold 0 (by count and by
  tuples); one certificate sweep (top = 1) exhaustive and pruned, timed (wall and CPU seconds).
- ``sub`` (larger K, where γ_opt cannot be solved in a session): the same certificate sweeps of
  γ_Sub(K, 5), a valid table of the same size; the exhaustive one only for K ≤ ``--full-max-K``.
  A certificate sweep's work does not depend on the table (one block per R is visited), so its
  time is the time of any certificate at that K.
- ``dask``: the certificate of γ_Sub(K, 5) on a local Dask cluster (127.0.0.1, one worker process,
  one thread: the memory of a single worker) against the serial certificate: same verdict.

Work skipped: the share of the C(K+6, 6)/2 reduced tuples that the pruned sweep does not visit
(counted by instrumenting ``two_phase.worst_blocks``).
Beyond ``--full-max-K`` the exhaustive sweep is extrapolated from its throughput (tuples per CPU
second) at the largest measured K, labelled so.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
M, EPS, DELTA = 5, 0.1, 1e-5


def _rss_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def reduced_tuples(K: int) -> int:
    """Tuples an exhaustive Δ > 0 sweep visits: ⌈(K−R+1)/2⌉ blocks of C(R+4, 4) per R (≈ C(K+6, 6)/2)."""
    return sum((K - R + 2) // 2 * math.comb(R + 4, 4) for R in range(K + 1))


def block_distribution(g: np.ndarray, P) -> dict:
    """Every block's exact maximum v̂ (block_maxima), and the share near the threshold 0."""
    from darrm.backends.executors import one_blas_thread
    from darrm.privacy.block_maxima import ExtremeCubes, block_maximum
    from darrm.privacy.sweep import build_tables

    K = P.K
    T = build_tables(g, P)
    vals, sizes = [], []
    with one_blas_thread():
        for R in range(K + 1):
            S, cd = R + 1, K - R
            UR = np.concatenate([u[:, : cd + 1] for u in T.U[:S]])
            c_all = np.arange(cd + 1)
            VR = T.H[T.lut[c_all, cd - c_all]][:, : cd + 1] @ UR.T
            cubes = ExtremeCubes(R)
            for c in range((cd + 1) // 2, cd + 1):
                vals.append(block_maximum(VR[c], VR[cd - c], R, P.check, cubes))
                sizes.append(math.comb(R + 4, 4))
    v, w = np.array(vals), np.array(sizes, dtype=float)
    out = {"blocks": int(v.size), "max_block": float(v.max())}
    for tol in (1e-3, 1e-6):
        near = v >= -tol
        out[f"near_{tol:g}_blocks"] = float(near.mean())
        out[f"near_{tol:g}_tuples"] = float(w[near].sum() / w.sum())
    return out


def one_sweep(g: np.ndarray, P, prune: bool) -> dict:
    """One serial certificate sweep, timed, with its visited tuples counted (``prune`` False: the
    exhaustive sweep, every tuple visited; True: the two-phase pruned sweep, one block in all)."""
    from darrm.backends.executors import SerialExecutor
    from darrm.privacy import sweep as sweep_mod
    from darrm.privacy import two_phase

    tuples = [0, 0]  # visited tuples, visited blocks
    real = two_phase.worst_blocks

    def worst(rows, threshold, top):
        chosen = real(rows, threshold, top)
        tuples[0] += sum(math.comb(R + 4, 4) for R, _, _ in chosen)
        tuples[1] += len(chosen)
        return chosen

    two_phase.worst_blocks = worst
    try:
        w, c = time.perf_counter(), time.process_time()
        r = sweep_mod.sweep(g, P, top=1, threshold=-np.inf, prune=prune, executor=SerialExecutor())
        wall, cpu = time.perf_counter() - w, time.process_time() - c
    finally:
        two_phase.worst_blocks = real
    return {"wall_s": wall, "cpu_s": cpu, "max": r.max_violation, "visited_blocks": tuples[1]}


def timed_sweep(g: np.ndarray, P, prune: bool) -> dict:
    """One certificate sweep (top = 1, every block's maximum), serial; with ``prune`` the two-phase
    pruned sweep and the blocks it still visits counted (:func:`one_sweep`)."""
    r = one_sweep(g, P, prune=prune)
    key = "pruned" if prune else "full"
    out = {f"{key}_wall_s": r["wall_s"], f"{key}_cpu_s": r["cpu_s"], f"{key}_max": r["max"]}
    if prune:
        out["visited_blocks"] = r["visited_blocks"]
    return out


def visited_share(K: int) -> float:
    """Share of the reduced tuples a top = 1 pruned sweep visits: one block (C(R+4, 4) tuples) per R."""
    return sum(math.comb(R + 4, 4) for R in range(K + 1)) / reduced_tuples(K)


def child(kind: str, K: int, full_max: int, with_serial: bool = True) -> dict:
    import darrm
    from darrm.gamma import gamma_sub

    P = darrm.PrivacyParams(K, M, EPS, DELTA)
    row: dict = {"K": K, "kind": kind, "reduced_tuples": reduced_tuples(K)}
    if kind == "dask":
        import distributed

        from darrm.backends.executors import DaskExecutor, SerialExecutor
        from darrm.privacy.certify import certify

        g = gamma_sub(K, M)
        if with_serial:
            t = time.perf_counter()
            row["serial_violation"] = certify(g, P, executor=SerialExecutor()).violation
            row["serial_s"] = time.perf_counter() - t
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, memory_limit=0) as cl, distributed.Client(cl) as client:
            t = time.perf_counter()
            on_dask = certify(g, P, executor=DaskExecutor(client))
            row["dask_s"] = time.perf_counter() - t
            worker_rss = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        row.update(dask_certified=on_dask.certified, dask_violation=on_dask.violation, dask_checked=on_dask.checked,
                   worker_peak_rss_mib=max(worker_rss.values()), peak_rss_mib=_rss_mib())
        return row
    if kind == "opt":
        darrm.solve(darrm.PrivacyParams(5, 3, EPS, DELTA), darrm.IIDPrior(0.75), progress=False)  # warm-up
        t = time.perf_counter()
        sol = darrm.solve(P, darrm.IIDPrior(0.75), progress=False)
        row.update(solve_s=time.perf_counter() - t, gap=sol.info["optimality_gap"], rounds=sol.info["rounds"])
        g = sol.gamma
        row.update(block_distribution(g, P))
    else:
        g = gamma_sub(K, M)
    if K <= full_max:
        row.update(timed_sweep(g, P, prune=False))
    row.update(timed_sweep(g, P, prune=True))
    if "full_max" in row:
        assert row["full_max"] == row["pruned_max"], row  # bit for bit
    row["visited_share"] = visited_share(K)
    assert row["visited_blocks"] == K + 1, row  # one block per R
    row["peak_rss_mib"] = _rss_mib()
    return row


def run_child(kind: str, K: int, full_max: int, with_serial: bool = True) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(K), "--full-max-K", str(full_max)]
                         + ([] if with_serial else ["--no-serial"]),
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = sorted((r for r in rows if r["kind"] in ("opt", "sub")), key=lambda r: r["K"])
    K = np.array([r["K"] for r in sweeps], dtype=float)
    pr = np.array([r["pruned_cpu_s"] for r in sweeps])
    meas = [r for r in sweeps if "full_cpu_s" in r]
    Km = np.array([r["K"] for r in meas], dtype=float)
    fm = np.array([r["full_cpu_s"] for r in meas])
    rate = meas[-1]["reduced_tuples"] / meas[-1]["full_cpu_s"]
    ext = [r for r in sweeps if "full_cpu_s" not in r]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.loglog(Km, fm, "o-", label="exhaustive (measured)")
    if ext:
        Ke = np.array([meas[-1]["K"]] + [r["K"] for r in ext], dtype=float)
        fe = np.array([meas[-1]["full_cpu_s"]] + [r["reduced_tuples"] / rate for r in ext])
        a1.loglog(Ke, fe, "o--", mfc="none", label="exhaustive (extrapolated, constant throughput)")
    a1.loglog(K, pr, "s-", label="pruned (measured)")
    a1.set_xlabel("K")
    a1.set_ylabel("CPU s per certificate sweep (one core)")
    a1.legend(fontsize=8)
    a1.grid(True, which="both", alpha=0.3)
    a2.loglog(K, [1 - r["visited_share"] for r in sweeps], "s-", label="tuples skipped")
    a2.loglog(K, [r["visited_share"] for r in sweeps], "o-", label="tuples visited")
    a2.set_xlabel("K")
    a2.set_ylabel("share of the C(K+6,6)/2 reduced tuples")
    a2.legend(fontsize=8)
    a2.grid(True, which="both", alpha=0.3)
    fig.suptitle("Issue 27: exact pruning, m = 5, ε = 0.1, Δ = 1e-5 (2-core machine under load)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt-K", type=int, nargs="*", default=[41, 61, 81, 101])
    ap.add_argument("--sub-K", type=int, nargs="*", default=[121, 151, 201])
    ap.add_argument("--full-max-K", type=int, default=121)
    ap.add_argument("--dask-K", type=int, nargs="*", default=[201])
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--no-serial", action="store_true", help="dask child: the serial sweep ran in another child")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--rows", nargs="*", help="plot these saved rows (JSON lists or single rows) and run nothing")
    args = ap.parse_args()
    if args.rows:
        saved = [json.loads(Path(f).read_text()) for f in args.rows]
        plot([r for x in saved for r in (x if isinstance(x, list) else [x])], args.plot)
        return
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.full_max_K, not args.no_serial)), flush=True)
        return
    rows = []
    jobs = ([("opt", K) for K in args.opt_K] + [("sub", K) for K in args.sub_K]
            + [("dask", K) for K in args.dask_K])
    for kind, K in jobs:
        t = time.perf_counter()
        serial = next((r for r in rows if r["K"] == K and r["kind"] in ("opt", "sub")), None)
        row = run_child(kind, K, args.full_max_K, with_serial=serial is None)
        if kind == "dask":  # the verdict against the serial certificate sweep of the same table
            ref = serial["pruned_max"] if serial is not None and serial["kind"] == "sub" else row["serial_violation"]
            row["serial_violation"] = ref
            row["same_verdict"] = row["dask_violation"] == ref and row["dask_certified"] == (ref <= 0)
        row["child_wall_s"] = time.perf_counter() - t
        print(json.dumps(row), flush=True)
        rows.append(row)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
