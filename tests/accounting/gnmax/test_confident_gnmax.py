"""Confident-GNMax's data-dependent RDP against a direct mpmath transcription of Papernot et al. 2018.

The reference below is written from the paper's statements alone (Theorem 6, Propositions 7 and 8,
the threshold step of Section 4.2 as the authors' ``research/pate_2018/core.py`` evaluates it:
``compute_logpr_answered`` rounds max n, ``compute_rdp_threshold`` uses q = min(p, 1 − p) and noise
√2·σ1, ``compute_logq_gaussian`` clamps q at 1 − 1/C), in 50-digit arithmetic, with no code shared
with :mod:`darrm.accounting.gnmax`.  Tolerance: 1e-9 relative, or 1e-30 absolute for the RDP of
near-unanimous histograms under small noise (values ~1e-46, where the bound's terms of size ~q cancel
in float64; 1e-30 is some 28 orders below the log(1/δ)/(λ−1) ≥ 0.1 every ε adds).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from darrm.accounting.gnmax.confident import confident_gnmax_epsilon, confident_gnmax_rdp, log_pr_answered
from darrm.errors import ParameterError

mpmath.mp.dps = 50
ORDERS = [1.5, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
PATE2018 = (200.0, 150.0, 40.0)  # T, σ1, σ2 of PATE 2018's MNIST run
TIGHT = (200.0, 10.0, 5.0)  # small σ1: the data-dependent step-1 bound applies too


def _theorem6(q, sigma, lam):
    """min(λ/σ², Theorem 6 bound) at q (mpmath); the bound only where its conditions hold."""
    q, sigma, lam = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(lam)
    independent = lam / sigma**2
    if q == 0:
        return mpmath.mpf(0)
    mu2 = sigma * mpmath.sqrt(mpmath.log(1 / q))
    mu1 = mu2 + 1
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    ok = (q < 1 and mu2 > 1 and lam < mu1 and q * mpmath.e**e2 < 1
          and q <= mpmath.e**((mu2 - 1) * e2) / ((mu1 / (mu1 - 1)) * (mu2 / (mu2 - 1)))**mu2)
    if not ok:
        return independent
    A = (1 - q) / (1 - (q * mpmath.e**e2)**((mu2 - 1) / mu2))
    B = mpmath.e**e1 / q**(1 / (mu1 - 1))
    return min(independent, mpmath.log((1 - q) * A**(lam - 1) + q * B**(lam - 1)) / (lam - 1))


def _reference_query(n, answered, T, s1, s2, lam):
    n = [int(x) for x in n]
    p = mpmath.erfc((T - max(n)) / (s1 * mpmath.sqrt(2))) / 2  # Pr[max n + N(0, σ1²) ≥ T]
    step1 = _theorem6(min(p, 1 - p), mpmath.sqrt(2) * s1, lam)  # λ/(2σ1²) when the bound does not apply
    if not answered:
        return step1
    top = n.index(max(n))
    q = sum(mpmath.erfc(mpmath.mpf(n[top] - n[i]) / (2 * s2)) / 2 for i in range(len(n)) if i != top)
    q = min(q, 1 - mpmath.mpf(1) / len(n))
    return step1 + _theorem6(q, s2, lam)


def _histograms(seed: int, count: int, teachers: int = 250, classes: int = 10) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [np.array([teachers] + [0] * (classes - 1)), np.array([teachers // 2, teachers - teachers // 2] + [0] * 8)]
    while len(out) < count:
        conc = rng.choice([0.05, 0.3, 1.0, 5.0])
        out.append(rng.multinomial(teachers, rng.dirichlet(np.full(classes, conc))))
    return out


@pytest.mark.parametrize("setting", [PATE2018, TIGHT], ids=["pate2018", "small-sigma1"])
def test_each_query_matches_the_papers_formulas(setting):
    T, s1, s2 = setting
    hists = _histograms(7, 24)
    applied = 0
    for n in hists:
        for answered in (True, False):
            dep, ind = confident_gnmax_rdp([n], [answered], T, s1, s2, ORDERS)
            for k, lam in enumerate(ORDERS):
                ref = _reference_query(n, answered, T, s1, s2, lam)
                assert dep[k] == pytest.approx(float(ref), rel=1e-9, abs=1e-30)
                assert ind[k] == pytest.approx(lam / (2 * s1**2) + (lam / s2**2 if answered else 0.0), rel=1e-12)
                applied += dep[k] < ind[k] * (1 - 1e-9)
    assert applied > 0  # the data-dependent bound is active somewhere in the set


def test_a_run_adds_up_and_only_answered_queries_pay_step_two():
    T, s1, s2 = TIGHT
    hists = _histograms(11, 30)
    answered = [bool(i % 3) for i in range(len(hists))]
    dep, _ = confident_gnmax_rdp(hists, answered, T, s1, s2, ORDERS)
    for k, lam in enumerate(ORDERS):
        ref = mpmath.fsum(_reference_query(n, a, T, s1, s2, lam) for n, a in zip(hists, answered, strict=True))
        assert dep[k] == pytest.approx(float(ref), rel=1e-9, abs=1e-30)


def test_epsilon_is_the_best_order_of_the_classical_conversion():
    T, s1, s2 = PATE2018
    hists = _histograms(3, 40)
    answered = [True] * 40
    acc = confident_gnmax_epsilon(hists, answered, T, s1, s2, 1e-5, orders=ORDERS)
    dep, ind = confident_gnmax_rdp(hists, answered, T, s1, s2, ORDERS)
    conv = [math.log(1e5) / (lam - 1) for lam in ORDERS]
    assert acc.epsilon == pytest.approx(min(i + c for i, c in zip(ind, conv, strict=True)), rel=1e-12)
    assert acc.epsilon_data_dependent == pytest.approx(min(d + c for d, c in zip(dep, conv, strict=True)), rel=1e-12)
    assert acc.epsilon_data_dependent <= acc.epsilon and acc.answered == 40


def test_log_pr_answered_rounds_the_top_count_like_the_authors():
    assert log_pr_answered([120, 130], 200.0, 150.0) == pytest.approx(
        float(mpmath.log(mpmath.erfc(mpmath.mpf(70) / (150 * mpmath.sqrt(2))) / 2)), rel=1e-12)


@pytest.mark.parametrize("kw,name", [({"sigma1": 0.0}, "sigma1"), ({"sigma2": -1.0}, "sigma2"),
                                     ({"orders": [1.0]}, "orders"), ({"answered": [True, False]}, "answered"),
                                     ({"histograms": [[3]]}, "histograms"),
                                     ({"histograms": [[3, 1], [1, 2, 3]]}, "histograms"),
                                     ({"histograms": []}, "histograms")])
def test_bad_input_names_the_parameter(kw, name):
    args = dict(histograms=[[3, 1]], answered=[True], threshold=2.0, sigma1=1.0, sigma2=1.0, orders=ORDERS)
    args.update(kw)
    with pytest.raises(ParameterError, match=name):
        confident_gnmax_rdp(**args)
