"""Total-budget design for budget groups on one-group shards (γ per group count): never worse than binary
GNMax on the total count or the per-query design with the generic composition at equal per-group totals,
and every group's certified total re-checked independently.

The independent check enumerates, for each budget group g, the changed member (of group g) at every
vertex of its region and every other member, one by one, at either end of its interval, builds each
group's count law by direct convolution and the release law from Algorithm 1's definition with γ read
per group (release the majority of all K votes w.p. γ(l), else a fair coin), both outputs and both
directions, and re-checks the record on those points (``budget_check``, tests/accounting/budget/conftest.py).
GNMax is written from its definition (the margin Σ_g l_g − K/2 plus N(0, s²), s = max_g √Q/μ_g,total with
μ from the analytic Gaussian composition: one record moves the count by at most 1); the per-query design
from the experiments' generic composition
(:func:`darrm.experiments.pate.multiclass_aggregators.plurality_budget`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

import darrm
from darrm.accounting.budget import parts, weighted_shards
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import CertificationError, ParameterError
from darrm.experiments.pate.multiclass_aggregators import plurality_budget
from darrm.models.disjoint import LocalRR, NonPrivate
from darrm.models.weighted_shards import WeightedShardParams
from darrm.prior import IIDPrior


def gaussian_delta(eps: float, mu: float) -> float:
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def gnmax_error(K: int, budgets: list[TotalBudget], p: float) -> float:
    s = max(math.sqrt(b.queries) / optimize.brentq(lambda m, b=b: gaussian_delta(b.epsilon, m) - b.delta, 1e-6, 50.0,
                                                    xtol=1e-14) for b in budgets)
    ell = np.arange(K + 1)
    release1 = stats.norm.cdf((ell - K / 2) / s)
    return abs(float(np.sum(stats.binom.pmf(ell, K, p) * (release1 - (ell > K / 2)))))


def per_query_error(member, sizes: list[int], budgets: list[TotalBudget], p: float) -> float:
    per = [plurality_budget(b.epsilon, b.delta, b.queries) for b in budgets]
    params = WeightedShardParams(member, [(k, q.eps_query, q.delta_query) for k, q in zip(sizes, per, strict=True)])
    return darrm.solve(params, IIDPrior(p)).objective


def group_points(gamma: np.ndarray, member, sizes: list[int], g: int) -> np.ndarray:
    """(x, y) of every configuration for a record of group g (module docstring)."""
    K = sum(sizes)
    grids = np.meshgrid(*[np.arange(k + 1) for k in sizes], indexing="ij")
    total = sum(grids)
    W1 = gamma * (total >= (K + 1) // 2) + (1.0 - gamma) / 2.0  # Pr[A = 1 | l]
    lo, hi = member.unchanged_ends()
    vs = member.changed_vertices()
    others = [(h, None) for h, k in enumerate(sizes) for _ in range(k - (1 if h == g else 0))]
    pts = []
    for v in range(vs.shape[0]):
        for ends in itertools.product((lo, hi), repeat=len(others)):
            laws = []
            for side in (0, 1):
                pmfs = [np.array([1.0]) for _ in sizes]
                pmfs[g] = np.array([1 - vs[v, side], vs[v, side]])
                for (h, _), q in zip(others, ends, strict=True):
                    pmfs[h] = np.convolve(pmfs[h], [1 - q, q])
                joint = pmfs[0]
                for pm in pmfs[1:]:
                    joint = np.multiply.outer(joint, pm)
                laws.append(float(np.sum(joint * W1)))
            a, b = laws
            pts += [(b, a), (a, b), (1 - b, 1 - a), (1 - a, 1 - b)]
    return np.clip(np.array(pts), 0.0, 1.0)


POINTS = [  # (member, sizes, ε_g,total, Q, p)
    (NonPrivate(), [2, 3], [1.0, 2.0], 20, 0.8),
    (LocalRR(0.5), [2, 2, 1], [2.0, 3.0, 4.0], 50, 0.75),
    (NonPrivate(), [3, 4], [1.0, 3.0], 100, 0.9),
]


def _design(member, sizes, totals, Q, p, **kw):
    params = WeightedShardParams(member, [(k, 1.0, 0.0) for k in sizes])
    budgets = [TotalBudget(e, 1e-5, Q) for e in totals]
    return params, budgets, weighted_shards.design(params, GroupBudgets(tuple(budgets)), IIDPrior(p), **kw)


@pytest.mark.parametrize(("member", "sizes", "totals", "Q", "p"), POINTS)
def test_designed_error_never_exceeds_binary_gnmax_or_the_per_query_design_and_group_totals_recheck(
        member, sizes, totals, Q, p, budget_check):
    params, budgets, d = _design(member, sizes, totals, Q, p)
    t = d.table
    # GNMax's exact-γ scale is feasible up to the float64 rounding of its table and the search's precision
    # on 1/s (1e-8): a relative 1e-6 covers both
    assert t.objective <= gnmax_error(sum(sizes), budgets, p) * (1 + 1e-6)
    assert t.objective <= per_query_error(member, sizes, budgets, p)
    records = t.info["group_budgets"]["groups"]
    for g, rec in enumerate(records):
        assert rec["composed_epsilon"] <= rec["epsilon"]
        budget_check.check_record(group_points(t.gamma, member, sizes, g), rec)
    assert weighted_shards.verify(t) == max(rec["composed_epsilon"] for rec in records)
    assert darrm.certify(t.gamma, t.params).certified


def test_a_deliberately_broken_target_is_caught_by_the_certificate(monkeypatch, budget_check):
    member, sizes, totals, Q, p = POINTS[0]
    real = parts.gdp_mu_for_total
    monkeypatch.setattr(parts, "gdp_mu_for_total", lambda e, dl, q: 2.0 * real(e, dl, q))
    params, budgets, d = _design(member, sizes, totals, Q, p, shapes=("gdp",))
    assert d.winner.family == "gdp" and d.winner.parameter < 0.75
    for g, rec in enumerate(d.table.info["group_budgets"]["groups"]):
        budget_check.check_record(group_points(d.table.gamma, member, sizes, g), rec)
    from darrm.models.groups.per_group import joint_of_total
    from darrm.models.weighted_shards.solver import table_form

    clouds = [weighted_shards.BudgetGroupCloud(params, i) for i in range(len(sizes))]
    broken = parts.PartSearch(params.K, clouds, GroupBudgets(tuple(budgets)), IIDPrior(p), None,
                              solve_per_query=lambda eq, dq: None, sensitivity=np.ones(len(sizes)),
                              form=table_form(params, IIDPrior(p)), lift=lambda gl: joint_of_total(gl, params))
    g, _ = broken.gdp(1.0)
    rec = {**d.table.info["group_budgets"]["groups"][0], "accountant": "gdp-vertex-certificate",
           "target": {"shape": "gdp", "mu": 2.0 * real(totals[0], 1e-5, Q)}}
    with pytest.raises(AssertionError):
        budget_check.check_record(group_points(g, member, sizes, 0), rec)
    with pytest.raises(CertificationError):
        weighted_shards.verify(dataclasses.replace(d.table, gamma=g))


def test_the_plain_majority_is_returned_when_it_fits_every_group():
    params = WeightedShardParams(LocalRR(0.05), [(2, 1.0, 0.0), (3, 1.0, 0.0)])
    d = weighted_shards.design(params, TotalBudget(4.0, 1e-5, 10), IIDPrior(0.75))
    assert np.all(d.table.gamma == 1.0) and d.winner.family == "majority"
    assert weighted_shards.verify(d.table) <= 4.0


def test_bad_arguments_are_refused_naming_the_parameter():
    params = WeightedShardParams(NonPrivate(), [(2, 1.0, 0.0), (3, 1.0, 0.0)])
    b = TotalBudget(1.0, 1e-5, 10)
    with pytest.raises(ParameterError, match="^budget:"):
        weighted_shards.design(params, GroupBudgets((b,)))
    with pytest.raises(ParameterError, match="^params:"):
        weighted_shards.design(WeightedShardParams(NonPrivate(), [(2, 1.0, 0.0), (3, 1.0, 0.0)], (1.0, 2.0)), b)
    with pytest.raises(ParameterError, match="^params:"):
        weighted_shards.design(darrm.DisjointParams(5, NonPrivate(), 1.0), b)
