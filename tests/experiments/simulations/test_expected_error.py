"""Exactness of the error averages used by the simulation figures."""

import itertools

import numpy as np
import pytest
from scipy import integrate

from darrm import ParameterError, PrivacyParams, error_curve, gamma_const, gamma_dsub, gamma_sub
from darrm.experiments.simulations.expected_error import (
    iid_uniform_error,
    is_one_sided,
    product_uniform_error,
    product_uniform_error_mc,
)
from darrm.numerics.binomial import binomial_pmf
from darrm.numerics.poisson_binomial import pmf
from darrm.utility import error, error_from_pmf


def _gammas(K):
    rng = np.random.default_rng(K)
    upper = rng.uniform(0, 1, (K + 1) // 2)
    rand = np.concatenate([upper[::-1], upper])
    return [gamma_sub(K, 1), gamma_sub(K, 3), gamma_dsub(K, 2), gamma_const(PrivacyParams(K, 2, 0.1)), rand]


@pytest.mark.parametrize("K", [1, 11, 101])
def test_cancellation_free_error_curve_matches_the_binomial_pmf_formula(K):
    p = np.linspace(0, 1, 2001)
    for g in _gammas(K) if K > 3 else [np.array([0.3, 0.3])]:
        assert np.max(np.abs(error_curve(g, p) - error_from_pmf(g, binomial_pmf(len(g) - 1, p)))) < 1e-13


def test_error_at_half_is_exactly_zero_for_every_symmetric_gamma():
    for g in _gammas(11) + _gammas(101):
        assert error_curve(g, np.array([0.5]))[0] == 0.0
        assert iid_uniform_error(g, 0.5, 0.5) == 0.0


@pytest.mark.parametrize("interval", [(0.0, 1.0), (0.2, 0.9), (0.6, 0.8), (0.0, 0.1)])
def test_iid_uniform_error_equals_adaptive_quadrature(interval):
    lo, hi = interval
    for g in _gammas(11):
        def err(p, g=g):  # g bound now, not when quad calls it
            return float(error_curve(g, np.array([p]))[0])

        pieces = [(a, b) for a, b in ((lo, min(hi, 0.5)), (max(lo, 0.5), hi)) if b > a]
        ref = sum(integrate.quad(err, a, b, epsabs=1e-13, epsrel=1e-12)[0] for a, b in pieces) / (hi - lo)
        assert iid_uniform_error(g, lo, hi) == pytest.approx(ref, abs=1e-12)


def test_pmf_is_reflection_dominated_when_every_p_is_at_most_half():
    """The lemma behind the exact one-sided product average: p_i ≤ ½ ∀i ⇒ α_l ≤ α_{K−l}, l ≥ mid.
    Brute force over all corner vectors of {0, ¼, ½}^7 plus random points."""
    K = 7
    grid = np.array(list(itertools.product([0.0, 0.25, 0.5], repeat=K)))
    rnd = np.random.default_rng(3).uniform(0, 0.5, (20000, K))
    a = pmf(np.concatenate([grid, rnd]))
    mid = (K + 1) // 2
    assert np.all(a[:, mid:] - a[:, : K + 1 - mid][:, ::-1] <= 1e-15)


@pytest.mark.parametrize("interval", [(0.0, 0.1), (0.7, 1.0), (0.2, 0.5)])
def test_product_uniform_error_matches_monte_carlo_on_one_side(interval):
    lo, hi = interval
    for g in _gammas(11):
        exact = product_uniform_error(g, lo, hi)
        ps = np.random.default_rng(7).uniform(lo, hi, (40000, 11))
        e = error(g, ps)
        assert abs(e.mean() - exact) <= 5 * e.std() / np.sqrt(len(e)) + 1e-12


def test_product_uniform_error_refuses_an_interval_straddling_half():
    assert not is_one_sided(0.4, 0.6)
    with pytest.raises(ParameterError, match="interval"):
        product_uniform_error(gamma_sub(11, 3), 0.4, 0.6)


def test_monte_carlo_is_seeded_and_reports_its_standard_error():
    g = gamma_sub(11, 3)
    a = product_uniform_error_mc(g, samples=5000, seed=4)
    assert a == product_uniform_error_mc(g, samples=5000, seed=4)
    assert a != product_uniform_error_mc(g, samples=5000, seed=5)
    e = error(g, np.random.default_rng(4).uniform(0, 1, (5000, 11)))
    assert a[0] == pytest.approx(e.mean(), rel=1e-12)
    assert a[1] == pytest.approx(e.std(ddof=1) / np.sqrt(5000), rel=1e-9)


@pytest.mark.parametrize("lo,hi", [(-0.1, 0.5), (0.6, 0.5), (0.0, float("nan")), (0.0, 1.1)])
def test_bad_intervals_name_the_parameter(lo, hi):
    with pytest.raises(ParameterError, match="interval"):
        iid_uniform_error(gamma_sub(11, 1), lo, hi)


def test_monte_carlo_needs_two_samples():
    with pytest.raises(ParameterError, match="samples"):
        product_uniform_error_mc(gamma_sub(11, 1), samples=1)
