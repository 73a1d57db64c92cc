"""Benchmark for issue 27: one certified γ_opt solve at large K, every round logged with a timestamp.

Run (the K = 201 target, in the background, capped at an hour):

    nohup timeout 3600 nice -n 10 /usr/bin/time -v .venv/bin/python benchmarks/bench_large_solve.py \\
        --K 201 --m 5 --eps 0.1 --delta 1e-5 --log k201.log --json k201.json \\
        --checkpoint k201.ckpt > k201.out 2>&1 &

Each constraint-generation round appends one line to ``--log`` (seconds since the start, the
solver's own round line: LP rows, violation, proven gap, sweep seconds), so a run stopped by the
cap still says where it stood; a finished run writes ``--json`` (objective, proven gap, rounds,
exhaustive sweeps, screens, seconds, peak RSS of this process and its workers from
``resource.getrusage``).  ``--checkpoint`` keeps the working set, so a later run resumes.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path


def peak_rss_mib() -> float:
    """The largest resident set of this process or any of its finished children, MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the sweep workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, required=True)
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--eps", type=float, required=True)
    ap.add_argument("--delta", type=float, default=0.0, help="members' Δ (default 0: pure DP)")
    ap.add_argument("--gap", type=float, default=1e-9, help="gap_tol (default 1e-9)")
    ap.add_argument("--cuts", type=int, default=None, help="cuts_per_round (default: SolveOptions')")
    ap.add_argument("--stabilize", default=None, help="SolveOptions.stabilize: 'auto' or λ in (0, 1] (default auto)")
    ap.add_argument("--auto-lambda", type=float, default=None,
                    help="λ that stabilize='auto' switches to (default Schedule.auto_lambda)")
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--checkpoint", type=Path, default=None)
    a = ap.parse_args()

    import darrm

    P = darrm.PrivacyParams(a.K, a.m, a.eps, a.delta)
    kw: dict = {} if a.cuts is None else {"cuts_per_round": a.cuts}
    if a.stabilize is not None:
        kw["stabilize"] = a.stabilize if a.stabilize == "auto" else float(a.stabilize)
    if a.auto_lambda is not None:
        import functools

        from darrm.solver import gamma_opt
        from darrm.solver.schedule import Schedule

        gamma_opt.solve_cutting_planes = functools.partial(gamma_opt.solve_cutting_planes,
                                                           schedule=Schedule(auto_lambda=a.auto_lambda))
    opts = darrm.SolveOptions(gap_tol=a.gap, **kw)
    t0 = time.perf_counter()
    with a.log.open("a", buffering=1) as f:
        f.write(f"# start K={a.K} m={a.m} eps={a.eps} Delta={a.delta} gap_tol={a.gap} {time.ctime()}\n")

        def log(line: str) -> None:
            f.write(f"{time.perf_counter() - t0:8.1f}s rss {peak_rss_mib():.0f} MiB | {line}\n")

        sol = darrm.solve(P, darrm.IIDPrior(0.75), options=opts, checkpoint=a.checkpoint, progress=False, log=log)
        wall = time.perf_counter() - t0
        info = sol.info
        row = {"K": a.K, "m": a.m, "eps": a.eps, "Delta": a.delta, "cuts": opts.cuts_per_round,
               "stabilize": opts.stabilize, "auto_lambda": a.auto_lambda,
               "wall_s": wall, "cpu_s": cpu_seconds(),
               "objective": sol.objective, "gap": info.get("optimality_gap"), "rounds": info.get("rounds"),
               "exhaustive_sweeps": info.get("exhaustive_sweeps"), "screens": info.get("screens"),
               "line_search_rounds": info.get("line_search_rounds"),
               "seconds_exhaustive_sweeps": info.get("seconds_exhaustive_sweeps"),
               "seconds_sweeps": info.get("seconds_sweeps"), "violation": sol.violation,
               "status": sol.status, "certified": sol.violation <= 0.0, "peak_rss_mib": peak_rss_mib()}
        f.write(f"# done {json.dumps(row)}\n")
    if a.json:
        a.json.write_text(json.dumps(row, indent=1) + "\n")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
