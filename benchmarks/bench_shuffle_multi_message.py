"""Benchmark for issue 28 (fifth session): the bracket of k-RR with uniform blankets (mixDUMP).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_shuffle_multi_message.py [--quick]

For binary RR, 4-RR and 10-RR with b = 1, 2, 4 uniform blanket messages per user, n = 1e3 ... 1e6,
ε0 ∈ {1, 4}, δ = 1e-6: the previous bracket (upper: the victim's message among the n·b blankets,
:func:`~darrm.accounting.shuffle.multi_message.plain_upper_delta`; lower: the blanket-matching
mixture over n(b + 1) messages) and the new one (:func:`~darrm.accounting.shuffle.multi_message.bounds`:
the others' blanket shares; the (N_x0, N_x1) counts with the others outside the victim pair, or for
binary RR the exact divergence of the datasets with all others at one input), the
upper/lower ratio of each and the CPU seconds (user + sys) of each, measured in the same run.
``--quick``: n = 1e3 and 1e4 only.
"""

from __future__ import annotations

import argparse
import os
import resource

from darrm.accounting.shuffle import RandomizedResponse
from darrm.accounting.shuffle import multi_message as mm


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _old(proto: mm.MultiMessageProtocol, n: int, delta: float) -> tuple[float, float]:
    """(lower ε, upper ε) of the previous bounds (the mixture lower bound as before, with its
    residual charge)."""
    up = mm._search(lambda x: mm.plain_upper_delta(proto, n, x), delta, proto.log_ratio, "upper")
    lo = mm._search(lambda x: mm._gparv_lower(proto, n, x) if x < proto.log_ratio else 0.0, delta,
                    proto.log_ratio, "lower")
    return lo, up


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1e3 and 1e4 only")
    ap.add_argument("--ks", default="2,4,10", help="the k of k-RR, comma-separated (default 2,4,10)")
    args = ap.parse_args()
    delta = 1e-6
    ns = (10**3, 10**4) if args.quick else (10**3, 10**4, 10**5, 10**6)
    print(f"load average at start: {os.getloadavg()}")
    print("| k | b | ε0 | n | old [lower, upper] | old ratio | old CPU s | new [lower, upper] | new ratio "
          "| new CPU s |\n|---|---|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.ks.split(",")):
        for b in (1, 2, 4):
            for e0 in (1.0, 4.0):
                proto = mm.uniform_blankets(RandomizedResponse(e0, k), b)
                for n in ns:
                    t = _cpu()
                    lo0, up0 = _old(proto, n, delta)
                    t_old = _cpu() - t
                    t = _cpu()
                    up, lo = mm.bounds(proto, n, delta)
                    t_new = _cpu() - t
                    assert lo.eps <= up.eps <= up0 and lo.eps >= lo0
                    print(f"| {k} | {b} | {e0:g} | {n:.0e} | [{lo0:.5f}, {up0:.5f}] | {up0 / lo0:.3f} | {t_old:.2f} "
                          f"| [{lo.eps:.5f}, {up.eps:.5f}] | {up.eps / lo.eps:.5f} | {t_new:.2f} |", flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
