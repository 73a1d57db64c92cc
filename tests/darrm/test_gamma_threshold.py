"""The Gaussian threshold (binary GNMax) is a DaRRM γ: equal output laws, checked independently.

The reference law is GNMax itself, written from its definition and integrated numerically:
noise N(0, σ²) on each of the two counts, release 1 iff L + Z₁ > (K − L) + Z₂, so
Pr[1 | L] = ∫ φ_σ(z₂)·Pr[Z₁ > K − 2L + z₂] dz₂ (quadrature, not the closed form), with σ = s√2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import darrm
from darrm.gamma import gamma_threshold
from darrm.mechanism import output_weights


def gnmax_release_law(K: int, sigma: float) -> np.ndarray:
    """Pr[GNMax releases 1 | L = l], l = 0..K, by quadrature over the second count's noise."""
    out = np.empty(K + 1)
    for ell in range(K + 1):
        gap = K - 2 * ell

        def integrand(z2: float, gap: float = gap) -> float:
            return stats.norm.pdf(z2, scale=sigma) * stats.norm.sf(gap + z2, scale=sigma)

        val, err = integrate.quad(integrand, -40 * sigma, 40 * sigma, epsabs=1e-13, epsrel=1e-12, limit=400)
        out[ell] = val
    return out


@pytest.mark.parametrize(("K", "s"), [(5, 0.7), (11, 2.5), (31, 1.0), (101, 9.0)])
def test_darrm_with_the_threshold_gamma_has_gnmax_output_law(K, s):
    g = gamma_threshold(K, s)
    assert np.array_equal(g, g[::-1]) and np.all((g >= 0) & (g <= 1))
    ref = gnmax_release_law(K, s * math.sqrt(2.0))
    assert np.max(np.abs(output_weights(g) - ref)) < 1e-9


def test_the_law_check_catches_a_wrong_gamma():
    """Φ(|l − K/2|/s) instead of 2Φ − 1: a different law, which the quadrature reference sees."""
    K, s = 11, 2.5
    wrong = stats.norm.cdf(np.abs(np.arange(K + 1) - K / 2) / s)
    assert np.max(np.abs(output_weights(wrong) - gnmax_release_law(K, s * math.sqrt(2.0)))) > 1e-2


def test_the_threshold_family_default_is_certified_and_options_are_validated():
    params = darrm.PrivacyParams(K=7, m=2, eps=0.3, member_delta=0.0, delta=0.0)
    t = darrm.solve(params, family="threshold", progress=False)
    assert t.family == "threshold" and darrm.certify(t.gamma, params).certified
    g = darrm.family_gamma("threshold", params, scale=3.0)
    assert np.array_equal(g, gamma_threshold(7, 3.0))
    with pytest.raises(darrm.ParameterError, match="^scale:"):
        darrm.family_gamma("threshold", params, scale=-1.0)
    with pytest.raises(darrm.ParameterError, match="^scale: is no option of the sub family"):
        darrm.family_gamma("sub", params, scale=1.0)
