"""Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta (SODA 2019).

Closed form ε = 12 ε0 √(ln(1/δ)/n) (Wang et al. eq. at 000:38), under the
theorem's conditions as implemented in Balle's ``shuffleddp``: ε0 <= 1/2,
n >= 1000, δ <= 0.01 and ε <= ε0 (Erlingsson et al. 2019).  Outside
them the method certifies nothing beyond the trivial ε0 (the shuffled output is a
post-processing of the victim's ε0-LDP report), which is what we return.
"""

from __future__ import annotations

import math

from darrm import validation as v

from .bound import Bound
from .randomizers import Randomizer

#: the method's name in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "erlingsson"


def _applicable(eps0: float, n: int) -> bool:
    return eps0 <= 0.5 and n >= 1000


def eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    e0 = randomizer.eps0
    if _applicable(e0, n) and delta <= 0.01:
        e = 12 * e0 * math.sqrt(math.log(1 / delta) / n)
        if e <= e0:
            return Bound(NAME, "upper", True, e, delta, "EFMRTT19 closed form")
    return Bound(NAME, "upper", True, e0, delta,
                 "EFMRTT19 conditions (eps0<=0.5, n>=1000, delta<=0.01, eps<=eps0) fail: trivial eps0")


def delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    e0 = randomizer.eps0
    if eps >= e0:
        return Bound(NAME, "upper", True, eps, 0.0, "eps >= eps0: the victim's report is eps0-LDP")
    if _applicable(e0, n):
        d = math.exp(-n * eps * eps / (144 * e0 * e0))
        if d <= 0.01:
            return Bound(NAME, "upper", True, eps, d, "EFMRTT19 closed form")
    return Bound(NAME, "upper", True, eps, 1.0, "EFMRTT19 conditions fail: trivial delta = 1")
