"""Total-budget design for records with their own budgets (record groups copied into r_g shards): never
worse than upsampling GNMax or the per-query design with the generic composition at equal per-group
totals, and every group's certified total re-checked independently.

The independent check enumerates, for each record group g, every ordered tuple of the r_g changed
members' vertices and every number n of unchanged members at the upper end of their interval, builds
the vote count's law by direct convolution and the release law from Algorithm 1's definition (release
the majority w.p. γ(L), else a fair coin), takes both outputs and both directions, and re-checks the
record on those points (``budget_check``, tests/accounting/budget/conftest.py: dp_accounting's PLD of their
envelope, mpmath for a GDP charge).  Upsampling GNMax is written from its definition:
the margin L − K/2 plus N(0, s²), s = max_g r_g·√Q/μ_g with μ_g from the analytic Gaussian composition
(brentq); the per-query design from the experiments' generic composition
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
from darrm.accounting.budget import parts, shard_groups
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import CertificationError, ParameterError
from darrm.experiments.pate.multiclass_aggregators import plurality_budget
from darrm.models.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.models.shard_groups import ShardGroupParams
from darrm.prior import IIDPrior


def gaussian_delta(eps: float, mu: float) -> float:
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def signed_error(K: int, release1: np.ndarray, p: float) -> float:
    ell = np.arange(K + 1)
    return abs(float(np.sum(stats.binom.pmf(ell, K, p) * (release1 - (ell > K / 2)))))


def upsampling_gnmax_error(K: int, copies: list[int], budgets: list[TotalBudget], p: float) -> float:
    """GNMax on the count, σ large enough for every group: s = max_g r_g √Q / μ_g,total."""
    s = max(r * math.sqrt(b.queries) / optimize.brentq(lambda m, b=b: gaussian_delta(b.epsilon, m) - b.delta,
                                                        1e-6, 50.0, xtol=1e-14)
            for r, b in zip(copies, budgets, strict=True))
    return signed_error(K, stats.norm.cdf((np.arange(K + 1) - K / 2) / s), p)


def per_query_error(K: int, member, copies: list[int], budgets: list[TotalBudget], p: float) -> float:
    per = [plurality_budget(b.epsilon, b.delta, b.queries) for b in budgets]
    params = ShardGroupParams(K, member, [(r, q.eps_query, q.delta_query) for r, q in zip(copies, per, strict=True)])
    return darrm.solve(params, IIDPrior(p)).objective


def release_one(gamma: np.ndarray, pmf: np.ndarray) -> float:
    K = len(gamma) - 1
    ell = np.arange(K + 1)
    w = gamma * (ell >= (K + 1) // 2) + (1.0 - gamma) / 2.0
    return float(pmf @ w)


def group_points(gamma: np.ndarray, member, copies: int) -> np.ndarray:
    """(x, y) of every configuration of one record group: ordered vertex tuples, n at the upper end."""
    K = len(gamma) - 1
    vs = member.changed_vertices()
    lo, hi = member.unchanged_ends()
    pts = []
    for tup in itertools.product(range(vs.shape[0]), repeat=copies):
        for n in range(K - copies + 1):
            laws = []
            for side in (0, 1):
                pmf = np.array([1.0])
                for v in tup:
                    pmf = np.convolve(pmf, [1 - vs[v, side], vs[v, side]])
                for j in range(K - copies):
                    q = hi if j < n else lo
                    pmf = np.convolve(pmf, [1 - q, q])
                laws.append(release_one(gamma, pmf))
            a, b = laws  # Pr[A(D)=1], Pr[A(D')=1]
            pts += [(b, a), (a, b), (1 - b, 1 - a), (1 - a, 1 - b)]
    return np.clip(np.array(pts), 0.0, 1.0)


def independent_group_check(check, gamma: np.ndarray, member, copies: int, record: dict) -> None:
    """Re-check one group's recorded total (the budget conftest's ``check_record``) on its enumerated points."""
    check.check_record(group_points(gamma, member, copies), record)


POINTS = [  # (K, member, copies, ε_g,total, Q, p)
    (11, NonPrivate(), [1, 2], [1.0, 2.0], 20, 0.8),
    (9, LocalRR(0.5), [1, 3], [2.0, 4.0], 50, 0.75),
    (13, ApproxDP(0.5, 1e-9), [1, 1, 2], [1.0, 2.0, 3.0], 100, 0.9),
]


def _design(K, member, copies, totals, Q, p, **kw):
    params = ShardGroupParams(K, member, [(r, 1.0, 0.0) for r in copies])
    budgets = [TotalBudget(e, 1e-5, Q) for e in totals]
    return params, budgets, shard_groups.design(params, GroupBudgets(tuple(budgets)), IIDPrior(p), **kw)


@pytest.fixture(scope="module")
def designed():
    """``designed(i)``: :func:`_design` of ``POINTS[i]`` (all shapes), searched once for the module: the
    tests that need *a* designed table and its record share it."""
    cache: dict[int, tuple] = {}

    def get(i: int) -> tuple:
        if i not in cache:
            cache[i] = _design(*POINTS[i])
        return cache[i]

    return get


@pytest.mark.parametrize("i", range(len(POINTS)), ids=[f"K{pt[0]}-Q{pt[4]}" for pt in POINTS])
def test_designed_error_never_exceeds_upsampling_gnmax_or_the_per_query_design_and_group_totals_recheck(
        i, designed, budget_check):
    K, member, copies, totals, Q, p = POINTS[i]
    params, budgets, d = designed(i)
    t = d.table
    # GNMax's exact-γ scale is feasible up to the float64 rounding of its table and the search's
    # precision on 1/s (1e-8): a relative 1e-6 covers both
    assert t.objective <= upsampling_gnmax_error(K, copies, budgets, p) * (1 + 1e-6)
    assert t.objective <= per_query_error(K, member, copies, budgets, p)
    groups = t.info["group_budgets"]["groups"]
    assert len(groups) == len(copies)
    for r, rec in zip(copies, groups, strict=True):
        assert rec["composed_epsilon"] <= rec["epsilon"]
        independent_group_check(budget_check, t.gamma, member, r, rec)
    # verify recomputes every group's total from γ alone and keeps the smallest valid bound: never above the
    # records, never below dp_accounting's optimistic composition of any group's enumerated pairs
    floor = max(budget_check.composed_pair(group_points(t.gamma, member, r), Q, rec["delta"], pessimistic=False)
                for r, rec in zip(copies, groups, strict=True))
    assert floor <= shard_groups.verify(t) <= max(rec["composed_epsilon"] for rec in groups)
    assert darrm.certify(t.gamma, t.params).certified  # the per-query certificate it carries


def test_a_deliberately_broken_target_is_caught_by_the_certificate(monkeypatch, budget_check):
    """Targets twice the budget's μ: the LP meets them, the certified totals refuse them, the search
    backs off, and the result meets every budget by the independent check."""
    real = parts.gdp_mu_for_total
    monkeypatch.setattr(parts, "gdp_mu_for_total", lambda e, d, q: 2.0 * real(e, d, q))
    K, member, copies, totals, Q, p = POINTS[0]
    params, budgets, d = _design(K, member, copies, totals, Q, p, shapes=("gdp",))
    assert d.winner.family == "gdp" and d.winner.parameter < 0.75  # θ = 1 (the broken target) was refused
    for r, rec in zip(copies, d.table.info["group_budgets"]["groups"], strict=True):
        independent_group_check(budget_check, d.table.gamma, member, r, rec)
    # a γ meeting the broken target, with the budget recorded: the enumeration and verify refuse it
    clouds = [shard_groups.RecordGroupCloud(params, i) for i in range(len(copies))]
    broken = parts.PartSearch(K, clouds, GroupBudgets(tuple(budgets)), IIDPrior(p), None,
                              solve_per_query=lambda eq, dq: np.ones(K + 1), sensitivity=np.array(copies, float))
    g, _ = broken.gdp(1.0)
    rec = {**d.table.info["group_budgets"]["groups"][0], "accountant": "gdp-vertex-certificate",
           "target": {"shape": "gdp", "mu": 2.0 * real(totals[0], 1e-5, Q)}}
    with pytest.raises(AssertionError):
        independent_group_check(budget_check, g, member, copies[0], rec)
    forged = dataclasses.replace(d.table, gamma=g)
    with pytest.raises(CertificationError):
        shard_groups.verify(forged)


def test_a_record_claiming_a_smaller_target_or_total_is_refused(designed):
    *_, d = designed(0)
    t = d.table
    groups = t.info["group_budgets"]["groups"]

    def with_group0(**change):
        rec = {**t.info["group_budgets"], "groups": [{**groups[0], **change}, *groups[1:]]}
        return dataclasses.replace(t, info={**t.info, "group_budgets": rec})

    mu = groups[0]["target"]["mu"]
    with pytest.raises(CertificationError, match="GDP per query"):
        shard_groups.verify(with_group0(target={"shape": "gdp", "mu": mu * 0.9}))
    with pytest.raises(CertificationError, match="differs"):
        shard_groups.verify(with_group0(composed_epsilon=groups[0]["composed_epsilon"] * 0.9))
    with pytest.raises(CertificationError, match="above its budget"):
        shard_groups.verify(with_group0(epsilon=groups[0]["composed_epsilon"] * 0.5))
    with pytest.raises(CertificationError, match="malformed"):
        shard_groups.verify(dataclasses.replace(t, info={**t.info, "group_budgets": {"groups": groups[:1]}}))


def test_the_plain_majority_is_returned_when_it_fits_every_group():
    params = ShardGroupParams(9, LocalRR(0.05), [(1, 1.0, 0.0), (2, 1.0, 0.0)])
    d = shard_groups.design(params, TotalBudget(4.0, 1e-5, 10), IIDPrior(0.75))
    assert np.array_equal(d.table.gamma, np.ones(10)) and d.winner.family == "majority"
    assert d.table.info["design"]["majority_fits"]
    assert shard_groups.verify(d.table) <= 4.0


def test_bad_budgets_are_refused_naming_the_parameter():
    params = ShardGroupParams(9, NonPrivate(), [(1, 1.0, 0.0), (2, 1.0, 0.0)])
    b = TotalBudget(1.0, 1e-5, 10)
    with pytest.raises(ParameterError, match="^budget:"):
        shard_groups.design(params, GroupBudgets((b,)))
    with pytest.raises(ParameterError, match="^budget:"):
        shard_groups.design(params, (1.0, 1e-5, 10))
    with pytest.raises(ParameterError, match="^budgets:"):
        GroupBudgets((b, TotalBudget(1.0, 1e-5, 11)))
    with pytest.raises(ParameterError, match="^budgets:"):
        GroupBudgets(())
    with pytest.raises(ParameterError, match="^params:"):
        shard_groups.design(darrm.DisjointParams(9, NonPrivate(), 1.0), b)
    with pytest.raises(ParameterError, match="^shapes:"):
        shard_groups.design(params, b, shapes=("gnmax",))
    assert GroupBudgets.from_dict(GroupBudgets((b, b)).to_dict()) == GroupBudgets((b, b))
