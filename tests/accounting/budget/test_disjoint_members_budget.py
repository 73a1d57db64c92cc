"""Total-budget design for randomised members on disjoint shards (LocalRR, (ε, Δ)-DP): never worse than
binary GNMax (σ from the exact Gaussian composition) or the per-query γ_opt with the exact generic
composition at equal total, and the certified total re-checked independently.

The independent check puts the changed member at every vertex of its region and every other member,
one by one, at either end of its interval, builds the vote count's law by direct convolution and the
release law from Algorithm 1's definition, both outputs and both directions, and re-checks the record on
those points (``budget_check``, tests/accounting/budget/conftest.py: dp_accounting's PLD of their
envelope, mpmath for a GDP charge).  The per-query baseline is γ_opt at the per-query (ε_q, δ_total/(2Q))
of the experiments' generic composition
(:func:`darrm.experiments.pate.multiclass_aggregators.plurality_budget`), solved by ``darrm.solve``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

import darrm
from darrm.accounting.budget.disjoint import design_disjoint
from darrm.budget.spec import TotalBudget
from darrm.experiments.pate.multiclass_aggregators import plurality_budget
from darrm.models.disjoint import ApproxDP, DisjointParams, LocalRR
from darrm.prior import IIDPrior


def gnmax_error(K: int, b: TotalBudget, p: float) -> float:
    def delta(m: float) -> float:
        e = b.epsilon
        return float(stats.norm.cdf(-e / m + m / 2) - math.exp(e) * stats.norm.cdf(-e / m - m / 2))

    s = math.sqrt(b.queries) / optimize.brentq(lambda m: delta(m) - b.delta, 1e-6, 50.0, xtol=1e-14)
    ell = np.arange(K + 1)
    return abs(float(np.sum(stats.binom.pmf(ell, K, p) * (stats.norm.cdf((ell - K / 2) / s) - (ell > K / 2)))))


def brute_points(gamma: np.ndarray, member) -> np.ndarray:
    K = len(gamma) - 1
    ell = np.arange(K + 1)
    w = gamma * (ell >= (K + 1) // 2) + (1.0 - gamma) / 2.0
    lo, hi = member.unchanged_ends()
    vs = member.changed_vertices()
    pts = []
    for v in range(vs.shape[0]):
        for ends in itertools.product((lo, hi), repeat=K - 1):
            laws = []
            for side in (0, 1):
                pmf = np.array([1 - vs[v, side], vs[v, side]])
                for q in ends:
                    pmf = np.convolve(pmf, [1 - q, q])
                laws.append(float(pmf @ w))
            a, b = laws
            pts += [(b, a), (a, b), (1 - b, 1 - a), (1 - a, 1 - b)]
    return np.clip(np.array(pts), 0.0, 1.0)


POINTS = [  # (K, member, ε_total, Q, p)
    (9, LocalRR(1.0), 2.0, 50, 0.8),
    (11, LocalRR(0.5), 4.0, 200, 0.75),
    (7, LocalRR(2.0), 1.0, 20, 0.9),
    (9, ApproxDP(0.5, 1e-8), 2.0, 100, 0.9),
    (7, ApproxDP(1.0, 1e-9), 1.0, 20, 0.75),
    (11, ApproxDP(0.3, 1e-9), 4.0, 100, 0.8),
]


@pytest.mark.parametrize(("K", "member", "eps_total", "Q", "p"), POINTS)
def test_designed_error_never_exceeds_gnmax_or_per_query_gamma_opt_and_total_rechecks_for_randomised_members(
        K, member, eps_total, Q, p, budget_check):
    b = TotalBudget(eps_total, 1e-5, Q)
    t = design_disjoint(K, member, b, IIDPrior(p)).table
    assert t.objective <= gnmax_error(K, b, p) * (1 + 1e-6)
    q = plurality_budget(b.epsilon, b.delta, b.queries)
    assert t.objective <= darrm.solve(DisjointParams(K, member, q.eps_query, q.delta_query), IIDPrior(p)).objective
    rec = t.info["total_budget"]
    assert rec["composed_epsilon"] <= eps_total
    budget_check.check_record(brute_points(t.gamma, member), rec)
    assert darrm.certify(t.gamma, t.params).certified


def test_the_target_lp_optimises_even_when_its_start_is_far_from_every_row():
    """A start (γ ≈ 0) far from binding any row of a loose target: the LP's optimum is returned, the same as
    from γ ≡ 1, not the start itself."""
    from darrm.accounting.budget.disjoint import solve_target
    from darrm.budget.cloud import Cloud
    from darrm.gamma import gamma_threshold, upper_half
    from darrm.models.disjoint import NonPrivate
    from darrm.solver.objective import objective_coefficients

    K = 11
    c = objective_coefficients(K, IIDPrior(0.8))[0]
    cloud = Cloud(K, NonPrivate())
    start = upper_half(gamma_threshold(K, 1e3))
    far = solve_target(cloud, c, np.array([2.0]), np.array([1e-6]), x0=start)
    cold = solve_target(cloud, c, np.array([2.0]), np.array([1e-6]))
    assert c @ far < c @ start - 0.1
    assert c @ far == pytest.approx(c @ cold, abs=1e-9)
