"""The segment sweep (darrm.privacy.segment): its v̂ at x_a is the exhaustive sweep's, bit for bit, and
its λ* is the largest feasible step toward x_b, checked against every inequality evaluated directly
(brute force over all corner multisets, both outputs, both directions) at small K."""

from __future__ import annotations

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.gamma import symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy.certify import repair
from darrm.privacy.corner_pmfs import pmf_pairs
from darrm.privacy.corners import complements, corners, iter_count_vector_blocks
from darrm.privacy.segment import segment_sweep
from darrm.privacy.sweep import sweep


def _all_g(gamma: np.ndarray, params: PrivacyParams) -> np.ndarray:
    """g_j = Pr[A(D)=o] − e^{mε}Pr[A(D′)=o] for every multiset, both outputs, both directions,
    straight from the Poisson-binomial pmfs (no sweep code)."""
    cs, comp = corners(params.eps, 0.0), complements(params.eps, 0.0)
    K, e = params.K, params.exp_meps
    mid = (K + 1) // 2
    l = np.arange(K + 1)
    w1 = 0.5 + gamma * (np.where(l >= mid, 1.0, 0.0) - 0.5)  # Pr[A = 1 | L = l]
    w0 = 1.0 - w1
    out = []
    for counts in iter_count_vector_blocks(K, cs.shape[0]):
        a, ap = pmf_pairs(counts, cs, comp)
        for w in (w1, w0):
            p, q = a @ w, ap @ w
            out += [p - e * q, q - e * p]
    return np.concatenate(out)


def _brute_step(ga: np.ndarray, gb: np.ndarray, threshold: float = 0.0) -> float:
    hit = gb > threshold
    if not np.any(hit):
        return 1.0
    return float(np.min(np.maximum(-ga[hit], 0.0) / (gb[hit] - ga[hit])))


def _points(K: int, seed: int, params: PrivacyParams) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = symmetric_from_upper(rng.uniform(0.3, 1.0, K + 1 - (K + 1) // 2), K)
    xa = repair(x, params, sweep(x, params).max_violation)[0]  # certified by the sweep
    xb = symmetric_from_upper(rng.uniform(0.8, 1.0, K + 1 - (K + 1) // 2), K)
    return xa, xb


@pytest.mark.parametrize(("K", "seed"), [(9, 0), (15, 1), (21, 2)])
def test_step_is_the_largest_feasible_step_against_every_inequality(K, seed):
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, seed, params)
    res = segment_sweep(xa, xb, params, top=8)
    ga, gb = _all_g(xa, params), _all_g(xb, params)
    assert np.max(ga) <= 0.0  # x_a is feasible
    want = _brute_step(ga, gb)
    assert 0.0 < want < 1.0
    assert res.step == pytest.approx(want, rel=1e-9, abs=1e-12)
    # feasible at λ*·(1 − 1e-6), violated just past λ* (the evaluation is affine in γ)
    inside = xa + res.step * (1 - 1e-6) * (xb - xa)
    outside = xa + min(1.0, res.step * (1 + 1e-3)) * (xb - xa)
    assert np.max(_all_g(inside, params)) <= 0.0
    assert np.max(_all_g(outside, params)) > 0.0
    assert res.violation_b == pytest.approx(np.max(gb), rel=1e-9)


@pytest.mark.parametrize("K", [9, 17])
def test_max_violation_is_the_exhaustive_sweep_of_x_a_bit_for_bit(K):
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, 3, params)
    for x in (xa, xb, 0.97 * xa + 0.03 * xb):
        assert segment_sweep(x, xb, params).max_violation == sweep(x, params).max_violation
    assert segment_sweep(xa, xb, params).checked == sweep(xa, params).checked


def test_candidates_are_the_first_blocking_inequalities():
    K = 15
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, 4, params)
    res = segment_sweep(xa, xb, params, top=5)
    assert res.candidates.shape == (5, 4) and np.all(res.candidates.sum(axis=1) == K)
    assert res.steps[0] == pytest.approx(res.step, rel=1e-12) and np.all(np.diff(res.steps) >= 0)
    # each candidate is violated at x_b and first crossed at its reported λ_j (direct evaluation)
    cs, comp = corners(params.eps, 0.0), complements(params.eps, 0.0)
    a, ap = pmf_pairs(res.candidates, cs, comp)
    for i in range(5):
        lam = res.steps[i]
        worst = []
        for x in (xa + lam * (1 + 1e-6) * (xb - xa), xb):
            g = _all_g_of(a[i], ap[i], x, params)
            worst.append(np.max(g))
        assert worst[0] > 0.0 and worst[1] > 0.0


def _all_g_of(a: np.ndarray, ap: np.ndarray, gamma: np.ndarray, params: PrivacyParams) -> np.ndarray:
    K, e = params.K, params.exp_meps
    l = np.arange(K + 1)
    w1 = 0.5 + gamma * (np.where(l >= (K + 1) // 2, 1.0, 0.0) - 0.5)
    out = []
    for w in (w1, 1.0 - w1):
        p, q = a @ w, ap @ w
        out += [p - e * q, q - e * p]
    return np.array(out)


def test_a_step_past_the_reported_one_is_caught_by_the_certificate():
    """A deliberately wrong λ (twice the reported one) gives a point that the exhaustive sweep
    refuses, while the reported one (minus a hair) is certified."""
    K = 15
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, 5, params)
    res = segment_sweep(xa, xb, params)
    good = xa + res.step * (1 - 1e-6) * (xb - xa)
    bad = xa + min(1.0, 2.0 * res.step) * (xb - xa)
    assert sweep(good, params).max_violation <= 0.0
    assert sweep(bad, params).max_violation > 0.0


def test_refuses_approximate_dp_members():
    params = PrivacyParams(9, 3, 0.5, 1e-6)
    with pytest.raises(ParameterError, match="params"):
        segment_sweep(np.zeros(10), np.zeros(10), params)


def test_any_executor_gives_the_serial_answer():
    """Local processes and a concurrent.futures pool (the seam Dask and Ray use) give the serial
    segment sweep's maximum, step and candidates."""
    from concurrent.futures import ThreadPoolExecutor

    from darrm.backends.executors import ProcessExecutor

    K = 17
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, 6, params)
    ref = segment_sweep(xa, xb, params, top=6)
    with ThreadPoolExecutor(2) as pool:
        for ex in (ProcessExecutor(2), pool):
            got = segment_sweep(xa, xb, params, top=6, executor=ex)
            assert got.max_violation == ref.max_violation and got.step == ref.step
            assert np.array_equal(got.candidates, ref.candidates) and got.checked == ref.checked


def test_deep_candidates_are_the_most_violated_at_x_b():
    """With ``deep`` > 0 the candidates after the blocking ones are multisets violated at x_b, never one
    already reported, and the most violated inequality at x_b (over every multiset, evaluated
    directly) belongs to a reported candidate."""
    K = 15
    params = PrivacyParams(K, 3, 0.3, 0.0)
    xa, xb = _points(K, 7, params)
    res = segment_sweep(xa, xb, params, top=8, deep=4)
    nb = res.steps.shape[0]
    assert nb == 4 and nb < res.candidates.shape[0] <= 8
    assert len({tuple(r) for r in res.candidates.tolist()}) == res.candidates.shape[0]
    cs, comp = corners(params.eps, 0.0), complements(params.eps, 0.0)
    a, ap = pmf_pairs(res.candidates, cs, comp)
    worst = [float(np.max(_all_g_of(a[i], ap[i], xb, params))) for i in range(res.candidates.shape[0])]
    assert min(worst) > 0.0
    assert max(worst) == pytest.approx(float(np.max(_all_g(xb, params))), rel=1e-9)
