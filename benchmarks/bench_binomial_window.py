"""Benchmark for the fold of the windowed binomial pmf (``darrm.numerics.binomial``): the old
path of :func:`~darrm.numerics.binomial.window_pmf` (scipy's pmf at every window point) against
the new one (:func:`~darrm.numerics.binomial.pmf_on_window`: exact ratios from one scipy value at
the mode), and :func:`~darrm.numerics.binomial_sum.binomial_sum_law` on each.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_binomial_window.py [--ns 1e4,1e6,1e8]

Rows: Bin(n − 1, p) at the clone probabilities of binary RR (p = 2/(e^{ε0} + 1), ε0 = 0.5 and 2)
on :func:`~darrm.numerics.binomial.tail_window`'s window; CPU ms per call (the window itself
included, min of 5), the largest relative difference of the two paths' values, and each path's
largest relative error against 40-digit mpmath values at 9 points of the window.  Then the count
law of the multi-message lower bound, Bin(n − 1, 0.3) + Bin(n, 0.5), by direct convolution of
either path's windows (the old one inline: scipy's pmf at every point, relative error RHO per
part), with its ``rel``.
"""

from __future__ import annotations

import argparse
import math
import resource

import mpmath
import numpy as np

from darrm.numerics import binomial as B
from darrm.numerics import binomial_sum as BS


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _best_ms(f, reps: int = 5) -> float:
    out = []
    for _ in range(reps):
        B._W_CACHE.clear()
        t = _cpu()
        f()
        out.append(_cpu() - t)
    return 1e3 * min(out)


def _old_window(n: int, p: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The old window_pmf: scipy's pmf at every point of tail_window's window (relative RHO each)."""
    lo, hi, dropped = B.tail_window(n, p)
    c = np.arange(lo, hi + 1, dtype=np.int64)
    return c, (B.pmf_at(c, n, p) if n > 0 else np.ones(1)), dropped


def _new_window(n: int, p: float) -> tuple[np.ndarray, np.ndarray, float]:
    lo, hi, dropped = B.tail_window(n, p)
    w, _ = B.pmf_on_window(n, p, lo, hi)
    return np.arange(lo, hi + 1, dtype=np.int64), w, dropped


def _mp_error(n: int, p: float, c: np.ndarray, w: np.ndarray) -> float:
    mpmath.mp.dps = 40
    P = mpmath.mpf(p)
    worst = 0.0
    for i in np.linspace(0, len(c) - 1, 9).astype(int):
        k = int(c[i])
        ref = mpmath.binomial(n, k) * P**k * (1 - P) ** (n - k)
        if ref > 1e-290:
            worst = max(worst, float(abs(w[i] / ref - 1)))
    return worst


def _old_law(parts) -> tuple[np.ndarray, float]:
    """binomial_sum_law before the fold: old windows, RHO per part."""
    w, rel, u = np.ones(1), 1.0, float(np.finfo(float).eps)
    for m, p in parts:
        _, w_i, _ = _old_window(m, p)
        w_i = np.where(w_i < BS.CONVOLVE_FLOOR, 0.0, w_i)
        length = len(w) + len(w_i)
        w = np.convolve(w, w_i)
        w[w < BS.CONVOLVE_FLOOR] = 0.0
        rel *= (1 + B.RHO) * (1 + length * u)
    return w, (rel - 1) * 1.01


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e4,1e6,1e8", help="comma-separated n (default: 1e4,1e6,1e8)")
    args = ap.parse_args()
    ns = [int(float(x)) for x in args.ns.split(",")]
    print("| n | p | window | old ms | new ms | old/new | max rel diff | old err (mp) | new err (mp) | new rel bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        for eps0 in (0.5, 2.0):
            p = 2.0 / (math.exp(eps0) + 1.0)
            c, w_old, _ = _old_window(n - 1, p)
            _, w_new, _ = _new_window(n - 1, p)
            rel = B.window_pmf(n - 1, p).rel
            nz = w_old > 1e-290
            diff = float(np.max(np.abs(w_new[nz] / w_old[nz] - 1)))
            t_old = _best_ms(lambda n=n, p=p: _old_window(n - 1, p))
            t_new = _best_ms(lambda n=n, p=p: _new_window(n - 1, p))
            e_old, e_new = _mp_error(n - 1, p, c, w_old), _mp_error(n - 1, p, c, w_new)
            print(f"| {n:.0e} | {p:.4f} | {len(c)} | {t_old:.2f} | {t_new:.2f} | {t_old / t_new:.1f} | {diff:.1e} | "
                  f"{e_old:.1e} | {e_new:.1e} | {rel:.4e} |", flush=True)
    print("\n| n | law | old ms | new ms | old/new | max rel diff | old rel | new rel |")
    print("|---|---|---|---|---|---|---|---|")
    for n in ns:
        if n > 10**6:
            continue  # the whole-window mode is for moderate n (a 1e8 convolution: ~1e10 products)
        parts = ((n - 1, 0.3), (n, 0.5))
        w_old, rel_old = _old_law(parts)
        law = BS.binomial_sum_law.__wrapped__(parts)
        nz = (w_old > 0) & (law.w > 0)
        diff = float(np.max(np.abs(law.w[nz] / w_old[nz] - 1)))
        t_old = _best_ms(lambda parts=parts: _old_law(parts))
        t_new = _best_ms(lambda parts=parts: BS.binomial_sum_law.__wrapped__(parts))
        print(f"| {n:.0e} | Bin(n−1, 0.3) + Bin(n, 0.5) | {t_old:.2f} | {t_new:.2f} | {t_old / t_new:.2f} | "
              f"{diff:.1e} | {rel_old:.4e} | {law.rel:.4e} |", flush=True)


if __name__ == "__main__":
    main()
