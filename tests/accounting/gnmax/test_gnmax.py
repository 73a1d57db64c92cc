"""GNMax calibration: the paper's σ, validity against the exact Gaussian curve, ordering, sensitivity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import norm

from darrm.accounting import gnmax
from darrm.errors import ParameterError


@pytest.mark.parametrize(
    "eps,delta,sigma",
    [
        (0.2676, 3e-4, 21.46),  # Table 4, MNIST
        (0.2556, 3e-4, 22.46),  # Table 4, Fashion-MNIST
        (0.0892, 1e-4, 68.21),  # spec §5 [DERIVED] for m = 1, 5, 7
        (0.4460, 5e-4, 12.54),
        (0.6244, 7e-4, 8.81),
        (0.0852, 1e-4, 71.41),
        (0.4260, 5e-4, 13.12),
        (0.5964, 7e-4, 9.22),
    ],
)
def test_paper_rdp_sigma_reproduces_table4(eps, delta, sigma):
    assert round(gnmax.calibrate_sigma(eps, delta, "paper-rdp"), 2) == sigma


def test_table4_lambda_column_is_the_grid_start_not_the_minimiser():
    for eps, lam_col, lam_star in [(0.2676, 34.31, 62.3), (0.2556, 35.74, 64.7)]:
        g = gnmax.paper_grid(eps, 3e-4)
        assert round(g.order_min + 3, 2) == lam_col
        assert g.order == pytest.approx(lam_star, abs=0.05)
        assert g.sigma**2 == pytest.approx(g.order / (eps - math.log(1 / 3e-4) / (g.order - 1)), rel=1e-12)


def _hockey_stick_numeric(eps: float, sigma: float, shift: float) -> float:
    """δ(ε) between N(shift, σ²) and N(0, σ²) by quadrature (independent of the closed form)."""
    f = lambda x: max(0.0, norm.pdf(x, shift, sigma) - math.exp(eps) * norm.pdf(x, 0.0, sigma))  # noqa: E731
    # the integrand is positive exactly for x > shift/2 + εσ²/shift
    start = shift / 2 + eps * sigma**2 / shift
    return integrate.quad(f, start, start + 40 * sigma, epsabs=1e-15, epsrel=1e-10, limit=200)[0]


@pytest.mark.parametrize("eps,sigma", [(0.2676, 12.9), (0.1, 30.0), (1.0, 2.0), (0.5, 5.0)])
def test_gaussian_delta_closed_form_matches_quadrature(eps, sigma):
    assert gnmax.gaussian_delta(eps, sigma) == pytest.approx(_hockey_stick_numeric(eps, sigma, math.sqrt(2)), rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.02, 3.0), delta=st.floats(1e-9, 0.05))
def test_every_calibration_is_valid_on_the_exact_curve_and_ordered(eps, delta):
    if math.log(1 / delta) / eps + 1.5 > 500:  # the paper's grid λ <= 500 is empty
        with pytest.raises(ParameterError, match="grid"):
            gnmax.calibrate_sigma(eps, delta, "paper-rdp")
        s_paper = math.inf
    else:
        s_paper = gnmax.calibrate_sigma(eps, delta, "paper-rdp")
    s_rdp, s_pld = gnmax.calibrate_sigma(eps, delta, "rdp"), gnmax.calibrate_sigma(eps, delta, "pld")
    assert s_paper >= s_rdp >= s_pld
    # independent check: the exact Gaussian curve (sensitivity √2) certifies all three
    for s in (s_paper, s_rdp, s_pld):
        assert math.isinf(s) or gnmax.gaussian_delta(eps, s) <= delta
    # and the PLD one is tight
    assert gnmax.gaussian_delta(eps, s_pld * (1 - 1e-6)) > delta


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.02, 3.0), delta=st.floats(1e-9, 0.05))
def test_rdp_calibration_is_tight_for_its_own_accountant(eps, delta):
    s = gnmax.calibrate_sigma(eps, delta, "rdp")
    assert gnmax.epsilon(s, delta, 1, "rdp") <= eps * (1 + 1e-9)
    assert gnmax.epsilon(s * (1 - 1e-5), delta, 1, "rdp") > eps


def test_paper_rdp_forward_closed_form_is_below_grid_target():
    s = gnmax.calibrate_sigma(0.2676, 3e-4, "paper-rdp")
    assert gnmax.epsilon(s, 3e-4, 1, "paper-rdp") <= 0.2676


def test_gaussian_rdp_is_renyi_divergence_of_sensitivity_sqrt2():
    sigma, lam = 3.0, 4.5
    p = lambda x: norm.pdf(x, math.sqrt(2), sigma)  # noqa: E731
    q = lambda x: norm.pdf(x, 0.0, sigma)  # noqa: E731
    val = integrate.quad(lambda x: p(x) ** lam * q(x) ** (1 - lam), -60, 60, limit=200)[0]
    assert gnmax.gaussian_rdp(lam, sigma) == pytest.approx(math.log(val) / (lam - 1), rel=1e-8)
    assert gnmax.gaussian_rdp(lam, sigma) == pytest.approx(lam / sigma**2)


def test_q_queries_compose():
    s = 21.46
    for method in gnmax.METHODS:
        es = [gnmax.epsilon(s, 1e-4, q, method) for q in (1, 20, 50, 100)]
        assert es == sorted(es)
    pld50 = gnmax.epsilon(s, 1e-4, 50, "pld")
    assert pld50 == pytest.approx(gnmax.epsilon(s / math.sqrt(50), 1e-4, 1, "pld"), rel=1e-9)
    assert pld50 <= gnmax.epsilon(s, 1e-4, 50, "rdp") <= gnmax.epsilon(s, 1e-4, 50, "paper-rdp")


@settings(max_examples=20, deadline=None)
@given(sigma=st.floats(1.0, 100.0), delta=st.floats(1e-8, 1e-2))
def test_epsilon_decreasing_in_sigma_and_delta(sigma, delta):
    for m in gnmax.METHODS:
        e = gnmax.epsilon(sigma, delta, 1, m)
        assert gnmax.epsilon(sigma * 1.2, delta, 1, m) <= e
        assert gnmax.epsilon(sigma, delta * 2, 1, m) <= e


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gnmax.calibrate_sigma(0.0, 1e-4), "eps"),
        (lambda: gnmax.calibrate_sigma(0.2, 0.0), "delta"),
        (lambda: gnmax.calibrate_sigma(0.2, 1.0), "delta"),
        (lambda: gnmax.calibrate_sigma(0.2, 1e-4, "moments"), "method"),
        (lambda: gnmax.gaussian_rdp(2.0, 0.0), "sigma"),
        (lambda: gnmax.gaussian_rdp(1.0, 3.0), "order"),
        (lambda: gnmax.epsilon(-1.0, 1e-4), "sigma"),
        (lambda: gnmax.epsilon(10.0, 1e-4, 0), "queries"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(call, name):
    with pytest.raises(ParameterError) as err:
        call()
    assert err.value.parameter == name


def test_sigma_values_are_finite_numbers():
    assert np.isfinite([gnmax.calibrate_sigma(0.2676, 3e-4, m) for m in gnmax.METHODS]).all()
