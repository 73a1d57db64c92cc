"""Total-budget design for shared members, charged by the accountant: never worse than per-query
γ_opt charged the exact generic composition, at Q ≥ 1000; the plain majority when it fits.

The baseline is computed here on its own: the largest real m whose Q-fold generic composition of
(mε, 0) (Kairouz–Oh–Viswanath's optimal homogeneous composition) meets the budget, found by
brentq, then γ_opt at that m and its expected error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize

import darrm
from darrm.accounting.budget import design_for_budget
from darrm.accounting.composition import optimal_homogeneous_epsilon
from darrm.budget.spec import TotalBudget
from darrm.prior import IIDPrior
from darrm.privacy.certify import certify
from darrm.solver.gamma_opt import solve_gamma_opt


def per_query_gamma_opt_error(K: int, eps: float, budget: TotalBudget, prior) -> float:
    def gap(m: float) -> float:
        return optimal_homogeneous_epsilon(m * eps, 0.0, budget.queries, budget.delta) - budget.epsilon

    m = optimize.brentq(gap, 1.0, float(K), xtol=1e-10)
    m *= 1 - 1e-9
    assert gap(m) <= 0
    return solve_gamma_opt(darrm.PrivacyParams(K, m, eps, 0.0), prior).objective


@pytest.mark.parametrize(("K", "eps", "Q", "eps_total", "p"), [(11, 0.02, 1000, 4.0, 0.75)])
def test_design_never_worse_than_per_query_gamma_opt_with_exact_generic_composition_at_large_q(K, eps, Q, eps_total, p):
    budget = TotalBudget(eps_total, 1e-5, Q)
    baseline = per_query_gamma_opt_error(K, eps, budget, IIDPrior(p))
    assert abs(baseline - 0.1501) < 5e-4  # the number for this point
    d = design_for_budget(darrm.PrivacyParams(K, 1, eps, 0.0), budget, IIDPrior(p))
    assert d.table.objective <= baseline
    assert d.table.info["total_budget"]["composed_epsilon"] <= eps_total
    assert darrm.verify_charged_total(d.table) <= eps_total


def test_the_plain_majority_is_returned_for_shared_members_when_it_fits():
    d = design_for_budget(darrm.PrivacyParams(5, 1, 0.1, 0.0), TotalBudget(4.0, 1e-5, 2), IIDPrior(0.75))
    assert np.array_equal(d.table.gamma, np.ones(6)) and d.table.info["design"]["majority_fits"]


def test_majority_at_m_equal_k_is_certified_and_exactly_private_by_brute_force():
    """γ ≡ 1 at m = K, Δ = 0 is Kε-DP (members' composition); the float64 bound alone was 2.2e-148.
    Brute force in exact rational arithmetic (e^ε = 3/2, so the corners and e^{Kε} are rational) over
    every assignment of the 4 pure-DP corners to K = 5 members: the largest
    Pr[A(D)=o] − e^{Kε}Pr[A(D′)=o] is exactly 0, never positive."""
    from fractions import Fraction

    K, r = 5, Fraction(3, 2)
    params = darrm.PrivacyParams(K, K, math.log(1.5), 0.0)
    assert certify(np.ones(K + 1), params).certified
    hi, lo = r / (r + 1), 1 / (r + 1)
    corners = [(Fraction(0), Fraction(0)), (Fraction(1), Fraction(1)), (hi, lo), (lo, hi)]
    eK = r**K
    worst = None
    for assign in itertools.combinations_with_replacement(range(4), K):
        def pmaj(col: int, assign: tuple = assign) -> Fraction:
            pmf = [Fraction(1)]
            for c in assign:
                q = corners[c][col]
                pmf = [(pmf[i] if i < len(pmf) else 0) * (1 - q) + (pmf[i - 1] * q if i > 0 else 0)
                       for i in range(len(pmf) + 1)]
            return sum(pmf[(K + 1) // 2:], Fraction(0))
        a, b = pmaj(0), pmaj(1)
        for x, y in ((a, b), (1 - a, 1 - b)):
            v = max(x - eK * y, y - eK * x)
            worst = v if worst is None else max(worst, v)
    assert worst == 0
    # the theorem is used only where it applies: at m < K the float64 verdict stands
    from darrm.privacy.certify import members_composition_covers

    assert not members_composition_covers(darrm.PrivacyParams(K, K - 1, math.log(1.5), 0.0))
