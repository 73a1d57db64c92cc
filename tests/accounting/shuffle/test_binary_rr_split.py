"""Shuffled binary RR from FFT-free count tails (``binary_rr_split``): one split against its
definition in 40 digits, against the FFT path, the blocks' coin-pair lemma against direct
convolutions (with a broken variant), and every split through ``binary_rr_exact`` at n > MAX_N."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from references.shuffle_exact import worst_case_delta
from scipy.stats import binom

from darrm.accounting.shuffle import RandomizedResponse
from darrm.accounting.shuffle import binary_rr_exact as bx
from darrm.accounting.shuffle import binary_rr_split as bs


def _mp_split_delta(n: int, j: int, eps0: float, eps: float) -> mpmath.mpf:
    """H_{e^ε}(Y_j + B_p || Y_j + B_{1-p}) for n users, split j, every atom, 40 digits."""
    mpmath.mp.dps = 40
    p = 1 / (1 + mpmath.e ** (-mpmath.mpf(eps0)))

    def pmf(N, q):
        return [mpmath.binomial(N, a) * q**a * (1 - q) ** (N - a) for a in range(N + 1)]

    a, b = pmf(j, p), pmf(n - 1 - j, 1 - p)
    y = [mpmath.fsum(a[i] * b[s - i] for i in range(max(0, s - len(b) + 1), min(s, len(a) - 1) + 1))
         for s in range(n)]
    ee = mpmath.e ** mpmath.mpf(eps)
    P = [(y[s] if s < n else 0) * (1 - p) + (y[s - 1] * p if s >= 1 else 0) for s in range(n + 1)]
    Q = [(y[s] if s < n else 0) * p + (y[s - 1] * (1 - p) if s >= 1 else 0) for s in range(n + 1)]
    return mpmath.fsum(max(x - ee * z, 0) for x, z in zip(P, Q, strict=True))


@pytest.mark.parametrize("eps0", [0.5, 2.0])
@pytest.mark.parametrize("j", [0, 97, 299])
def test_one_split_meets_its_definition_in_40_digits(eps0, j):
    n, delta = 300, 1e-6
    up, _, _ = bs.split_eps(n, j, eps0, delta, "upper", delta * 1e-10)
    lo, _, _ = bs.split_eps(n, j, eps0, delta, "lower", delta * 1e-10)
    assert 0 < lo <= up <= lo * (1 + 1e-6)
    assert _mp_split_delta(n, j, eps0, up) <= delta <= _mp_split_delta(n, j, eps0, lo)
    eps = 0.5 * (lo + up)
    d_up, _, _ = bs.split_delta(n, j, eps0, eps, "upper", 1e-25)
    d_lo, _, _ = bs.split_delta(n, j, eps0, eps, "lower", 1e-25)
    assert d_lo <= _mp_split_delta(n, j, eps0, eps) <= d_up <= d_lo * (1 + 1e-5)


def _fft_split_eps(n: int, j: int, eps0: float, delta: float, kind: str) -> float:
    """The FFT path's bound on one split (``binary_rr_exact._blocks``, its own error terms)."""
    best = 0.0
    for TP, TQ, err, _T in bx._blocks(n, eps0, delta * 1e-6 * math.exp(-eps0), np.array([j])):
        num, den = (TP + err - delta, TQ - err) if kind == "upper" else (TP - err - delta, TQ + err)
        ok = (num > 0) & (den > 0)
        if ok.any():
            best = max(best, float(np.log(num[ok] / den[ok]).max()))
    return min(best, eps0)


@pytest.mark.parametrize("n", [2000, 20000])
def test_one_split_agrees_with_the_fft_path_to_its_bracket(n):
    delta = 0.01 / n
    for eps0 in (0.25, 1.0, 4.0, 8.0):
        for j in (0, 1, n // 3, n - 2, n - 1):
            up = bs.split_eps(n, j, eps0, delta, "upper", delta * 1e-10)[0]
            lo = bs.split_eps(n, j, eps0, delta, "lower", delta * 1e-10)[0]
            f_up, f_lo = _fft_split_eps(n, j, eps0, delta, "upper"), _fft_split_eps(n, j, eps0, delta, "lower")
            assert lo <= up and lo <= f_up and f_lo <= up  # both brackets hold the true value
            assert up - lo <= 0.2 * (f_up - f_lo) + 1e-12  # and the tails' is narrower


def _forward(n: int, j: int, eps0: float, eps: float) -> float:
    p = 1 / (1 + math.exp(-eps0))
    y = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(n - j), n - 1 - j, 1 - p))
    P, Q = np.convolve(y, [1 - p, p]), np.convolve(y, [p, 1 - p])
    return float(np.maximum(P - math.exp(eps) * Q, 0.0).sum())


def _coin_pair_mixture(n: int, j0: int, g: int, eps0: float, eps: float, coin: float | None = None) -> float:
    """E_M F(M), the coin-pair lemma's exact mixture (L ~ Bin(g-1, coin), M | L ~ Bin(⌊L/2⌋, λ))."""
    p = 1 / (1 + math.exp(-eps0))
    c = 2 * (1 - p) if coin is None else coin
    lam = 1 / (2 * (p * p + (1 - p) ** 2))
    tot = 0.0
    for L in range(g):
        for M in range(L // 2 + 1):
            w = binom.pmf(L, g - 1, c) * binom.pmf(M, L // 2, lam)
            tot += w * _forward(n - g + 1 + 2 * M, j0 + M, eps0, eps)
    return tot


def test_coin_pairs_bound_every_split_of_a_block_and_a_broken_variant_fails():
    n, g = 40, 12
    broken_caught = False
    for eps0 in (0.25, 1.0, 3.0):
        p = bs._p(eps0)
        for j0 in (0, 14, 28):
            n_a, j_a, slack = bs.coin_pair_anchor(n, j0, g, p, 0.2)
            for eps in (0.1 * eps0, 0.3 * eps0):
                truth = max(_forward(n, j, eps0, eps) for j in range(j0, j0 + g))
                assert truth <= _coin_pair_mixture(n, j0, g, eps0, eps) * (1 + 1e-12)
                assert truth <= slack + _forward(n_a, j_a, eps0, eps) * (1 + 1e-12)
                # broken: every block user taken for a coin (the (2p-1)·δ part forgotten)
                broken_caught |= _coin_pair_mixture(n, j0, g, eps0, eps, coin=1.0) < truth
    assert broken_caught


def test_coin_pairs_keep_users_where_the_plain_bound_drops_them():
    p = bs._p(0.25)
    n_a, j_a, slack = bs.coin_pair_anchor(10**8, 0, 10**6, p, 1e-16)
    assert slack <= 1e-16 and j_a > 0
    assert n_a - (10**8 - 10**6 + 1) > 0.8 * 10**6  # 0.86 of the block's users kept
    assert bs.coin_pair_anchor(100, 5, 2, p, 1e-16) == (99, 5, 0.0)  # too small: the plain bound


def test_every_split_above_max_n_brackets_the_enumerated_worst_case(monkeypatch):
    # force the blocks path at n = 50 (16 blocks first, refined): the bounds bracket the worst
    # case over every dataset, and ε(δ) brackets the FFT path's (every split) answer
    n = 50
    monkeypatch.setattr(bx, "MAX_N", 5)
    for eps0 in (1.0, 3.0):
        eps = np.array([0.05, 0.3, 0.6]) * eps0
        truth = worst_case_delta(RandomizedResponse(eps0, 2), n, eps).delta
        for e, t in zip(eps, truth, strict=True):
            assert bx.exact_delta(eps0, n, e, "lower") <= t <= bx.exact_delta(eps0, n, e, "upper")
        up, lo = bx.exact_eps(eps0, n, 1e-4, "upper"), bx.exact_eps(eps0, n, 1e-4, "lower")
        monkeypatch.setattr(bx, "MAX_N", 20000)
        f_up, f_lo = bx.exact_eps(eps0, n, 1e-4, "upper"), bx.exact_eps(eps0, n, 1e-4, "lower")
        monkeypatch.setattr(bx, "MAX_N", 5)
        assert lo <= f_up and f_lo <= up and lo <= up


def test_above_max_n_agrees_with_every_split_at_n_20000(monkeypatch):
    n, delta = 20000, 0.01 / 20000
    for eps0 in (4.0,):
        f_up, f_lo = bx.exact_eps(eps0, n, delta, "upper"), bx.exact_eps(eps0, n, delta, "lower")
        monkeypatch.setattr(bx, "MAX_N", 19999)
        up, lo = bx.exact_eps(eps0, n, delta, "upper"), bx.exact_eps(eps0, n, delta, "lower")
        monkeypatch.setattr(bx, "MAX_N", 20000)
        assert lo <= f_up and f_lo <= up
        assert lo <= up <= lo * 1.002  # the refinement aims at TARGET_MAX = 1e-3 (seen: 1.0011 at eps0 = 0.25)


def test_a_coarse_partition_is_still_a_bound(monkeypatch):
    # no refinement (2 blocks, target 1): looser, never below the lower bound
    n, eps0, delta = 10**6, 1.0, 1e-8
    lo = bx.exact_eps(eps0, n, delta, "lower")
    fine = bx.exact_eps(eps0, n, delta, "upper")
    monkeypatch.setattr(bs, "FIRST_BLOCKS", 2)
    monkeypatch.setattr(bs, "TARGET_MAX", 1.0)
    monkeypatch.setattr(bs, "TARGET_MIN", 1.0)
    coarse = bx.exact_eps(eps0, n, delta, "upper")
    assert lo <= fine <= lo * (1 + bs.TARGET_MAX) and fine < coarse
