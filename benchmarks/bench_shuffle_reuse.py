"""Benchmark for issue 28 (speed at large n): ε(δ) searches of the count-sum bounds with and
without the reuse of incomplete-beta / pmf values and of repeated points (``beta_tables``).

    PYTHONPATH=. python benchmarks/bench_shuffle_reuse.py [--ns 1e6,1e7,1e8]

Rows: 10-RR at ε0 = 1, upper (optimal decomposition, ``decomposition.eps_bound``) and lower
(``decomposition.lower_eps_bound``); binary RR upper; generic ε0-LDP lower (binary RR's
datasets); δ = 0.01/n (Wang et al.'s Table 5).  Each row runs the old path (inside
``beta_tables.no_reuse()``) and then the new one in the same process, and checks that the two
ε are equal (bit for bit).  Wall times of single calls.
"""

from __future__ import annotations

import argparse

from bench_shuffle_issue28 import _timed  # the same wall-clock timer (run from benchmarks/)

from darrm.accounting.shuffle import GenericLDP, RandomizedResponse, beta_tables, decomposition


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e6,1e7,1e8", help="comma-separated n (default: 1e6,1e7,1e8)")
    ap.add_argument("--eps0", type=float, default=1.0, help="the local ε0 (default: 1)")
    args = ap.parse_args()
    cases = [
        (RandomizedResponse(args.eps0, 10), "upper", decomposition.eps_bound),
        (RandomizedResponse(args.eps0, 10), "lower", decomposition.lower_eps_bound),
        (RandomizedResponse(args.eps0, 2), "upper", decomposition.eps_bound),
        (GenericLDP(args.eps0), "lower", decomposition.lower_eps_bound),
    ]
    print("| n | randomizer | bound | ε | old s | new s | old/new | equal |\n|---|---|---|---|---|---|---|---|")
    for n in (int(float(x)) for x in args.ns.split(",")):
        delta = 0.01 / n
        for r, kind, fn in cases:
            with beta_tables.no_reuse():
                old, t_old = _timed(lambda r=r, fn=fn, n=n, delta=delta: fn(r, n, delta).eps)
            new, t_new = _timed(lambda r=r, fn=fn, n=n, delta=delta: fn(r, n, delta).eps)
            print(f"| {n:.0e} | {r.name} | {kind} | {new:.6g} | {t_old:.2f} | {t_new:.2f} | "
                  f"{t_old / t_new:.2f} | {old == new} |", flush=True)


if __name__ == "__main__":
    main()
