"""The grouped certificate against an independent brute force in high precision (``brute``,
tests/darrm/models/groups/conftest.py: every ordered member assignment, 40 digits, the four inequalities)."""

from __future__ import annotations

import numpy as np
import pytest

from darrm.gamma import symmetric_from_upper
from darrm.models.groups.certificate import certify_groups, configuration_violations
from darrm.models.groups.params import GroupParams

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
def test_certificate_bounds_the_exact_worst_violation_tightly(params, brute):
    """v̂ ≥ the exact maximum over every member assignment (rigorous), and exceeds it by < 1e-13."""
    for gamma in _gammas(params.K):
        exact = brute.violation(gamma, params)
        cert = certify_groups(gamma, params)
        assert cert.violation >= exact
        assert cert.violation - exact < 1e-13
        assert cert.certified == (exact <= 0) or abs(exact) < 1e-13


@pytest.mark.parametrize("params", PARAMS)
def test_corner_configurations_are_the_worst_case(params, brute):
    """Members anywhere inside their own regions never violate more than the worst corner
    configuration (the affine argument of darrm.models.groups.params), sampled in float64."""
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
            verts = np.array([[float(x) for x in v] for v in brute.vertices(gr.eps, gr.Delta)])
            lam = rng.dirichlet(np.ones(len(verts)), size=gr.size)  # convex combinations: inside the region
            pts = lam @ verts
            ps += list(pts[:, 0])
            pps += list(pts[:, 1])
        a = np.array([float(x) for x in brute.pmf(ps)])
        ap = np.array([float(x) for x in brute.pmf(pps)])
        for ww in (w, 1 - w):
            P, Pp = a @ ww, ap @ ww
            assert max(P - e * Pp - d, Pp - e * P - d) <= worst + 1e-12


def test_a_table_above_the_optimum_is_refused_by_both(brute):
    """A deliberately broken table (γ ≡ 1: plain majority) violates exactly and is not certified."""
    params = PARAMS[0]
    g = np.ones(params.K + 1)
    assert brute.violation(g, params) > 1e-3
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
    import darrm.models.groups.certificate as gc

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
