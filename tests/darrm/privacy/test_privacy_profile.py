"""The privacy profile of a γ table and its dominating pair (darrm.privacy.profile), checked against
an independent brute force in high precision (references.profile_reference: mpmath, every
multiset, both outputs, both directions) and against the certificate."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from references.profile_reference import cloud_reference, profile_reference

import darrm
from darrm import PrivacyParams
from darrm.backends.executors import ProcessExecutor, SerialExecutor
from darrm.errors import ParameterError
from darrm.gamma import gamma_const, gamma_sub
from darrm.models.disjoint import ApproxDP, DisjointParams, LocalRR
from darrm.models.profile import privacy_profile
from darrm.privacy.certify import certify
from darrm.privacy.condition import UNIT_ROUNDOFF
from darrm.privacy.profile import Envelope, PrivacyProfile, upper_hull
from darrm.table import GammaTable

EPS_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 12.0, 22)])  # 23 values of ε′


def _random_gamma(K: int, rng) -> np.ndarray:
    h = rng.random((K + 1) // 2)
    return np.concatenate([h[::-1], h])


def _gammas(params: PrivacyParams, rng) -> dict[str, np.ndarray]:
    return {
        "opt": darrm.solve(params).gamma,
        "sub": gamma_sub(params.K, int(params.m)),
        "const": gamma_const(params),
        "random": _random_gamma(params.K, rng),
    }


def _bound(profile: PrivacyProfile, eps: np.ndarray) -> np.ndarray:
    """The stated gap of the outward rounding: ≤ (2ρ + 8u)(1 + s) + 4η(1 + s) (module docstring)."""
    s = np.exp(eps)
    return ((2 * profile.rho + 8 * UNIT_ROUNDOFF) + 4 * profile.eta) * (1 + s)


CASES = [(3, 2, 0.4, 1e-3), (5, 3, 0.3, 0.0), (5, 1, 0.7, 1e-2), (7, 3, 0.2, 0.0)]


@pytest.mark.parametrize(("K", "m", "eps", "Delta"), CASES)
def test_profile_equals_the_high_precision_brute_force_profile(K, m, eps, Delta, rng):
    params = PrivacyParams(K, m, eps, Delta)
    for name, g in _gammas(params, rng).items():
        ref = profile_reference(g, params, EPS_GRID, dps=30)
        for method in ("direct", "sweep"):
            prof = privacy_profile(g, params, method=method, executor=SerialExecutor() if method == "sweep" else None)
            got = prof.delta(EPS_GRID)
            assert np.all(got >= ref), (name, method)  # an upper bound, never below the exact profile
            assert np.all(got - ref <= _bound(prof, EPS_GRID)), (name, method, np.max(got - ref))


def test_sweep_profile_is_the_same_on_worker_processes(rng):
    params = PrivacyParams(9, 3, 0.3, 1e-3)
    g = _random_gamma(9, rng)
    serial = privacy_profile(g, params, method="sweep", executor=SerialExecutor())
    procs = privacy_profile(g, params, method="sweep", executor=ProcessExecutor(2))
    direct = privacy_profile(g, params, method="direct")
    np.testing.assert_array_equal(serial.x, procs.x)
    np.testing.assert_array_equal(serial.y, procs.y)
    np.testing.assert_allclose(serial.delta(EPS_GRID), direct.delta(EPS_GRID), rtol=0, atol=1e-14)


def test_sweep_profile_on_a_dask_cluster_is_the_serial_one(rng):
    distributed = pytest.importorskip("distributed")
    from darrm.backends.executors import DaskExecutor

    params = PrivacyParams(7, 3, 0.3, 1e-3)
    g = _random_gamma(7, rng)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        with distributed.Client(cl) as client:
            dask = privacy_profile(g, params, method="sweep", executor=DaskExecutor(client))
    serial = privacy_profile(g, params, method="sweep", executor=SerialExecutor())
    np.testing.assert_array_equal(dask.x, serial.x)
    np.testing.assert_array_equal(dask.y, serial.y)


def test_sweep_profile_on_a_torch_device_matches(rng):
    pytest.importorskip("torch")
    from darrm.backends.devices import TorchDevice

    for Delta in (1e-3, 0.0):
        params = PrivacyParams(7, 3, 0.3, Delta)
        g = _random_gamma(7, rng)
        ref = privacy_profile(g, params, method="direct")
        dev = privacy_profile(g, params, method="sweep", executor=TorchDevice("cpu"))
        np.testing.assert_allclose(dev.delta(EPS_GRID), ref.delta(EPS_GRID), rtol=0, atol=1e-14)


@pytest.mark.parametrize("member", [ApproxDP(0.5, 1e-3), ApproxDP(0.3, 0.0), LocalRR(1.0)])
def test_disjoint_profile_equals_the_brute_force_profile(member, rng):
    for K in (5, 7):
        params = DisjointParams(K, member, target_eps=1.0, target_delta=1e-3)
        for g in (_random_gamma(K, rng), np.ones(K + 1)):
            ref = profile_reference(g, params, EPS_GRID, dps=30)
            prof = privacy_profile(g, params)
            got = prof.delta(EPS_GRID)
            assert prof.model == "disjoint"
            assert np.all(got >= ref)
            assert np.all(got - ref <= _bound(prof, EPS_GRID) + 1e-20)


def test_profile_at_m_eps_agrees_with_the_certificate(paper_params):
    params = paper_params(3)
    for fam in ("opt", "sub", "const"):
        table = darrm.solve(params, family=fam)
        cert = certify(table.gamma, params)
        d = privacy_profile(table).delta(params.m * params.eps)
        assert cert.certified and d <= params.delta * (1 + 1e-12)
    # a table that is not private for (mε, δ): γ ≡ 1 at m = 3 of K = 11
    g = np.ones(12)
    cert = certify(g, params)
    d = privacy_profile(g, params).delta(params.m * params.eps)
    assert not cert.certified and d > params.delta
    # v̂ bounds the exact violation δ(mε) − δ from above, within the certificate's rounding
    assert d - params.delta <= cert.violation / (1 - cert.rho) + 1e-15
    assert cert.violation <= (d - params.delta) + 1e-12


def test_pair_hockey_stick_equals_the_profile_at_every_eps(rng):
    """Claim 2: H_s(P‖Q) = Σ max(0, P − sQ) computed from the pair's atoms = max_j (y_j − s·x_j)."""
    params = PrivacyParams(7, 3, 0.3, 1e-3)
    prof = privacy_profile(_random_gamma(7, rng), params)
    P, Q = prof.pair()
    assert abs(P.sum() - 1) < 1e-14 and abs(Q.sum() - 1) < 1e-14 and np.all(P >= 0) and np.all(Q >= 0)
    for e in EPS_GRID:
        hs = float(np.sum(np.maximum(0.0, P - math.exp(e) * Q)))
        assert abs(hs - prof.delta(e)) <= 1e-14 * (1 + math.exp(e))
    # the pair is symmetric under the reflection (x, y) → (1 − y, 1 − x): both directions dominated
    for e in EPS_GRID:
        s = math.exp(e)
        assert abs(np.sum(np.maximum(0.0, Q - s * P)) - np.sum(np.maximum(0.0, P - s * Q))) <= 1e-13 * (1 + s)


def test_crafted_table_has_its_infinite_loss_mass_as_delta_floor():
    """γ ≡ 1 (the plain majority) at K = 3 with Δ > 0: one member at (1, 1) and two at (Δ, 0) give
    Pr[A(D′)=1] = 0 exactly (D′ has one vote) and Pr[A(D)=1] = 1 − (1 − Δ)² (one more vote under D):
    no ε removes that mass (a member needs p′ = 0, so (Δ, 0) is the best the other two can do)."""
    Delta = 0.01
    params = PrivacyParams(3, 3, 0.5, Delta)
    prof = privacy_profile(np.ones(4), params)
    floor = 1 - (1 - Delta) ** 2
    assert prof.infinite_loss_mass == pytest.approx(floor, rel=1e-13)
    assert prof.delta(300.0) == pytest.approx(floor, rel=1e-13)
    assert prof.epsilon(floor * 0.999) == math.inf
    assert math.isfinite(prof.epsilon(floor * 1.5))
    # the brute force agrees: the largest Pr[A(D)=1] among configurations with Pr[A(D′)=1] = 0
    with mpmath.workdps(30):
        zero = [a for a, b in cloud_reference(np.ones(4), params, dps=30) if b == 0]
        assert float(max(zero)) == pytest.approx(floor, rel=1e-13)


def test_epsilon_inverts_delta(rng):
    params = PrivacyParams(5, 2, 0.4, 1e-3)
    prof = privacy_profile(_random_gamma(5, rng), params)
    for d in (1e-3, 1e-2, 0.1, 0.3):
        e = prof.epsilon(d)
        assert prof.delta(e) <= d * (1 + 1e-12)
        if e > 1e-9:
            assert prof.delta(e * (1 - 1e-6)) > d


def test_upper_hull_and_envelope_agree_with_a_direct_hull(rng):
    pts = rng.random((5000, 2)) ** 3
    hx, hy = upper_hull(pts[:, 0], pts[:, 1])
    assert np.all(np.diff(hx) > 0)
    # every point lies on or below the envelope, and the slopes decrease
    assert np.all(pts[:, 1] <= np.interp(pts[:, 0], hx, hy) + 1e-15)
    slopes = np.diff(hy) / np.diff(hx)
    assert np.all(np.diff(slopes) < 0)
    env = Envelope()
    for chunk in np.array_split(pts, 7):
        env.add(chunk[:, 0], chunk[:, 1])
    full_x, full_y = upper_hull(np.concatenate([pts[:, 0], [0, 1]]), np.concatenate([pts[:, 1], [0, 1]]))
    np.testing.assert_array_equal(env.x, full_x)
    np.testing.assert_array_equal(env.y, full_y)


def test_profile_refuses_bad_arguments(paper_params):
    params = paper_params(3)
    table = darrm.solve(params, family="sub")
    with pytest.raises(ParameterError, match="method"):
        privacy_profile(table, method="fast")
    with pytest.raises(ParameterError, match="params"):
        privacy_profile(np.ones(12))
    with pytest.raises(ParameterError, match="params"):
        privacy_profile(table, paper_params(5))
    prof = privacy_profile(table)
    with pytest.raises(ParameterError, match="eps"):
        prof.delta(-1.0)
    with pytest.raises(ParameterError, match="delta"):
        prof.epsilon(2.0)
    assert isinstance(table, GammaTable)
