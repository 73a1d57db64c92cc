"""Data-dependent GNMax bound (Papernot et al. 2018 Thm 6; DaRRM Algorithm 6 corrected)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from darrm.accounting.gnmax import data_dependent as dd
from darrm.errors import ParameterError

PAPER_ORDERS = np.arange(1.5, 500.5, 0.5)


def _renyi_bernoulli(p: float, p2: float, lam: float) -> float:
    """D_λ(Bern(p) ‖ Bern(p2)) computed in log space."""
    terms = [lam * math.log(p) + (1 - lam) * math.log(p2), lam * math.log1p(-p) + (1 - lam) * math.log1p(-p2)]
    return float(np.logaddexp(*terms)) / (lam - 1)


def _two_class_output(n0: int, n1: int, sigma: float) -> float:
    """Pr[GNMax answers class 0] for votes (n0, n1): Pr[n0 − n1 + N(0, 2σ²) > 0]."""
    return float(norm.cdf((n0 - n1) / (math.sqrt(2) * sigma)))


@pytest.mark.parametrize("sigma", [21.46, 22.46, 68.21, 12.54, 8.81, 71.41, 13.12, 9.22])
def test_does_not_apply_for_eleven_teachers_two_classes_at_the_papers_sigmas(sigma):
    # DaRRM paper L1568: condition (line 8) fails for K = 11, C = 2 even with unanimous votes
    assert not dd.applies_anywhere(11, 2, sigma, PAPER_ORDERS)


def test_applies_in_papernot_regime():
    # Papernot et al. 2018: 250 teachers, 10 classes, σ = 40
    r = dd.data_dependent_rdp([250] + [0] * 9, 40.0, 10.0)
    assert r.applies and r.value < r.gaussian_bound / 100


@pytest.mark.parametrize("sigma", [1.0, 2.0, 3.0, 4.0])
@pytest.mark.parametrize("lam", [1.5, 2.0, 3.0, 5.0])
def test_bound_dominates_exact_renyi_divergence_two_classes(sigma, lam):
    # independent check: GNMax on 2 classes outputs a Bernoulli; neighbours move one vote
    k = 11
    checked = 0
    for a in range(k + 1):
        r = dd.data_dependent_rdp([a, k - a], sigma, lam)
        p = _two_class_output(a, k - a, sigma)
        for b in (a - 1, a + 1):
            if 0 <= b <= k:
                exact = _renyi_bernoulli(p, _two_class_output(b, k - b, sigma), lam)
                assert exact <= r.value * (1 + 1e-9) + 1e-300
                assert exact <= r.gaussian_bound
                checked += r.applies
    assert checked > 0 or sigma >= 4.0  # the data-dependent branch was exercised for small σ


def test_log_q_is_union_bound_of_pairwise_errors():
    votes, sigma = [7, 3, 1], 2.0
    q = sum(0.5 * math.erfc((7 - n) / (2 * sigma)) for n in (3, 1))
    assert math.exp(dd.log_q(votes, sigma, 0)) == pytest.approx(q, rel=1e-12)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: dd.data_dependent_rdp([3], 1.0, 2.0), "votes"),
        (lambda: dd.data_dependent_rdp([3, -1], 1.0, 2.0), "votes"),
        (lambda: dd.data_dependent_rdp([3.5, 1], 1.0, 2.0), "votes"),
        (lambda: dd.data_dependent_rdp([3, 1], 0.0, 2.0), "sigma"),
        (lambda: dd.data_dependent_rdp([3, 1], 1.0, 1.0), "order"),
        (lambda: dd.log_q([3, 1], 1.0, 2), "candidate"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(call, name):
    with pytest.raises(ParameterError) as err:
        call()
    assert err.value.parameter == name


def test_applies_for_eleven_teachers_once_noise_is_small():
    # the scan is not vacuous: below σ ≈ 5 the bound does beat λ/σ² for K = 11, C = 2
    assert dd.applies_anywhere(11, 2, 3.0, PAPER_ORDERS)
    assert not dd.applies_anywhere(11, 2, 5.64, PAPER_ORDERS)
