"""Confident-GNMax's smooth-sensitivity release: the float64 code equals a 40-digit transcription of
Papernot et al. 2018's formulas (Theorem 6, Proposition 7, Algorithms 3–5, the threshold step,
Theorem 23) on 12 vote histograms, and the local-sensitivity bounds bound the real change of the
data-dependent RDP over every one-vote move (and every two-move path at distance 1)."""

from __future__ import annotations

import functools
import itertools

import mpmath as mp
import numpy as np
import pytest

from darrm import ParameterError
from darrm.experiments.pate import smooth_sensitivity as ss

K, C, T, S1, S2, ORDER, BETA, SIGMA_SS, DELTA = 250, 10, 200.0, 150.0, 40.0, 20.0, 0.02, 5.0, 1e-8
mp.mp.dps = 40


# ---------------------------------------------------------------- 40-digit transcription
def _log1mexp(x):
    return mp.log(-mp.expm1(x))


def _thm6(lq, sigma, lam):
    sigma, lam = mp.mpf(sigma), mp.mpf(lam)
    var = sigma**2
    mu2 = sigma * mp.sqrt(-lq)
    mu1 = mu2 + 1
    e1, e2 = mu1 / var, mu2 / var
    l1q = _log1mexp(lq)
    la = (lam - 1) * (l1q - _log1mexp((lq + e2) * (1 - 1 / mu2)))
    lb = (lam - 1) * (e1 - lq / (mu1 - 1))
    return mp.log(mp.exp(l1q + la) + mp.exp(lq + lb)) / (lam - 1)


def _applies(lq, sigma, lam):
    sigma = mp.mpf(sigma)
    mu2 = sigma * mp.sqrt(-lq)
    mu1 = mu2 + 1
    if mu1 < lam or mu2 <= 1:
        return False
    e2 = mu2 / sigma**2
    return lq <= (mu2 - 1) * e2 - mu2 * mp.log(mu1 / (mu1 - 1) * mu2 / (mu2 - 1))


@functools.lru_cache(maxsize=None)
def _lq0(sigma, lam):
    ind = mp.mpf(lam) / mp.mpf(sigma) ** 2
    hi = min(-(1 + 1 / mp.mpf(sigma)) ** 2, -((mp.mpf(lam) - mp.mpf("0.99")) / sigma) ** 2, -1 / mp.mpf(sigma) ** 2)
    assert _applies(hi, sigma, lam)
    if _thm6(hi, sigma, lam) < ind:
        return hi
    lo = 2 * hi
    while _thm6(lo, sigma, lam) > ind:
        lo *= mp.mpf("1.5")
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _thm6(mid, sigma, lam) > ind else (mid, hi)
    return (lo + hi) / 2


def _beta(lq, sigma, lam):
    return mp.mpf(lam) / mp.mpf(sigma) ** 2 if lq >= _lq0(sigma, lam) else _thm6(lq, sigma, lam)


def _erfcinv(x):
    return mp.erfinv(1 - x)


def _bl(q, sigma, c):
    return (c - 1) * mp.erfc(1 / mp.mpf(sigma) + _erfcinv(2 * q / (c - 1))) / 2


def _bu(q, sigma, c):
    return min(mp.mpf(1), (c - 1) * mp.erfc(-1 / mp.mpf(sigma) + _erfcinv(2 * q / (c - 1))) / 2)


def _logq(votes, sigma):
    v = [mp.mpf(int(x)) for x in votes]
    top = max(range(len(v)), key=lambda i: (v[i], -i))
    s = mp.fsum(mp.erfc((v[top] - v[i]) / (2 * mp.mpf(sigma))) / 2 for i in range(len(v)) if i != top)
    return min(mp.log(s), mp.log(1 - mp.mpf(1) / len(v)))


def _ls_at(lq, sigma, c, lam):
    lq0 = _lq0(sigma, lam)
    lq1 = mp.log(_bl(mp.exp(lq0), sigma, c))
    if lq1 <= lq <= lq0:
        lq = lq1
    q = mp.exp(lq)
    b = _beta(lq, sigma, lam)
    return max(_beta(mp.log(_bu(q, sigma, c)), sigma, lam) - b, b - _beta(mp.log(_bl(q, sigma, c)), sigma, lam))


def _ls_gnmax(votes, k, sigma, lam):
    c = len(votes)
    lq0 = _lq0(sigma, lam)
    lq1 = mp.log(_bl(mp.exp(lq0), sigma, c))
    lq = _logq(votes, sigma)
    res = [_ls_at(lq1, sigma, c, lam)] * k
    if lq1 <= lq <= lq0:
        return res
    v = sorted((int(x) for x in votes), reverse=True)
    res[0] = _ls_at(lq, sigma, c, lam)
    d, left = 0, lq > lq0
    while (left and lq > lq0 and v[1] > 0) or (not left and lq < lq1):
        d += 1
        if left:
            v[0], v[1] = v[0] + 1, v[1] - 1
            v = [v[0]] + sorted(v[1:], reverse=True)
        else:
            v[0], v[1] = v[0] - 1, v[1] + 1
        lq = _logq(v, sigma)
        res[d] = _ls_at(lq, sigma, c, lam)
    return res


def _thr_rdp(top, k_unused, t, s1, lam):
    lp = mp.log(mp.erfc((mp.mpf(t) - top) / (mp.mpf(s1) * mp.sqrt(2))) / 2)
    lq = min(lp, _log1mexp(lp))
    s = mp.sqrt(2) * s1
    ind = mp.mpf(lam) / s**2
    mu2 = s * mp.sqrt(-lq)
    if mu2 + 1 > lam and mu2 > 1 and -lq > mu2 / s**2 and _applies(lq, s, lam):
        return min(ind, _thm6(lq, s, lam))
    return ind


@functools.lru_cache(maxsize=None)
def _thr_list(k, t, s1, lam):
    return [_thr_rdp(v, k, t, s1, lam) for v in range(k + 1)]


def _ls_thr(votes, k, t, s1, lam):
    rdp = _thr_list(k, t, s1, lam)

    def step(v):
        return max(abs(rdp[v - 1] - rdp[v]) if v > 0 else 0, abs(rdp[v + 1] - rdp[v]) if v < k else 0)

    top = int(max(votes))
    ls = [mp.mpf(0)] * k
    for d in range(max(top, k - top)):
        ls[d] = max(step(v) for v in (top + d, top - d) if 0 <= v <= k)
    return ls


def _histograms() -> np.ndarray:
    """12 histograms of 250 votes: near-unanimous (q below q1), split (q above q0), in between."""
    rng = np.random.default_rng(25)
    out = [[250] + [0] * 9, [240, 10] + [0] * 8, [125, 125] + [0] * 8, [25] * 10, [100, 90, 60] + [0] * 7,
           [200, 30, 20] + [0] * 7, [180, 50, 20] + [0] * 7, [150, 60, 40] + [0] * 7]
    for conc in (0.3, 1.0, 3.0, 30.0):
        p = rng.dirichlet(np.full(C, conc))
        out.append(rng.multinomial(K, p).tolist())
    return np.array(out)


@pytest.fixture(scope="module")
def hists() -> np.ndarray:
    return _histograms()


def test_q0_matches_the_40_digit_root():
    assert ss.log_q0(S2, ORDER) == pytest.approx(float(_lq0(S2, ORDER)), rel=1e-10)
    assert ss.log_q0(S2 / 2, ORDER / 2) == pytest.approx(float(_lq0(S2 / 2, ORDER / 2)), rel=1e-10)


def test_local_sensitivities_match_the_transcription_on_12_histograms(hists):
    for n in hists:
        got = ss.gnmax_local_sensitivities(n, K, S2, ORDER)
        want = np.array([float(x) for x in _ls_gnmax(n, K, S2, ORDER)])
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-15)
        got = ss.threshold_local_sensitivities(n, K, T, S1, ORDER)
        want = np.array([float(x) for x in _ls_thr(n, K, T, S1, ORDER)])
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-15)


def test_published_epsilon_matches_the_transcription(hists):
    answered = np.array([True, False] * 6)
    rel = ss.publish_epsilon(hists, answered, T, S1, S2, DELTA, ORDER, BETA, SIGMA_SS, np.random.default_rng(3))
    rho = mp.fsum(_thr_rdp(int(n.max()), K, T, S1, ORDER) for n in hists)
    rho += mp.fsum(_beta(_logq(n, S2), S2, ORDER) for n, a in zip(hists, answered, strict=True) if a)
    ls = [mp.fsum(col) for col in zip(*([_ls_thr(n, K, T, S1, ORDER) for n in hists]
                                        + [_ls_gnmax(n, K, S2, ORDER) for n, a in zip(hists, answered, strict=True)
                                           if a]), strict=True)]
    smooth = max(x * mp.exp(-BETA * d) for d, x in enumerate(ls))
    cost = ORDER * mp.exp(2 * BETA) / SIGMA_SS**2 + (-mp.log(1 - 2 * ORDER * BETA) / 2 + BETA * ORDER) / (ORDER - 1)
    z = np.random.default_rng(3).standard_normal()
    eps = rho + smooth * SIGMA_SS * z + cost + mp.log(1 / mp.mpf(DELTA)) / (ORDER - 1)
    assert rel.rdp_data_dependent == pytest.approx(float(rho), rel=1e-9)
    assert rel.smooth_sensitivity == pytest.approx(float(smooth), rel=1e-7)
    assert rel.gnss_rdp == pytest.approx(float(cost), rel=1e-12)
    assert rel.epsilon_published == pytest.approx(float(eps), rel=1e-7)
    assert rel.answered == 6 and rel.smooth_sensitivity > 0


def _moves(n):
    for a, b in itertools.permutations(range(len(n)), 2):
        if n[a] > 0:
            m = n.copy()
            m[a] -= 1
            m[b] += 1
            yield m


def _beta_of(n) -> float:
    return ss.gnmax_rdp(ss._log_q_gnmax(n.astype(np.float64), S2), S2, ORDER)


@pytest.mark.parametrize("row", [1, 5, 6, 9])
def test_local_sensitivity_bounds_every_real_change_at_distance_0_and_1(hists, row):
    """LS(D, 0) ≥ |β(D′) − β(D)| over every move; LS(D, 1) ≥ the same at every neighbour D′ of D."""
    n = hists[row]
    ls = ss.gnmax_local_sensitivities(n, K, S2, ORDER)
    b = _beta_of(n)
    worst0 = max(abs(_beta_of(m) - b) for m in _moves(n))
    assert worst0 <= ls[0] + 1e-12
    worst1 = 0.0
    for m in _moves(n):
        bm = _beta_of(m)
        worst1 = max(worst1, max(abs(_beta_of(x) - bm) for x in _moves(m)))
    assert worst1 <= ls[1] + 1e-12
    thr = ss.threshold_local_sensitivities(n, K, T, S1, ORDER)
    r0 = ss.threshold_rdp(float(ss.log_pr_answered(n, T, S1)), S1, ORDER)
    assert max(abs(ss.threshold_rdp(float(ss.log_pr_answered(m, T, S1)), S1, ORDER) - r0) for m in _moves(n)) \
        <= thr[0] + 1e-12


def test_conditions_hold_at_pate_2018s_setting_and_gnss_refuses_a_bad_order():
    assert ss.check_conditions(S2, C, ORDER)
    with pytest.raises(ParameterError, match="order"):
        ss.gnss_rdp(0.05, 5.0, 10.0)  # λ must be < 1/(2β) = 10
    with pytest.raises(ParameterError, match="answered"):
        ss.publish_epsilon(_histograms(), [True], T, S1, S2, DELTA, ORDER, BETA, SIGMA_SS, np.random.default_rng(0))


def test_fixed_parameters_depend_only_on_public_settings_and_are_valid():
    order, beta, sigma_ss = ss.fixed_parameters(S1, S2, 640, 1e-5, 2.0)
    assert 1.0 < order < 1.0 / (2.0 * beta) and beta * order == pytest.approx(ss.BETA_TIMES_ORDER)
    assert order * np.exp(2 * beta) / sigma_ss**2 == pytest.approx(ss.GNSS_COST_SHARE * 2.0)
    lam = np.arange(2.0, 201.0)  # the chosen order minimises the data-independent ε over the grid
    ind = 640 * (lam / (2 * S1**2) + lam / S2**2) + np.log(1e5) / (lam - 1)
    assert order == lam[np.argmin(ind)]
