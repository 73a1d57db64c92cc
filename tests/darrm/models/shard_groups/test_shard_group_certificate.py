"""The record-groups certificate against an independent brute force in high precision.

The brute force (tests/darrm/models/shard_groups/conftest.py) evaluates Lemma 3.4's inequalities for both
outputs and both directions with group g's (ε_g, δ_g) at every ordered tuple of vertices of the
changed members and every end of every unchanged member, at 40 digits; it shares no code with
:mod:`darrm.models.shard_groups` except γ.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from darrm.gamma import symmetric_from_upper
from darrm.models.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.models.shard_groups import ShardGroupParams, certify_shard_groups, solve_gamma_opt_shard_groups, violations
from darrm.models.shard_groups.certificate import constraint_row, flat_violations
from darrm.prior import IIDPrior

CASES = [
    ShardGroupParams(5, NonPrivate(), [(1, 0.5, 1e-4), (2, 1.0, 1e-4), (3, 2.0, 1e-3)]),
    ShardGroupParams(5, ApproxDP(0.3, 1e-3), [(1, 0.4, 1e-3), (2, 0.9, 2e-3)]),
    ShardGroupParams(7, LocalRR(1.0), [(2, 0.8, 0.0), (3, 1.5, 1e-5)]),
]


@pytest.mark.parametrize("params", CASES, ids=["nonprivate", "approx-dp", "rr"])
def test_certified_gamma_opt_is_private_for_every_group_by_brute_force(params, brute):
    table = solve_gamma_opt_shard_groups(params, IIDPrior(0.75))
    assert certify_shard_groups(table.gamma, params).certified
    worst = brute.worst(table.gamma, params)
    assert all(w <= 0 for w in worst), worst
    # tight: the optimum makes some group's constraint (nearly) active
    assert max(w for w in worst) > -1e-6


@pytest.mark.parametrize("params", CASES, ids=["nonprivate", "approx-dp", "rr"])
def test_reduction_finds_the_brute_force_worst_of_every_group(params, brute):
    rng = np.random.default_rng(3)
    gamma = symmetric_from_upper(rng.uniform(0, 1, (params.K + 1) // 2), params.K)
    exact = brute.worst(gamma, params)
    for gi, v in enumerate(violations(gamma, params)):
        chk = params.check_for(gi)
        raw = float(v.values.max()) * chk.rhs / 2.0  # back to probability units
        # the certificate's bound is above the exact worst by at most its rounding allowance
        assert float(exact[gi]) - 1e-15 <= raw <= float(exact[gi]) + 1e-12


def test_interior_points_never_exceed_the_vertex_worst(brute):
    """The reduction's claim (a), (b): random points inside the changed members' region and inside the
    unchanged members' interval do no worse than the vertices and ends."""
    params = ShardGroupParams(5, ApproxDP(0.3, 1e-3), [(2, 0.9, 2e-3)])
    gamma = symmetric_from_upper(np.array([0.9, 0.7, 0.4]), 5)
    verts, ends = brute.region(params.member)
    worst = brute.worst(gamma, params)[0]
    rng = np.random.default_rng(0)
    e, d = mpmath.exp(mpmath.mpf(0.9)), mpmath.mpf(2e-3)
    for _ in range(300):
        changed = []
        for _k in range(2):
            wts = rng.dirichlet(np.ones(len(verts)))
            changed.append((mpmath.fsum(mpmath.mpf(w) * v[0] for w, v in zip(wts, verts, strict=True)),
                            mpmath.fsum(mpmath.mpf(w) * v[1] for w, v in zip(wts, verts, strict=True))))
        others = [mpmath.mpf(rng.uniform()) * (ends[1] - ends[0]) + ends[0] for _ in range(3)]
        a1 = brute.release_one(brute.pmf([c[0] for c in changed] + others), gamma)
        b1 = brute.release_one(brute.pmf([c[1] for c in changed] + others), gamma)
        for pa, pb in ((a1, b1), (1 - a1, 1 - b1)):
            assert max(pa - e * pb - d, pb - e * pa - d) <= worst + mpmath.mpf(1e-30)


def test_a_gamma_that_ignores_the_copies_is_refused_by_both(brute):
    """γ_opt solved as if every record sat in one shard is not private once records are copied: the
    brute force finds the violation and the certificate refuses it (a broken mechanism is caught)."""
    one = ShardGroupParams(5, NonPrivate(), [(1, 1.0, 1e-4)])
    three = ShardGroupParams(5, NonPrivate(), [(3, 1.0, 1e-4)])
    gamma = solve_gamma_opt_shard_groups(one, IIDPrior(0.75)).gamma
    assert brute.worst(gamma, three)[0] > 1e-3
    cert = certify_shard_groups(gamma, three)
    assert not cert.certified and cert.violation > 0


def test_rows_are_the_violations_in_lp_form():
    """Each normalised LP row gives its configuration's violation: (row·x − 1)·rhs_g / 2 equals the
    certificate's raw bound to rounding (the LP and the certificate describe the same constraints)."""
    params = CASES[1]
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (params.K + 1) // 2)
    gamma = symmetric_from_upper(x, params.K)
    per = violations(gamma, params)
    flat = flat_violations(per)
    from darrm.privacy.condition import rhs as exact_rhs

    offset = 0
    for gi, v in enumerate(per):
        grp, chk = params.groups[gi], params.check_for(gi)
        for j in range(v.values.size):
            row = constraint_row(params, offset + j)
            lp_violation = (row @ x - 1.0) * exact_rhs(grp.target_eps, grp.target_delta) / 2.0
            assert abs(lp_violation - flat[offset + j] * chk.rhs / 2.0) < 1e-12
        offset += v.values.size
