"""Benchmark for issue 28: the upper/lower gap and the time of both on the grid n x ε0 x randomizer.

    PYTHONPATH=. python benchmarks/bench_shuffle_grid.py [--ns 1e3,1e4] [--eps0s 1,4]
        [--randomizers 2-RR,10-RR,100-RR,generic] [--budget 1200]

Per point: the best valid upper bound (``best_upper_bound``, the winning method named) and the
best valid lower bound (``all_bounds(..., kinds=("lower",))``, largest ε), each timed as one
plain call (wall and process CPU seconds), and their ratio; the true ε lies between them.
δ = 0.01/n as in Wang et al.'s Table 5.  The generic row's lower bound is attained by binary RR (an ε0-LDP randomizer).
Points run in order of n; once ``--budget`` seconds have passed the remaining points are listed
as not run (a Markdown row each, so a cut run still says what it left out).
"""

from __future__ import annotations

import argparse
import time

from darrm.accounting.shuffle import GenericLDP, RandomizedResponse, all_bounds, best_upper_bound


def _randomizer(name: str, eps0: float):
    if name == "generic":
        return GenericLDP(eps0)
    return RandomizedResponse(eps0, int(name.split("-")[0]))


def _timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def point(name: str, n: int, eps0: float) -> str:
    """One Markdown row: n, ε0, randomizer, upper (method), lower (method), ratio, wall and CPU times."""
    r, delta = _randomizer(name, eps0), 0.01 / n
    up, tu, cu = _timed(lambda: best_upper_bound(r, n, delta=delta))
    lows, tl, cl = _timed(lambda: all_bounds(r, n, delta=delta, kinds=("lower",)))
    lo = max(lows, key=lambda b: b.eps)
    ratio = up.eps / lo.eps if lo.eps > 0 else float("inf")
    return (f"| {n:.0e} | {eps0:g} | {name} | {up.eps:.5g} ({up.method}) | {lo.eps:.5g} ({lo.method}) | "
            f"{ratio:.4f} | {tu:.2f} | {tl:.2f} | {cu:.2f} | {cl:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e3,1e4,1e5,1e6,1e7,1e8", help="comma-separated n (default: 1e3 ... 1e8)")
    ap.add_argument("--eps0s", default="0.25,0.5,1,2,4,8", help="comma-separated ε0 (default: 0.25 ... 8)")
    ap.add_argument("--randomizers", default="2-RR,10-RR,100-RR,generic",
                    help="comma-separated: k-RR or generic (default: 2-RR,10-RR,100-RR,generic)")
    ap.add_argument("--budget", type=float, default=1200.0, help="seconds before the rest is skipped (default 1200)")
    a = ap.parse_args()
    ns = [int(float(x)) for x in a.ns.split(",")]
    eps0s = [float(x) for x in a.eps0s.split(",")]
    names = a.randomizers.split(",")
    print("| n | eps0 | randomizer | upper eps (method) | lower eps (method) | upper/lower | upper s | lower s "
          "| upper CPU s | lower CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    start = time.perf_counter()
    for n in ns:
        for e0 in eps0s:
            for name in names:
                if time.perf_counter() - start > a.budget:
                    print(f"| {n:.0e} | {e0:g} | {name} | not run (budget) | | | | | | |", flush=True)
                    continue
                print(point(name, n, e0), flush=True)


if __name__ == "__main__":
    main()
