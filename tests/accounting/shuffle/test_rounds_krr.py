"""Shuffled k-ary RR rounds (k ≥ 3): never below an exact composition, within 5 % of it at n ≥ 100 and
within 7 % at n ≤ 8.

The references are built here from the count law alone, independently of the package's bounds: n − 1
other users all hold a third class c (the worst dataset of the exact enumeration at small n), the
victim holds a (P) or b (Q).  For k = 3 the shuffled histogram is the pair of counts (N_a, N_b); its
law is a trinomial shifted by the victim's report.  Any one dataset is one adversary's choice, so
the T-fold composition of that pair is a lower bound on the protocol's true composed ε, and the
reported total (a bound over every adversary) must never be below it.

* Large n: the pair's pmfs from scipy's binomials, composed by dp_accounting with losses rounded
  down (``pessimistic_estimate=False``: a lower bound on that pair's ε).
* Small n: the same pair in exact rationals (ε0 = ln 3, so e^{ε0} = 3), the T-fold product's
  privacy-loss distribution enumerated exactly and its hockey-stick divergence read in 50-digit
  mpmath: at the reported ε the exact δ is at most the target.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldm
from scipy.stats import binom

from darrm.accounting.shuffle.calibration import central_epsilon
from darrm.accounting.shuffle.composition import PROFILE_DECOMPOSITION, round_profile_name
from darrm.accounting.shuffle.randomizers import RandomizedResponse


def third_class_counts_pair(n: int, eps0: float) -> tuple[np.ndarray, np.ndarray]:
    """3-RR, n − 1 users holding c: the laws of (N_a, N_b) with the victim holding a (P) or b (Q)."""
    E = math.exp(eps0) + 2
    m = n - 1
    others = np.zeros((n + 1, n + 1))
    pa = binom.pmf(np.arange(m + 1), m, 1 / E)
    for a in range(m + 1):  # N_a ~ Bin(m, 1/E); N_b | N_a ~ Bin(m − N_a, 1/(E − 1))
        others[a, : m - a + 1] = pa[a] * binom.pmf(np.arange(m - a + 1), m - a, 1 / (E - 1))

    def with_victim(to_a: float, to_b: float, to_c: float) -> np.ndarray:
        out = to_c * others
        out[1:, :] += to_a * others[:-1, :]
        out[:, 1:] += to_b * others[:, :-1]
        return out.ravel()

    e0 = math.exp(eps0)
    return with_victim(e0 / E, 1 / E, 1 / E), with_victim(1 / E, e0 / E, 1 / E)


def composed_lower_epsilon(P: np.ndarray, Q: np.ndarray, rounds: int, delta: float) -> float:
    keep = np.nonzero((P > 1e-300) & (Q > 1e-300))[0].tolist()
    one = pldm.from_two_probability_mass_functions({i: math.log(Q[i]) for i in keep},
                                                   {i: math.log(P[i]) for i in keep},
                                                   pessimistic_estimate=False, value_discretization_interval=1e-4)
    return float(one.self_compose(rounds).get_epsilon_for_delta(delta))


@pytest.mark.parametrize(("n", "eps0", "rounds"), [(200, 1.0, 10), (300, 0.5, 20), (100, 2.0, 5)])
def test_krr_rounds_are_within_five_percent_of_the_exact_third_class_composition(n, eps0, rounds):
    assert round_profile_name(RandomizedResponse(eps0, 3)) == PROFILE_DECOMPOSITION
    ours = central_epsilon(eps0, n, 1e-6, classes=3, rounds=rounds)
    reference = composed_lower_epsilon(*third_class_counts_pair(n, eps0), rounds, 1e-6)
    assert reference <= ours <= 1.05 * reference, (ours, reference)


def _exact_loss_distribution(n: int, k: int, e0: int) -> dict[Fraction, list[Fraction]]:
    """k-RR with e^{ε0} = e0, n − 1 users holding class 2, victim 0 (P) or 1 (Q): {P/Q: [P, Q]} exactly."""
    E = e0 + k - 1

    def row(x: int) -> list[Fraction]:
        return [Fraction(e0 if y == x else 1, E) for y in range(k)]

    def add(dist: dict, r: list[Fraction]) -> dict:
        out: dict = defaultdict(Fraction)
        for h, p in dist.items():
            for y in range(k):
                out[h[:y] + (h[y] + 1,) + h[y + 1:]] += p * r[y]
        return out

    dist: dict = {(0,) * k: Fraction(1)}
    for _ in range(n - 1):
        dist = add(dist, row(2))
    P, Q = add(dist, row(0)), add(dist, row(1))
    pld: dict = defaultdict(lambda: [Fraction(0), Fraction(0)])
    for h, p in P.items():
        pld[p / Q[h]][0] += p
        pld[p / Q[h]][1] += Q[h]
    return pld


def _compose(a: dict, b: dict) -> dict:
    out: dict = defaultdict(lambda: [Fraction(0), Fraction(0)])
    for ra, (pa, qa) in a.items():
        for rb, (pb, qb) in b.items():
            o = out[ra * rb]
            o[0] += pa * pb
            o[1] += qa * qb
    return out


def _exact_delta(pld: dict, eps: float) -> float:
    with mpmath.workdps(50):
        s = mpmath.exp(mpmath.mpf(eps))
        return float(sum(max(mpmath.mpf(0), mpmath.mpf(p.numerator) / p.denominator
                             - s * mpmath.mpf(q.numerator) / q.denominator) for p, q in pld.values()))


@pytest.mark.parametrize(("n", "k", "rounds", "delta"), [(6, 3, 3, 1e-3), (5, 4, 2, 1e-2)])
def test_krr_rounds_are_never_below_an_exact_rational_composition(n, k, rounds, delta):
    one = _exact_loss_distribution(n, k, 3)
    composed = one
    for _ in range(rounds - 1):
        composed = _compose(composed, one)
    ours = central_epsilon(math.log(3), n, delta, classes=k, rounds=rounds)
    assert _exact_delta(composed, ours) <= delta
    # the small-n regime (composition.py's docstring): the decomposition's rounds are within 7 % of this
    # dataset's exact composition (a lower bound on the worst case), 4.6 % and 6.7 % at these points
    lo, hi = 0.0, ours
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _exact_delta(composed, mid) > delta else (lo, mid)
    assert ours <= 1.07 * hi, (ours, hi)
