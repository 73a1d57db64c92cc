"""The ε(δ) solve of the accountant: the segment root checked by the rigorous δ(ε), against the previous bisection.

Run:  .venv/bin/python benchmarks/bench_epsilon_solve.py

For each (table, Q, δ_total) the pessimistic GridPLD (connect-the-dots, Chernoff-windowed FFT) and the
optimistic dp_accounting PLD are composed once, as :func:`darrm.accounting.queries.composed_epsilon`
composes them, then ε(δ) is read from each by the previous path (a bisection to a relative 10⁻¹², about
45 passes over the PLD; copied here) and by :func:`darrm.accounting.queries.epsilon_for_delta`, in one run;
CPU seconds (the machine may be shared: the load average is printed) and the relative difference.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

import darrm
from darrm import validation as v
from darrm.accounting import queries as q
from darrm.table import GammaTable


def previous(pld, delta: float, upper: bool = True) -> float:
    """The bisection :func:`~darrm.accounting.queries.epsilon_for_delta` used before (to a relative 10⁻¹²)."""
    f = q._hockey_stick(pld)
    if f(v.EPS_MAX) > delta:
        return math.inf
    if f(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > delta:
        lo, hi = hi, min(2 * hi, v.EPS_MAX)
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > delta else (lo, mid)
    return hi if upper else lo


def main() -> None:
    sub = darrm.solve(darrm.PrivacyParams(11, 3, 0.0892, 1e-4), family="sub")
    pure = GammaTable(darrm.PrivacyParams(1, 1, 0.007, 0.0), np.ones(2), "custom", violation=-1.0)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| table | Q | side | previous CPU s | new CPU s | previous ε | new ε | relative |")
    print("|---|---|---|---|---|---|---|---|")
    for name, table, Q, delta in [("γ_Sub K=11 Δ>0", sub, 137, 0.02), ("γ_Sub K=11 Δ>0", sub, 1000, 0.5),
                                  ("pure (0.007, 0)", pure, 10**4, 1e-6), ("pure (0.007, 0)", pure, 10**6, 1e-6),
                                  ("pure (0.007, 0)", pure, 10**7, 1e-6)]:
        steps = [(table, Q)]
        h = q.choose_interval(steps, None, None, q.DEFAULT_BRACKET)
        for side, pld, upper in [("pessimistic", q._grid_composed(steps, h, None), True),
                                 ("optimistic", q._composed(steps, h, False, None), False)]:
            c0 = time.process_time()
            old = previous(pld, delta, upper)
            c1 = time.process_time()
            new = q.epsilon_for_delta(pld, delta, upper=upper)
            c2 = time.process_time()
            rel = (new - old) / old if old and math.isfinite(old) else 0.0
            print(f"| {name} | {Q:.0e} | {side} | {c1 - c0:.3f} | {c2 - c1:.3f} | {old:.10g} | {new:.10g} | "
                  f"{rel:.1e} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
