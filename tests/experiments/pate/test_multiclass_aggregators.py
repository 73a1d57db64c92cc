"""Ten-class aggregators at a total budget: each calibration is checked against an independent
closed form (the analytic Gaussian curve with scipy; Kairouz–Oh–Viswanath's exact k-fold δ in
50-digit mpmath), and the releases do what their definitions say."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from darrm import ParameterError
from darrm.experiments.pate.multiclass_aggregators import (
    CONFIDENT_RATIO,
    confident_release,
    confident_sigmas,
    gnmax_release,
    gnmax_sigma,
    histograms_of,
    plurality_budget,
)


def _gaussian_delta(eps: float, mu: float) -> float:
    """δ(ε) of μ-GDP (Balle & Wang 2018, Theorem 8), independent of dp_accounting."""
    return float(norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu))


def _kov_delta(eps: float, delta: float, k: int, eps_total: float) -> mpmath.mpf:
    """Exact δ of k-fold composition of (ε, δ)-DP mechanisms at ε_total (Kairouz, Oh & Viswanath 2015,
    Theorem 3.3): 1 − (1 − δ)^k (1 − Σ_i C(k, i) (e^{(k−i)ε} − e^{ε_total + iε})₊ / (1 + e^ε)^k)."""
    with mpmath.workdps(50):
        e = mpmath.mpf(eps)
        pure = mpmath.fsum(mpmath.binomial(k, i) * max(mpmath.mpf(0), mpmath.exp((k - i) * e) -
                                                        mpmath.exp(eps_total + i * e)) for i in range(k + 1))
        pure /= (1 + mpmath.exp(e)) ** k
        return 1 - (1 - mpmath.mpf(delta)) ** k * (1 - pure)


@pytest.mark.parametrize(("eps", "Q"), [(0.5, 20), (1.0, 100), (2.0, 500), (4.0, 50)])
def test_gnmax_sigma_spends_exactly_the_total(eps, Q):
    sigma = gnmax_sigma(eps, 1e-5, Q)
    d = _gaussian_delta(eps, math.sqrt(2 * Q) / sigma)
    assert d <= 1e-5 * (1 + 1e-9)
    assert d >= 1e-5 * (1 - 1e-4)  # tight: a slightly smaller σ would overspend


@pytest.mark.parametrize(("eps", "Q"), [(0.5, 20), (2.0, 500)])
def test_confident_sigmas_spend_the_total_whatever_is_answered(eps, Q):
    s1, s2 = confident_sigmas(eps, 1e-5, Q)
    assert s1 / s2 == pytest.approx(CONFIDENT_RATIO)
    mu = math.sqrt(Q * (1 / s1**2 + 2 / s2**2))  # every query pays both Gaussians (Claim 2)
    assert _gaussian_delta(eps, mu) <= 1e-5 * (1 + 1e-9)


@pytest.mark.parametrize(("eps", "Q"), [(0.5, 20), (1.0, 100), (2.0, 500)])
def test_plurality_budget_composes_within_the_total(eps, Q):
    pq = plurality_budget(eps, 1e-5, Q)
    assert pq.delta_query == pytest.approx(1e-5 / (2 * Q))
    assert _kov_delta(pq.eps_query, pq.delta_query, Q, eps) <= 1e-5
    assert _kov_delta(pq.eps_query * 1.01, pq.delta_query, Q, eps) > 1e-5  # the largest ε_q, to 1 %


def test_releases_follow_their_definitions():
    rng = np.random.default_rng(0)
    hist = histograms_of(np.array([[3] * 240 + [1] * 10, [7] * 130 + [2] * 120]), 10)
    assert hist.shape == (2, 10) and hist[0, 3] == 240
    assert (gnmax_release(hist, 1e-6, rng) == [3, 7]).all()
    answered, labels = confident_release(hist, 200, 1e-6, 1e-6, rng)
    assert answered.tolist() == [True, False] and labels.tolist() == [3, -1]
    with pytest.raises(ParameterError, match="votes"):
        histograms_of(np.array([[10]]), 10)
