"""Total-budget design for grouped members on shared data: never worse than the per-query γ_opt with the
exact generic composition (nor RR) at equal total, and its certified total re-checked independently.

The independent check puts every member, one by one (ordered, not as multisets), at every vertex of its
own group's region (the vertices recomputed here from (ε_g, Δ_g)), builds the vote count's law by direct
convolution and the release law from Algorithm 1's definition, takes both outputs and both directions,
and re-checks the record on those points (``budget_check``, tests/accounting/budget/conftest.py).  The
per-query baseline is γ_opt at the per-query (ε_q, δ_total/(2Q)) of the experiments' generic composition
(:func:`darrm.experiments.pate.multiclass_aggregators.plurality_budget`), solved by ``darrm.solve``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

import darrm
from darrm.accounting.budget import groups, parts
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import CertificationError, ParameterError
from darrm.experiments.pate.multiclass_aggregators import plurality_budget
from darrm.models.groups import GroupParams
from darrm.prior import IIDPrior


def vertices(eps: float) -> list[tuple[float, float]]:
    """The vertices of the pure ε-DP region {(p, p′): p ≤ e^ε p′, 1 − p ≤ e^ε (1 − p′), and swapped}: the
    diagonal's ends and the two points where both constraints bind (the test's groups have Δ = 0)."""
    q = 1.0 / (1.0 + math.exp(eps))
    return [(0.0, 0.0), (1.0, 1.0), (1.0 - q, q), (q, 1.0 - q)]


def brute_points(gamma: np.ndarray, member_groups: list[tuple[int, float, float]]) -> np.ndarray:
    """(x, y) for every member at every vertex of its own region (ordered), both outputs and directions."""
    K = len(gamma) - 1
    ell = np.arange(K + 1)
    w = gamma * (ell >= (K + 1) // 2) + (1.0 - gamma) / 2.0  # Pr[A = 1 | L], Algorithm 1
    assert all(D == 0.0 for _, _, D in member_groups)
    regions = [vertices(e) for size, e, _ in member_groups for _ in range(size)]
    pts = []
    for assignment in itertools.product(*regions):
        laws = []
        for side in (0, 1):
            pmf = np.array([1.0])
            for v in assignment:
                pmf = np.convolve(pmf, [1 - v[side], v[side]])
            laws.append(float(pmf @ w))
        a, b = laws
        pts += [(b, a), (a, b), (1 - b, 1 - a), (1 - a, 1 - b)]
    return np.clip(np.array(pts), 0.0, 1.0)


def per_query_error(member_groups, budget: TotalBudget, p: float) -> float:
    q = plurality_budget(budget.epsilon, budget.delta, budget.queries)
    return darrm.solve(GroupParams(member_groups, q.eps_query, q.delta_query), IIDPrior(p)).objective


POINTS = [  # (groups (size, ε_g, Δ_g), ε_total, Q, p)
    ([(2, 0.2, 0.0), (3, 0.5, 0.0)], 2.0, 20, 0.75),
    ([(1, 0.3, 0.0), (2, 0.1, 0.0), (2, 0.6, 0.0)], 1.0, 100, 0.8),
    ([(3, 0.05, 0.0), (4, 0.2, 0.0)], 4.0, 1000, 0.9),
]


@pytest.mark.parametrize(("member_groups", "eps_total", "Q", "p"), POINTS)
def test_designed_error_never_exceeds_the_per_query_design_with_generic_composition_and_total_rechecks(
        member_groups, eps_total, Q, p, budget_check):
    budget = TotalBudget(eps_total, 1e-5, Q)
    d = groups.design(GroupParams(member_groups, 1.0, 0.0), budget, IIDPrior(p))
    t = d.table
    assert t.objective <= per_query_error(member_groups, budget, p)
    if "const" in d.best:
        assert t.objective <= d.best["const"].error
    (rec,) = t.info["group_budgets"]["groups"]
    assert rec["composed_epsilon"] <= eps_total
    budget_check.check_record(brute_points(t.gamma, member_groups), rec)
    assert groups.verify(t) == rec["composed_epsilon"]
    assert darrm.certify(t.gamma, t.params).certified  # the per-query certificate it carries


def test_a_deliberately_broken_target_is_caught_by_the_certificate(monkeypatch, budget_check):
    """A GDP target twice the budget's μ: the LP meets it, the certified total refuses it, the search backs
    off; a γ at the broken target fails the enumeration and verify."""
    member_groups, eps_total, Q, p = POINTS[0]
    params, budget = GroupParams(member_groups, 1.0, 0.0), TotalBudget(eps_total, 1e-5, Q)
    real = parts.gdp_mu_for_total
    monkeypatch.setattr(parts, "gdp_mu_for_total", lambda e, dl, q: 2.0 * real(e, dl, q))
    d = groups.design(params, budget, IIDPrior(p), shapes=("gdp",))
    assert d.winner.family == "gdp" and d.winner.parameter < 0.75
    (rec,) = d.table.info["group_budgets"]["groups"]
    budget_check.check_record(brute_points(d.table.gamma, member_groups), rec)
    broken = parts.PartSearch(params.K, [groups.MemberGroupsCloud(params)], GroupBudgets((budget,)), IIDPrior(p),
                              None, solve_per_query=lambda eq, dq: np.ones(params.K + 1))
    g, _ = broken.gdp(1.0)
    forged_rec = {**rec, "accountant": "gdp-vertex-certificate",
                  "target": {"shape": "gdp", "mu": 2.0 * real(eps_total, 1e-5, Q)}}
    with pytest.raises(AssertionError):
        budget_check.check_record(brute_points(g, member_groups), forged_rec)
    with pytest.raises(CertificationError):
        groups.verify(dataclasses.replace(d.table, gamma=g))


def test_the_plain_majority_is_returned_when_it_fits():
    d = groups.design(GroupParams([(2, 0.01, 0.0), (3, 0.02, 0.0)], 1.0, 0.0), TotalBudget(4.0, 1e-5, 10))
    assert np.array_equal(d.table.gamma, np.ones(6)) and d.winner.family == "majority"
    assert groups.verify(d.table) <= 4.0


def test_bad_arguments_are_refused_naming_the_parameter():
    b = TotalBudget(1.0, 1e-5, 10)
    with pytest.raises(ParameterError, match="^budget:"):
        groups.design(GroupParams([(2, 0.2, 0.0), (3, 0.5, 0.0)], 1.0, 0.0), (1.0, 1e-5, 10))
    with pytest.raises(ParameterError, match="^params:"):
        groups.design(GroupParams([(2, 0.2, 0.0), (3, 0.5, 0.0)], 1.0, 0.0, gamma_form="per-group"), b)
    with pytest.raises(ParameterError, match="^params:"):
        groups.design(GroupParams([(10, 0.2, 1e-9), (11, 0.5, 1e-9)], 1.0, 1e-9), b)  # too many configurations
    with pytest.raises(ParameterError, match="^params:"):
        groups.design(darrm.PrivacyParams(11, 1, 0.1, 0.0), b)
