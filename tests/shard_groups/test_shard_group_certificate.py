"""The record-groups certificate against an independent brute force in high precision.

The brute force puts each of group g's r_g changed members, one by one (an ordered tuple, not a
multiset), at every vertex of the member region, and each unchanged member, one by one, at each
end of its interval; it builds the vote-count pmf at 40 digits with mpmath from the members' own
vote probabilities and evaluates Lemma 3.4's inequalities for both outputs and both directions
with group g's (ε_g, δ_g).  It shares no code with :mod:`darrm.shard_groups` except γ; the
vertices are recomputed here from the member model's definition.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from darrm.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.gamma import symmetric_from_upper
from darrm.prior import IIDPrior
from darrm.shard_groups import ShardGroupParams, certify_shard_groups, solve_gamma_opt_shard_groups, violations
from darrm.shard_groups.certificate import constraint_row, flat_violations

mpmath.mp.dps = 40


def _region(member) -> tuple[list[tuple], tuple]:
    """(vertices of the changed member's (p, p′) region, ends of an unchanged member's p), at 40 digits."""
    if isinstance(member, NonPrivate):
        return [(mpmath.mpf(a), mpmath.mpf(b)) for a in (0, 1) for b in (0, 1)], (mpmath.mpf(0), mpmath.mpf(1))
    if isinstance(member, LocalRR):
        r = 1 / (mpmath.exp(mpmath.mpf(member.eps0)) + 1)
        return [(a, b) for a in (r, 1 - r) for b in (r, 1 - r)], (r, 1 - r)
    e, D = mpmath.exp(mpmath.mpf(member.eps)), mpmath.mpf(member.delta)
    hi, lo = (e + D) / (e + 1), (1 - D) / (e + 1)
    pts = [(0, 0), (1, 1), (hi, lo), (lo, hi)]
    if member.delta > 0:
        pts += [(0, D), (D, 0), (1 - D, 1), (1, 1 - D)]
    return [(mpmath.mpf(p), mpmath.mpf(q)) for p, q in pts], (mpmath.mpf(0), mpmath.mpf(1))


def _pmf(ps) -> list:
    """The law of a sum of independent Bernoulli(p) votes, by definition (40 digits)."""
    a = [mpmath.mpf(1)]
    for p in ps:
        a = [(a[i] if i < len(a) else 0) * (1 - p) + (a[i - 1] * p if i > 0 else 0) for i in range(len(a) + 1)]
    return a


def _release_one(alpha, gamma) -> mpmath.mpf:
    """Pr[A = 1] of Algorithm 1 for the vote-count law ``alpha``."""
    K = len(alpha) - 1
    mid = (K + 1) // 2
    return mpmath.fsum(a * (mpmath.mpf(float(g)) * (1 if l >= mid else 0) + (1 - mpmath.mpf(float(g))) / 2)
                       for l, (a, g) in enumerate(zip(alpha, gamma, strict=True)))


def brute_force(gamma: np.ndarray, params: ShardGroupParams) -> list[mpmath.mpf]:
    """For every record group: the largest exact Pr[A(D)=o] − e^{ε_g} Pr[A(D′)=o] − δ_g over every ordered
    tuple of vertices of its r_g changed members, every end of each unchanged member, both outputs and
    both directions."""
    verts, ends = _region(params.member)
    out = []
    for grp in params.groups:
        r, e, d = grp.copies, mpmath.exp(mpmath.mpf(grp.target_eps)), mpmath.mpf(grp.target_delta)
        worst = mpmath.mpf(-10)
        for changed in itertools.product(verts, repeat=r):
            for others in itertools.product(ends, repeat=params.K - r):
                a1 = _release_one(_pmf([v[0] for v in changed] + list(others)), gamma)
                b1 = _release_one(_pmf([v[1] for v in changed] + list(others)), gamma)
                for pa, pb in ((a1, b1), (1 - a1, 1 - b1)):
                    worst = max(worst, pa - e * pb - d, pb - e * pa - d)
        out.append(worst)
    return out


CASES = [
    ShardGroupParams(5, NonPrivate(), [(1, 0.5, 1e-4), (2, 1.0, 1e-4), (3, 2.0, 1e-3)]),
    ShardGroupParams(5, ApproxDP(0.3, 1e-3), [(1, 0.4, 1e-3), (2, 0.9, 2e-3)]),
    ShardGroupParams(7, LocalRR(1.0), [(2, 0.8, 0.0), (3, 1.5, 1e-5)]),
]


@pytest.mark.parametrize("params", CASES, ids=["nonprivate", "approx-dp", "rr"])
def test_certified_gamma_opt_is_private_for_every_group_by_brute_force(params):
    table = solve_gamma_opt_shard_groups(params, IIDPrior(0.75))
    assert certify_shard_groups(table.gamma, params).certified
    worst = brute_force(table.gamma, params)
    assert all(w <= 0 for w in worst), worst
    # tight: the optimum makes some group's constraint (nearly) active
    assert max(w for w in worst) > -1e-6


@pytest.mark.parametrize("params", CASES, ids=["nonprivate", "approx-dp", "rr"])
def test_reduction_finds_the_brute_force_worst_of_every_group(params):
    rng = np.random.default_rng(3)
    gamma = symmetric_from_upper(rng.uniform(0, 1, (params.K + 1) // 2), params.K)
    exact = brute_force(gamma, params)
    for gi, v in enumerate(violations(gamma, params)):
        chk = params.check_for(gi)
        raw = float(v.values.max()) * chk.rhs / 2.0  # back to probability units
        # the certificate's bound is above the exact worst by at most its rounding allowance
        assert float(exact[gi]) - 1e-15 <= raw <= float(exact[gi]) + 1e-12


def test_interior_points_never_exceed_the_vertex_worst():
    """The reduction's claim (a), (b): random points inside the changed members' region and inside the
    unchanged members' interval do no worse than the vertices and ends."""
    params = ShardGroupParams(5, ApproxDP(0.3, 1e-3), [(2, 0.9, 2e-3)])
    gamma = symmetric_from_upper(np.array([0.9, 0.7, 0.4]), 5)
    verts, ends = _region(params.member)
    worst = brute_force(gamma, params)[0]
    rng = np.random.default_rng(0)
    e, d = mpmath.exp(mpmath.mpf(0.9)), mpmath.mpf(2e-3)
    for _ in range(300):
        changed = []
        for _k in range(2):
            wts = rng.dirichlet(np.ones(len(verts)))
            changed.append((mpmath.fsum(mpmath.mpf(w) * v[0] for w, v in zip(wts, verts, strict=True)),
                            mpmath.fsum(mpmath.mpf(w) * v[1] for w, v in zip(wts, verts, strict=True))))
        others = [mpmath.mpf(rng.uniform()) * (ends[1] - ends[0]) + ends[0] for _ in range(3)]
        a1 = _release_one(_pmf([c[0] for c in changed] + others), gamma)
        b1 = _release_one(_pmf([c[1] for c in changed] + others), gamma)
        for pa, pb in ((a1, b1), (1 - a1, 1 - b1)):
            assert max(pa - e * pb - d, pb - e * pa - d) <= worst + mpmath.mpf(1e-30)


def test_a_gamma_that_ignores_the_copies_is_refused_by_both():
    """γ_opt solved as if every record sat in one shard is not private once records are copied: the
    brute force finds the violation and the certificate refuses it (a broken mechanism is caught)."""
    one = ShardGroupParams(5, NonPrivate(), [(1, 1.0, 1e-4)])
    three = ShardGroupParams(5, NonPrivate(), [(3, 1.0, 1e-4)])
    gamma = solve_gamma_opt_shard_groups(one, IIDPrior(0.75)).gamma
    assert brute_force(gamma, three)[0] > 1e-3
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
