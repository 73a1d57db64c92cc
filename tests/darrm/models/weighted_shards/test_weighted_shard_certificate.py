"""The budget-groups certificate against an independent brute force in high precision.

The brute force picks, for every budget group g, every member i of group g as the changed one and
puts it at every vertex of the member region, and each of the K − 1 other members, one by one, at
each end of its interval (every vertex configuration, no exchangeability assumed); it builds each
group's vote-count law at 40 digits with mpmath from the members' own vote probabilities, and
evaluates Algorithm 1 read per group count, Pr[A = 1] = Σ_l Π_h α_h[l_h]·(γ(l)·1{Σ l ≥ mid} +
(1 − γ(l))/2), and Pr[A = 0] = 1 − Pr[A = 1] at 40 digits, for both outputs and both directions
with group g's (ε_g, δ_g).  It shares no code with :mod:`darrm.models.weighted_shards` except γ; the
vertices and the Bernoulli-sum law come from the high-precision reference
(:func:`references.profile_reference.mp_member_region`, :func:`~references.profile_reference.mp_pmf`).
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from references.profile_reference import mp_member_region as _region
from references.profile_reference import mp_pmf as _pmf

from darrm.models.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.models.weighted_shards import (
    WeightedShardParams,
    certify_weighted_shards,
    constraint_row,
    lp_variables,
    solve_gamma_opt_weighted_shards,
    violations,
)
from darrm.models.weighted_shards.certificate import flat_violations
from darrm.prior import IIDPrior
from darrm.privacy.condition import rhs as exact_rhs

mpmath.mp.dps = 40


def _release_one(laws, gamma, mid) -> mpmath.mpf:
    """Pr[A = 1] of Algorithm 1 reading each group's count, for independent group-count laws."""
    total = mpmath.mpf(0)
    for cell in itertools.product(*[range(len(a)) for a in laws]):
        pr = mpmath.fprod(a[k] for a, k in zip(laws, cell, strict=True))
        g = mpmath.mpf(float(gamma[cell]))
        total += pr * (g * (1 if sum(cell) >= mid else 0) + (1 - g) / 2)
    return total


def brute_pairs(gamma: np.ndarray, params: WeightedShardParams):
    """(g, Pr[A(D)=1], Pr[A(D′)=1]) at 40 digits for every budget group g, every changed member of
    group g, every vertex of it and every end of every other member."""
    verts, ends = _region(params.member)
    sizes = [g.size for g in params.groups]
    mid = (sum(sizes) + 1) // 2
    for gi, grp in enumerate(params.groups):
        for i in range(grp.size):
            for v in verts:
                for others in itertools.product(ends, repeat=sum(sizes) - 1):
                    it = iter(others)
                    members = [[next(it) for _ in range(k - (h == gi))] for h, k in enumerate(sizes)]
                    pd = [list(m) for m in members]
                    pdp = [list(m) for m in members]
                    pd[gi].insert(i, v[0])
                    pdp[gi].insert(i, v[1])
                    yield gi, _release_one([_pmf(ps) for ps in pd], gamma, mid), \
                        _release_one([_pmf(ps) for ps in pdp], gamma, mid)


def brute_force(gamma: np.ndarray, params: WeightedShardParams) -> list[mpmath.mpf]:
    """For every budget group g: the largest exact Pr[A(D)=o] − e^{ε_g} Pr[A(D′)=o] − δ_g over every
    configuration of :func:`brute_pairs`, both outputs and both directions."""
    worst = [mpmath.mpf(-10)] * len(params.groups)
    for gi, a1, b1 in brute_pairs(gamma, params):
        grp = params.groups[gi]
        e, d = mpmath.exp(mpmath.mpf(grp.target_eps)), mpmath.mpf(grp.target_delta)
        for pa, pb in ((a1, b1), (1 - a1, 1 - b1)):
            worst[gi] = max(worst[gi], pa - e * pb - d, pb - e * pa - d)
    return worst


CASES = [
    WeightedShardParams(NonPrivate(), [(2, 0.5, 1e-4), (1, 2.0, 1e-3)]),
    WeightedShardParams(ApproxDP(0.3, 1e-3), [(1, 0.4, 1e-3), (2, 0.9, 2e-3)]),
    WeightedShardParams(LocalRR(1.0), [(1, 0.8, 0.0), (1, 1.5, 1e-5), (1, 0.6, 1e-5)]),
    WeightedShardParams(NonPrivate(), [(2, 0.5, 1e-4), (1, 2.0, 1e-3)], weights=(1.0, 3.0)),
]
IDS = ["nonprivate", "approx-dp", "rr-three-groups", "weighted"]


@pytest.mark.parametrize("params", CASES, ids=IDS)
def test_certified_gamma_opt_is_private_for_every_group_by_brute_force(params):
    table = solve_gamma_opt_weighted_shards(params, IIDPrior(0.75))
    assert certify_weighted_shards(table.gamma, params).certified
    worst = brute_force(table.gamma, params)
    assert all(w <= 0 for w in worst), worst
    assert max(worst) > -1e-6  # tight: the optimum makes some group's constraint (nearly) active


@pytest.mark.parametrize("params", CASES[:3], ids=IDS[:3])
def test_reduction_finds_the_brute_force_worst_of_every_group(params):
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, int(lp_variables(params).size))
    from darrm.models.weighted_shards import table_form

    gamma = table_form(params, IIDPrior()).full(x)
    exact = brute_force(gamma, params)
    for gi, v in enumerate(violations(gamma, params)):
        raw = float(v.values.max()) * params.check_for(gi).rhs / 2.0  # back to probability units
        # the certificate's bound is above the exact worst by at most its rounding allowance
        assert float(exact[gi]) - 1e-15 <= raw <= float(exact[gi]) + 1e-12


def test_a_broken_table_is_caught_by_the_certificate_and_the_brute_force():
    """γ_opt for the wrong targets (every group at the loosest budget) is not private for the real
    ones: the certificate refuses it and the brute force finds the violation."""
    real = CASES[0]
    loose = WeightedShardParams(NonPrivate(), [(2, 2.0, 1e-3), (1, 2.0, 1e-3)])
    gamma = solve_gamma_opt_weighted_shards(loose, IIDPrior(0.75)).gamma
    assert certify_weighted_shards(gamma, loose).certified
    assert brute_force(gamma, real)[0] > 1e-3
    cert = certify_weighted_shards(gamma, real)
    assert not cert.certified and cert.violation > 0 and cert.worst_counts[0] == 0


def test_a_table_nudged_past_one_groups_bound_is_caught():
    """Raising the binding γ entries of a certified optimum by 1 % breaks some group's inequality: the
    certificate (float64, rigorous) and the 40-digit brute force agree that it is not private."""
    params = CASES[2]
    gamma = solve_gamma_opt_weighted_shards(params, IIDPrior(0.75)).gamma
    broken = np.minimum(1.0, gamma * 1.01 + 0.01)
    assert not np.array_equal(broken, gamma)
    assert max(brute_force(broken, params)) > 0
    assert not certify_weighted_shards(broken, params).certified


@pytest.mark.parametrize("params", [CASES[1], CASES[3]], ids=["per-group", "weighted"])
def test_rows_are_the_violations_in_lp_form(params):
    """Each normalised LP row gives its configuration's violation: (row·x − 1)·rhs_g / 2 equals the
    certificate's raw bound to rounding (the LP and the certificate describe the same constraints)."""
    from darrm.models.weighted_shards import table_form

    rng = np.random.default_rng(5)
    var = lp_variables(params)
    x = rng.uniform(0, 1, int(var.max()) + 1)
    gamma = table_form(params, IIDPrior()).full(x)
    per = violations(gamma, params)
    flat = flat_violations(per)
    offset = 0
    for gi, v in enumerate(per):
        grp, chk = params.groups[gi], params.check_for(gi)
        for j in range(v.values.size):
            row = constraint_row(params, offset + j, var)
            lp_violation = (row @ x - 1.0) * exact_rhs(grp.target_eps, grp.target_delta) / 2.0
            assert abs(lp_violation - flat[offset + j] * chk.rhs / 2.0) < 1e-12
        offset += v.values.size
