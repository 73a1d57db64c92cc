"""The data-dependent GNMax bound against the authors' published reference values.

Source: Papernot, Song, Mironov, Raghunathan, Talwar & Erlingsson, "Scalable Private Learning
with PATE" (ICLR 2018), Theorem 6 / Propositions 7 and 10, and the authors' implementation
tensorflow/privacy ``research/pate_2018/core.py`` with its test ``core_test.py``
(``_test_rdp_gaussian_as_function_of_q``).  That test lists, for σ ∈ {1.5, 15, 1500, 15000} and
λ ∈ {1.1, 2.5, 32, 250}, a hand-calculated −log q₀: the data-dependent bound is *not* below
λ/σ² at q₀ nor at q₀ + 0.1 … 0.4, and it decreases strictly along q₀, q₀/2, q₀/4, q₀/8.
The values below are copied from that test (σ-major order; None: no threshold listed).

Cross-check run for issue #16 (not part of the suite; the authors' code is not vendored):
over 4,000 random histograms (C ∈ 2..10 classes, K ∈ {11 … 5000} teachers, σ ∈ {1 … 200},
orders 1.5 … 495; the data-dependent bound active for 2,128 of them) our bound equals
``core.rdp_gaussian(core.compute_logq_gaussian(votes, σ), σ, orders)`` to 7e-15 relative,
and ``log_q`` equals ``compute_logq_gaussian`` to 4e-15.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from darrm.accounting.gnmax import data_dependent as dd
from darrm.errors import ParameterError

ORDERS = [1.1, 2.5, 32.0, 250.0]
SIGMAS = [1.5, 15.0, 1500.0, 15000.0]
NEG_LOG_Q0 = [2.8, 2.6, 427, None, 4.8, 4.0, 4.7, 275, 9.6, 8.8, 6.0, 4, 12, 11.2, 8.6, 6.4]
CASES = [(s, o, NEG_LOG_Q0[4 * i + j]) for i, s in enumerate(SIGMAS) for j, o in enumerate(ORDERS)
         if NEG_LOG_Q0[4 * i + j] is not None]


def _value(log_q: float, sigma: float, order: float) -> float:
    return dd.rdp_from_log_q(log_q, sigma, order).value


@pytest.mark.parametrize("sigma,order,neg_log_q0", CASES)
def test_published_threshold_q0_of_pate_2018(sigma, order, neg_log_q0):
    at_q0 = _value(-neg_log_q0, sigma, order)
    assert at_q0 == pytest.approx(order / sigma**2, rel=1e-12)  # data-independent at q₀
    for extra in (0.1, 0.2, 0.3, 0.4):  # and above it
        assert _value(math.log(math.exp(-neg_log_q0) + extra), sigma, order) == at_q0
    halved = [_value(-neg_log_q0 - math.log(2**k), sigma, order) for k in range(4)]
    # data-dependent, strictly decreasing, below q₀
    assert all(a > b for a, b in zip(halved[:-1], halved[1:], strict=True))


def _theorem6_mp(log_q: float, sigma: float, order: float, digits: int = 300) -> float:
    """Theorem 6 of Papernot et al. 2018 with μ2 = σ·sqrt(log 1/q), μ1 = μ2 + 1 (Prop. 10), in
    300-digit arithmetic: log((1−q)·A^{λ−1} + q·B^{λ−1})/(λ−1), A = (1−q)/(1−(q e^{ε2})^{(μ2−1)/μ2}),
    B = e^{ε1}/q^{1/(μ1−1)}, ε_i = μ_i/σ²."""
    with mpmath.workdps(digits):
        lq, s2, lam = mpmath.mpf(log_q), mpmath.mpf(sigma) ** 2, mpmath.mpf(order)
        q = mpmath.exp(lq)
        mu2 = mpmath.sqrt(s2 * -lq)
        mu1 = mu2 + 1
        e1, e2 = mu1 / s2, mu2 / s2
        a = (1 - q) / (1 - (q * mpmath.exp(e2)) ** ((mu2 - 1) / mu2))
        b = mpmath.exp(e1) / q ** (1 / (mu1 - 1))
        return float(mpmath.log((1 - q) * a ** (lam - 1) + q * b ** (lam - 1)) / (lam - 1))


@pytest.mark.parametrize("log_q", [-20.0, -60.0, -200.0, -1000.0])
@pytest.mark.parametrize("sigma,order", [(40.0, 10.0), (40.0, 30.0), (100.0, 20.0), (15.0, 2.5)])
def test_bound_matches_theorem6_in_high_precision(log_q, sigma, order):
    r = dd.rdp_from_log_q(log_q, sigma, order)
    assert r.applies  # every case lies inside Theorem 6's conditions
    assert r.data_dependent == pytest.approx(_theorem6_mp(log_q, sigma, order), rel=1e-9, abs=0)


@pytest.mark.parametrize("log_q", [-38.5, -60.0, -120.0])
def test_tiny_bound_keeps_relative_accuracy(log_q):
    # σ = 200, λ = 1.5: the bound is ~1e-18 and its terms nearly cancel; log(−expm1(x)) rounds
    # 1 − q to 1 there and was 16x off (issue #16 cross-check against pate_2018's rdp_gaussian)
    r = dd.rdp_from_log_q(log_q, 200.0, 1.5)
    assert r.data_dependent == pytest.approx(_theorem6_mp(log_q, 200.0, 1.5), rel=1e-9, abs=0)


def test_log_q_bound_is_papers_proposition7_for_the_argmax():
    votes = np.array([240, 6, 4] + [0] * 7)
    lq = dd.log_q(votes, 40.0, 0)
    with mpmath.workdps(40):
        expected = mpmath.log(sum(mpmath.erfc(mpmath.mpf(int(votes[0] - n)) / (2 * 40)) / 2 for n in votes[1:]))
    assert lq == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("bad", [0.5, float("nan")])
def test_log_q_bound_must_be_a_log_probability(bad):
    with pytest.raises(ParameterError) as err:
        dd.rdp_from_log_q(bad, 1.0, 2.0)
    assert err.value.parameter == "log_q_bound"


def test_certain_output_is_zero_rdp():
    assert dd.rdp_from_log_q(-math.inf, 5.0, 3.0).value == 0.0
