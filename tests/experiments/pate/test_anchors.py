"""The published anchors' settings reproduce darrm's data-independent totals 4.31 (PATE 2017, LNMax,
Q = 100) and 3.93 (PATE 2018, Confident-GNMax, σ1 = 150, σ2 = 40, 640 queries), each re-derived here
by an independent closed form in high precision (mpmath), and Confident-GNMax charges every query."""

from __future__ import annotations

import mpmath as mp
import pytest

from darrm import ParameterError
from darrm.experiments.pate.anchors import anchors
from darrm.experiments.pate.multiclass_aggregators import confident_total_epsilon

mp.mp.dps = 50


def _pure_composition_delta(eps0: float, k: int, eps: mp.mpf) -> mp.mpf:
    """δ(ε) of k-fold composition of ε0-DP: the k-fold randomized response is the worst case
    (Kairouz-Oh-Viswanath 2015, Thm 3.3); δ = E_P[(1 − e^{ε − L})_+] with L = (k − 2i)ε0, i ~ Bin(k, q)."""
    e0 = mp.mpf(eps0)
    p = mp.e ** e0 / (1 + mp.e ** e0)
    return mp.fsum(mp.binomial(k, i) * p ** (k - i) * (1 - p) ** i
                   * max(mp.mpf(0), 1 - mp.e ** (eps - (k - 2 * i) * e0)) for i in range(k + 1))


def _gaussian_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    """δ(ε) of μ-GDP (Dong, Roth & Su 2022, Corollary 2.13)."""
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def test_pate_2017_lnmax_anchor_is_4_31_and_tight():
    a = anchors()[0]
    assert a.name.startswith("PATE 2017") and a.queries == 100 and a.delta == 1e-5
    assert round(a.epsilon_data_independent, 2) == 4.31
    eps = mp.mpf(a.epsilon_data_independent)
    # the exact ε lies within 1e-9 above the float64 one (at the float itself exact δ exceeds 1e-5 by ≈ 2e-21:
    # the accountant certifies δ in float64, not exactly)
    assert _pure_composition_delta(0.1, 100, eps + mp.mpf("1e-9")) <= mp.mpf("1e-5")
    assert _pure_composition_delta(0.1, 100, eps - mp.mpf("1e-3")) > mp.mpf("1e-5")  # and not loose


def test_pate_2018_confident_gnmax_anchor_is_3_93_charging_all_640_queries():
    a = anchors()[1]
    assert a.name.startswith("PATE 2018") and (a.queries, a.answered) == (640, 286)
    assert round(a.epsilon_data_independent, 2) == 3.93
    mu = mp.sqrt(640 * (1 / mp.mpf(150) ** 2 + 2 / mp.mpf(40) ** 2))
    eps = mp.mpf(a.epsilon_data_independent)
    assert _gaussian_delta(mu, eps) <= mp.mpf("1e-5") * (1 + mp.mpf("1e-6"))   # PLD discretisation slack
    assert _gaussian_delta(mu, eps - mp.mpf("1e-3")) > mp.mpf("1e-5")
    # charging only the answered queries would understate the data-independent total
    assert confident_total_epsilon(150, 40, 1e-5, 286) < a.epsilon_data_independent - 1


def test_published_epsilons_are_the_papers_data_dependent_draws_below_the_data_independent_totals():
    for a in anchors():
        assert a.epsilon_published < a.epsilon_data_independent / 1.9


def test_anchors_refuse_a_bad_delta():
    with pytest.raises(ParameterError, match="delta"):
        anchors(0.0)
