"""The grouped certificate against an independent brute force in high precision.

The brute force puts every member, one by one (ordered, not as multisets), at every vertex of its
own group's region, builds the vote-count pmfs with mpmath at 40 digits and evaluates Lemma 3.4's
four inequalities exactly; it shares no code with :mod:`darrm.groups.certificate` except the
corners' coordinates, which it recomputes from (ε_g, Δ_g) itself.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from darrm.gamma import symmetric_from_upper
from darrm.groups.certificate import certify_groups, configuration_violations
from darrm.groups.params import GroupParams

mpmath.mp.dps = 40


def _vertices(eps: float, Delta: float) -> list[tuple]:
    """The vertices of {(p, p′): p ≤ e^ε p′ + Δ, 1 − p ≤ e^ε (1 − p′) + Δ, and swapped} ∩ [0, 1]²."""
    e, D = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(Delta)
    hi, lo = (e + D) / (e + 1), (1 - D) / (e + 1)
    pts = [(0, 0), (1, 1), (hi, lo), (lo, hi)]
    if Delta > 0:
        pts += [(0, D), (D, 0), (1 - D, 1), (1, 1 - D)]
    return [(mpmath.mpf(p), mpmath.mpf(q)) for p, q in pts]


def _pmf(ps) -> list:
    a = [mpmath.mpf(1)]
    for p in ps:
        a = [(a[i] if i < len(a) else 0) * (1 - p) + (a[i - 1] * p if i > 0 else 0) for i in range(len(a) + 1)]
    return a


def brute_force_violation(gamma: np.ndarray, params: GroupParams) -> mpmath.mpf:
    """max over every ordered assignment of member vertices, both outputs and both directions of
    Pr[A(D) = o] − e^ε Pr[A(D′) = o] − δ, in 40-digit arithmetic."""
    K = params.K
    mid = (K + 1) // 2
    g = [mpmath.mpf(float(x)) for x in gamma]
    w1 = [g[k] * (1 if k >= mid else 0) + (1 - g[k]) / 2 for k in range(K + 1)]
    w0 = [1 - x for x in w1]
    e, d = mpmath.exp(mpmath.mpf(params.target_eps)), mpmath.mpf(params.target_delta)
    per_member = [v for gr in params.groups for v in [_vertices(gr.eps, gr.Delta)] * gr.size]
    best = mpmath.mpf(-10)
    for conf in itertools.product(*per_member):
        a, ap = _pmf([c[0] for c in conf]), _pmf([c[1] for c in conf])
        for w in (w1, w0):
            P = mpmath.fsum(x * y for x, y in zip(a, w, strict=True))
            Pp = mpmath.fsum(x * y for x, y in zip(ap, w, strict=True))
            best = max(best, P - e * Pp - d, Pp - e * P - d)
    return best


PARAMS = [
    GroupParams(((1, 0.3, 1e-3), (2, 0.8, 0.0)), 0.9, 2e-3),
    GroupParams(((2, 0.2, 1e-4), (1, 1.1, 1e-2)), 1.2, 1e-2),
    GroupParams(((1, 0.1, 0.0), (1, 0.5, 1e-3), (1, 0.9, 0.0)), 1.0, 1e-3),
]


def _gammas(K: int) -> list[np.ndarray]:
    rng = np.random.default_rng(K)
    mid = (K + 1) // 2
    out = [symmetric_from_upper(rng.uniform(0, 1, K + 1 - mid), K) for _ in range(3)]
    return out + [np.ones(K + 1), np.zeros(K + 1)]


@pytest.mark.parametrize("params", PARAMS)
def test_certificate_bounds_the_exact_worst_violation_tightly(params):
    """v̂ ≥ the exact maximum over every member assignment (rigorous), and exceeds it by < 1e-13."""
    for gamma in _gammas(params.K):
        exact = brute_force_violation(gamma, params)
        cert = certify_groups(gamma, params)
        assert cert.violation >= exact
        assert cert.violation - exact < 1e-13
        assert cert.certified == (exact <= 0) or abs(exact) < 1e-13


@pytest.mark.parametrize("params", PARAMS)
def test_corner_configurations_are_the_worst_case(params):
    """Members anywhere inside their own regions never violate more than the worst corner
    configuration (the affine argument of darrm.groups.params), sampled in float64."""
    rng = np.random.default_rng(7)
    K = params.K
    gamma = _gammas(K)[0]
    worst = float(configuration_violations(gamma, params).max())
    mid = (K + 1) // 2
    w = 0.5 * (1 - gamma)
    w[mid:] += gamma[mid:]
    e, d = np.exp(params.target_eps), params.target_delta
    for _ in range(300):
        ps, pps = [], []
        for gr in params.groups:
            verts = np.array([[float(x) for x in v] for v in _vertices(gr.eps, gr.Delta)])
            lam = rng.dirichlet(np.ones(len(verts)), size=gr.size)  # convex combinations: inside the region
            pts = lam @ verts
            ps += list(pts[:, 0])
            pps += list(pts[:, 1])
        a = np.array([float(x) for x in _pmf(ps)])
        ap = np.array([float(x) for x in _pmf(pps)])
        for ww in (w, 1 - w):
            P, Pp = a @ ww, ap @ ww
            assert max(P - e * Pp - d, Pp - e * P - d) <= worst + 1e-12


def test_a_table_above_the_optimum_is_refused_by_both():
    """A deliberately broken table (γ ≡ 1: plain majority) violates exactly and is not certified."""
    params = PARAMS[0]
    g = np.ones(params.K + 1)
    assert brute_force_violation(g, params) > 1e-3
    assert not certify_groups(g, params).certified


def test_worst_counts_name_one_multiset_per_group():
    params = PARAMS[0]
    cert = certify_groups(_gammas(params.K)[0], params)
    sizes = [8, 4]  # Δ > 0: 8 corners; Δ = 0: 4
    assert len(cert.worst_counts) == sum(sizes)
    assert sum(cert.worst_counts[:8]) == 1 and sum(cert.worst_counts[8:]) == 2
    assert cert.checked == params.configurations == 8 * 10


def test_blocks_of_the_first_group_give_the_one_block_answer(monkeypatch):
    """The exhaustive certificate streams the first group's multisets in blocks, which changes nothing:
    the same violations, the same worst value, and the same certified γ_opt."""
    import darrm
    import darrm.groups.certificate as gc

    params = GroupParams(((3, 0.2, 1e-4), (2, 0.6, 1e-4)), 0.9, 1e-3)
    gamma = _gammas(params.K)[1]
    whole = gc.configuration_violations(gamma, params)
    ref = gc.certify_groups(gamma, params, exhaustive=True)
    table = darrm.solve(params, darrm.IIDPrior(0.75), options=darrm.SolveOptions(method="cutting-planes"))
    monkeypatch.setattr(gc, "BLOCK_BYTES", 7 * 36 * gc.BYTES_PER_CONFIGURATION)  # 7 rows of 120 per block
    assert gc.block_rows(params) == 7
    blocks = list(gc.iter_violation_blocks(gamma, params))
    assert len(blocks) == 18
    assert np.array_equal(np.concatenate([V for _, V in blocks], axis=1), whole)
    got = gc.certify_groups(gamma, params, exhaustive=True)
    # the same worst value (ties between symmetric configurations may be named in another order)
    assert got.violation == ref.violation == float(whole.max()) and got.checked == ref.checked
    darrm.api._cache.clear()
    again = darrm.solve(params, darrm.IIDPrior(0.75), options=darrm.SolveOptions(method="cutting-planes"))
    assert np.array_equal(again.gamma, table.gamma)
