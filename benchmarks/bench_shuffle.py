"""Benchmark: ε(δ = 1e-8) per shuffle bound, wall time and peak memory.

    PYTHONPATH=. python benchmarks/bench_shuffle.py [--quick] [--markdown]

Grid: n in {1e4, 1e6, 1e8} x ε0 in {0.5, 1, 2, 4, 8}.  Generic ε0-LDP methods
(Erlingsson, blanket Hoeffding/Bennett, clones, variation-ratio with the generic
parameters — reported although *invalid*, for the paper's runtime claim) and, for
10-ary RR, the valid variation-ratio, the optimal-decomposition upper bound (exact
count sums, every n) and the Thm-14 lower bound ("fft-lower", exact count sums;
n <= 1e6).  The clone bound is the in-run baseline: ratios are
wall time / clone wall time at the same point.  Peak memory by tracemalloc, in a
separate untimed call.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

from darrm.accounting.shuffle import blanket, clones, decomposition, erlingsson
from darrm.accounting.shuffle import variation_ratio as vr
from darrm.accounting.shuffle.randomizers import GenericLDP, RandomizedResponse

DELTA = 1e-8


def _measure(fn):
    """Wall time of a plain call, then peak memory of a second call under tracemalloc
    (tracing slows numpy-heavy code by 10–30 %, so it must not be in the timed call)."""
    t = time.perf_counter()
    b = fn()
    dt = time.perf_counter() - t
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return b, dt, peak / 2**20


def rows(ns, eps0s):
    for n in ns:
        for e0 in eps0s:
            g, rr = GenericLDP(e0), RandomizedResponse(e0, 10)
            # partial binds g, rr and n now (a lambda would read them when called: ruff B023)
            cases = [
                ("erlingsson", "generic", partial(erlingsson.eps_bound, g, n, DELTA)),
                ("blanket-hoeffding", "generic", partial(blanket.eps_bound, g, n, DELTA, "hoeffding")),
                ("blanket-bennett", "generic", partial(blanket.eps_bound, g, n, DELTA, "bennett")),
                ("clones", "generic", partial(clones.eps_bound, g, n, DELTA)),
                ("variation-ratio", "generic", partial(vr.eps_bound, g, n, DELTA)),
                ("variation-ratio", "10-RR", partial(vr.eps_bound, rr, n, DELTA)),
                ("optimal-decomposition", "10-RR", partial(decomposition.eps_bound, rr, n, DELTA)),
            ]
            if n <= 10**6:
                cases.append(("fft-lower", "10-RR", partial(decomposition.lower_eps_bound, rr, n, DELTA)))
            base = None
            for name, who, fn in cases:
                b, dt, mem = _measure(fn)
                if name == "clones":
                    base = dt
                yield dict(n=n, eps0=e0, method=name, randomizer=who, kind=b.kind, valid=b.valid,
                           eps=b.eps, seconds=dt, peak_mib=mem, vs_clone=dt / base if base else float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="n in {1e4, 1e6} only")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    ns = [10**4, 10**6] if a.quick else [10**4, 10**6, 10**8]
    print("| n | eps0 | method | randomizer | bound | valid | eps(δ=1e-8) | time s | ×clone | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows(ns, [0.5, 1, 2, 4, 8]):
        print(f"| {r['n']:.0e} | {r['eps0']:g} | {r['method']} | {r['randomizer']} | {r['kind']} | "
              f"{r['valid']} | {r['eps']:.5g} | {r['seconds']:.3f} | {r['vs_clone']:.2f} | {r['peak_mib']:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
