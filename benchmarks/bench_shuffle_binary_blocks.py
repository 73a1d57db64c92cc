"""Benchmark for issue 28: shuffled binary RR above n = 20000 (``binary_rr_exact``, blocks of
splits), upper and lower ε(δ), their ratio and CPU seconds, against the previous best bounds.

    PYTHONPATH=. python benchmarks/bench_shuffle_binary_blocks.py [--ns 1e5,1e6,1e7,1e8]

δ = 0.01/n (Wang et al.'s Table 5).  "blanket": the optimal (blanket) decomposition
(``decomposition.eps_bound``), the best upper bound for binary RR above n = 20000 before;
"fixed datasets": ``decomposition.lower_eps_bound`` (every other user on one input).
"""

from __future__ import annotations

import argparse
import time

from darrm.accounting.shuffle import RandomizedResponse, binary_rr_exact, decomposition


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e5,1e6,1e7,1e8", help="comma-separated n (default: 1e5,1e6,1e7,1e8)")
    ap.add_argument("--eps0s", default="0.25,1,4,8", help="comma-separated ε0 (default: 0.25,1,4,8)")
    args = ap.parse_args()
    print("| n | ε0 | upper ε | lower ε | upper/lower | upper CPU s | lower CPU s | blanket ε | fixed datasets ε "
          "| best upper / best lower |\n|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(float(x)) for x in args.ns.split(",")):
        delta = 0.01 / n
        for eps0 in (float(x) for x in args.eps0s.split(",")):
            up, t_up = _cpu(lambda n=n, e=eps0, d=delta: binary_rr_exact.exact_eps(e, n, d, "upper"))
            lo, t_lo = _cpu(lambda n=n, e=eps0, d=delta: binary_rr_exact.exact_eps(e, n, d, "lower"))
            rr = RandomizedResponse(eps0, 2)
            blanket = decomposition.eps_bound(rr, n, delta).eps
            fixed = decomposition.lower_eps_bound(rr, n, delta).eps
            best = min(up, blanket) / max(lo, fixed)
            print(f"| {n:.0e} | {eps0:g} | {up:.6g} | {lo:.6g} | {up / lo:.5f} | {t_up:.2f} | {t_lo:.2f} | "
                  f"{blanket:.6g} | {fixed:.6g} | {best:.5f} |", flush=True)


if __name__ == "__main__":
    main()
