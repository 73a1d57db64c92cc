"""The variation-ratio δ(ε) (Wang et al. Thm 4.1/4.8) is rounded in the safe direction: the upper δ
is >= and the lower δ <= the pair's divergence evaluated independently, from the definition of the
pair (P, Q of Thm 4.7 on every output (a, b)) in 40-digit mpmath arithmetic, at small n; the sum
without its error charges (or with them of the wrong sign) crosses that value, so the checks can
fail; the tails' error bounds cover their 40-digit values on the recurrence path."""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest

from darrm.accounting.shuffle import variation_ratio as vr
from darrm.numerics import binomial as B


@functools.lru_cache(maxsize=None)
def _pair(n: int, p: float, beta: float, q: float, separate_leftover: bool) -> tuple[tuple, tuple]:
    """P and Q on every output (a, b), a + b <= n, at 40 digits, from the floats (p, β, q) read
    exactly: C ~ Bin(n − 1, 2r), A | C ~ Bin(C, 1/2), (Δ1, Δ2) = (1, 0) w.p. pα, (0, 1) w.p. α,
    (0, 0) w.p. g (dropped with ``separate_leftover``: those outputs are equal under P and Q)."""
    mpmath.mp.dps = 40
    b = mpmath.mpf(beta)
    if math.isinf(p):
        pa, al, g = b, mpmath.mpf(0), 1 - b
    else:
        al = b / (mpmath.mpf(p) - 1)
        pa, g = mpmath.mpf(p) * al, 1 - (mpmath.mpf(p) + 1) * al
    if separate_leftover:
        g = mpmath.mpf(0)
    x = 2 * pa / mpmath.mpf(q)
    N = n - 1
    pi = [mpmath.binomial(N, c) * x**c * (1 - x) ** (N - c) for c in range(N + 1)] + [mpmath.mpf(0)]
    half = [mpmath.mpf(2) ** -t for t in range(n + 1)]

    def bt(t: int, a: int):
        return mpmath.binomial(t, a) * half[t] if 0 <= a <= t else mpmath.mpf(0)

    P, Q = [], []
    for t in range(n + 1):
        pc = pi[t - 1] if t >= 1 else mpmath.mpf(0)
        for a in range(t + 1):
            x1 = pc * bt(t - 1, a - 1) if t >= 1 else 0
            x0 = pc * bt(t - 1, a) if t >= 1 else 0
            xg = pi[t] * bt(t, a)
            P.append(pa * x1 + al * x0 + g * xg)
            Q.append(al * x1 + pa * x0 + g * xg)
    return tuple(P), tuple(Q)


def _exact(n: int, params: tuple, eps: float, separate_leftover: bool = False) -> mpmath.mpf:
    P, Q = _pair(n, *params, separate_leftover)
    mpmath.mp.dps = 40
    ee = mpmath.exp(mpmath.mpf(eps))
    return mpmath.fsum(max(x - ee * y, 0) for x, y in zip(P, Q, strict=True))


E2 = math.exp(2.0)
#: (n, (p, β, q), separate_leftover): g = 0 and g > 0, p = ∞, a general-clone pair with the victim's
#: left-over kept separate, and 2r = 1 with g > 0 (every other user a clone: C = n − 1)
CASES = [
    (60, (2.25, 0.2, 1.5), False),
    (150, (math.e, math.tanh(0.5), math.e), False),
    (200, (E2, (E2 - 1) / (E2 + 1), E2), False),
    (120, (4.0, 0.3, 9.0), False),
    (120, (4.0, 0.3, 9.0), True),
    (100, (math.inf, 1.0, 12.5), False),
    (101, (3.0, 0.375, 1.125), False),
]
EPS = (0.0, 0.05, 0.2, 0.5, 1.0)


def _points():
    for n, params, sep in CASES:
        for eps in EPS:
            if math.isinf(params[0]) or eps < math.log(params[0]):
                yield n, params, sep, eps


@pytest.mark.parametrize("n,params,sep", CASES)
def test_plain_upper_delta_is_at_least_and_lower_at_most_the_40_digit_divergence(n, params, sep):
    pr = vr.VRParams(*params)
    for eps in EPS:
        exact = _exact(n, params, eps, sep)
        up = vr.vr_delta(eps, n, pr, separate_leftover=sep)
        lo = vr.vr_delta(eps, n, pr, separate_leftover=sep, kind="lower")
        assert lo <= exact <= up, (eps, float(exact), lo, up)
        # and the bracket is no wider than its charges: scipy's assumed RHO = 1e-9 of the P and Q
        # masses that cancel in δ (1e-18 absolute where δ itself is below that)
        assert up - lo <= 1e-6 * exact + 1e-16, (eps, float(exact), lo, up)


def test_uncharged_and_wrong_sign_sums_cross_the_40_digit_divergence():
    """The sum without its error charges is below the exact δ somewhere (so an uncharged upper bound
    fails) and above it somewhere (an uncharged lower bound fails); with the charges' sign flipped,
    the upper bound falls below it and the lower bound above it at every point with δ > 1e-12."""
    below = above = 0
    flipped = []
    for n, params, sep, eps in _points():
        exact = _exact(n, params, eps, sep)
        s = vr.vr_sum(eps, n, vr.VRParams(*params), separate_leftover=sep)
        below += s.value < exact
        above += s.value > exact
        if exact > 1e-12:
            wrong_up = s.value - s.err - s.out_lower
            wrong_lo = s.value + s.err + s.out_upper
            flipped.append(wrong_up < exact < wrong_lo)
    assert below > 0 and above > 0
    assert flipped and all(flipped)


def test_leftover_slice_of_an_all_clone_count_is_excluded_from_the_upper_set():
    """2r = 1, g > 0: C = n − 1 surely and the slice t = n − 1 holds only the victim's left-over,
    where P − e^ε Q = g(1 − e^ε)P(C = t)C(t, a)/2^t <= 0, so it is outside the optimal set; including
    it (as the thresholds at ρ = 0 would) takes δ below the exact divergence."""
    n, params = 80, (3.0, 0.375, 1.125)
    pr = vr.VRParams(*params)
    assert pr.r == 0.5 and pr.g == 0.25
    for eps in (0.05, 0.2, 0.5):
        exact = _exact(n, params, eps)
        assert vr.vr_delta(eps, n, pr) >= exact
        # the thresholds of that slice taken at ρ_t = 0 (the previous code): a clearly smaller value
        s = vr.vr_sum(eps, n, pr)
        c = np.array([n - 1])
        k0 = np.ceil((math.expm1(eps) * 3 + 2) * pr.alpha * c / (pr.beta * (math.exp(eps) + 1))).astype(np.int64)
        wrong = s.value + (1 - math.exp(eps)) * pr.g * float(B.upper_tail(k0, c)[0])
        assert wrong < exact * (1 - 1e-3)


def test_tail_bounds_on_the_recurrence_path_cover_the_40_digit_tails():
    """upper_tail_along_bounds on a path long enough for its recurrence (c = 3000..5999, thresholds
    stepping by at most one): |T̃ − T| <= err at sampled points, T by mpmath's regularized
    incomplete beta function, I_{1/2}(k, c − k + 1) = P(Bin(c, 1/2) >= k); the bounds are not zero
    (the float tails are not exact there)."""
    c = np.arange(3000, 6000, dtype=np.int64)
    k = np.ceil(0.52 * (c + 1) + 3).astype(np.int64)  # a path in the upper tail, unit steps
    t, err = B.upper_tail_along_bounds(k, c)  # c.size > 2 × 512: the recurrence path
    mpmath.mp.dps = 40
    misses = 0
    for i in range(0, c.size, 97):
        exact = mpmath.betainc(int(k[i]), int(c[i] - k[i] + 1), 0, 0.5, regularized=True)
        assert abs(t[i] - exact) <= err[i], (int(c[i]), int(k[i]))
        misses += t[i] != exact
    assert misses > 0 and np.all(err > 0)


def test_rate_rounding_is_charged_when_two_r_is_inexact():
    """2r = 2pβ/((p − 1)q) rounded in float: the law's relative error grows by the log-derivative
    bound of :func:`vr._rate_rounding`, and is not charged when 2r is exact."""
    from fractions import Fraction

    exact_pr = vr.VRParams(3.0, 0.375, 3.0)  # 2r = 0.375 exactly
    x, _ = vr._param_rounding(exact_pr, exact_pr.g, False)
    law = B.window_pmf(999, min(1.0, 2 * exact_pr.r))
    assert x == Fraction(min(1.0, 2 * exact_pr.r))
    assert vr._rate_rounding(999, 2 * exact_pr.r, (x, x), law) == (0.0, law.dropped)
    pr = vr.general_params(1.0)
    two_r = min(1.0, 2 * pr.r)
    x, _ = vr._param_rounding(pr, pr.g, False)
    law = B.window_pmf(10**6, two_r)
    grow, dropped = vr._rate_rounding(10**6, two_r, (x, x), law)
    assert x != Fraction(two_r) and 0 < grow < 1e-9 and law.dropped <= dropped < 2 * law.dropped + 1e-30


def test_threshold_error_bound_covers_the_40_digit_thresholds():
    """η_t of :func:`vr._ell_error` bounds |ℓ̃(t) − ℓ(t)|, ℓ(t) the exact threshold of the pair of the
    floats (p, β, q) at 40 digits, on every slice of each case's window and several ε; the floats
    are not exact everywhere (so η = 0 would fail)."""
    mpmath.mp.dps = 40
    inexact = 0
    for n, params, sep, eps in _points():
        pr = vr.VRParams(*params)
        co = vr._coefficients(eps, pr, sep)
        x, dg = vr._param_rounding(pr, co.g, sep)
        t = np.arange(1, n + 1, dtype=float)
        ell = vr._binomial_ell(t, n, co)
        eta = vr._ell_error(t, ell, n, co, (x, x), dg)
        b, ee = mpmath.mpf(pr.beta), mpmath.exp(mpmath.mpf(eps))
        if math.isinf(pr.p):
            num, g, r = ee * b, (0 if sep else 1 - b), b / mpmath.mpf(pr.q)
        else:
            al = b / (mpmath.mpf(pr.p) - 1)
            num, g, r = (ee * pr.p - 1) * al, (0 if sep else 1 - (pr.p + 1) * al), pr.p * al / mpmath.mpf(pr.q)
        if 2 * r >= 1:  # C = n − 1: only the slice t = n has clone terms, and (n − t) = 0 there
            t, ell, eta, g = t[-1:], ell[-1:], eta[-1:], 0
        for ti, li, ei in zip(t, ell, eta, strict=True):
            gterm = (ee - 1) * g * r / (1 - 2 * r) * (n - int(ti)) if g else 0
            exact = (num * int(ti) + gterm) / (b * (1 + ee))
            assert abs(li - exact) <= ei, (n, params, eps, ti)
            inexact += li != exact
    assert inexact > 0


def test_threshold_charge_covers_a_point_on_the_wrong_side_of_a_rounded_threshold():
    """A slice t whose computed threshold ℓ̃ = a − η/4 puts the point a in the set while the exact
    ℓ = a + η/2 leaves it out: the upper bound loses |(P − e^ε Q)(a, t − a)| = C(t, a)/2^t ·
    2P(C = t − 1)/t · den·|a − ℓ| (40 digits), which the charge covers; with η = 0 (no charge) it
    does not."""
    mpmath.mp.dps = 40
    t, a, pi_prev, den = 40.0, 21, 0.03, 0.7
    eta = 1e-12
    ell_exact = mpmath.mpf(a) + mpmath.mpf(eta) / 2
    lost = mpmath.binomial(40, a) / mpmath.mpf(2) ** 40 * 2 * mpmath.mpf(pi_prev) / 40 * den * (ell_exact - a)
    ell = np.array([a - eta / 4])
    charge = vr._threshold_charge(np.array([t]), ell, np.array([eta]), np.array([pi_prev]), den)
    assert math.ceil(ell[0]) == a < mpmath.ceil(ell_exact) and charge >= lost > 0
    assert vr._threshold_charge(np.array([t]), ell, np.array([0.0]), np.array([pi_prev]), den) < lost


def test_clone_probability_rounded_just_below_one_is_charged_not_refused():
    """ε0 = 1e-13: 2r = 2/(e^{ε0} + 1) rounds to 1 − 5e-14 with an error of ~1e-3 of 1 − 2r; the rate's
    rounding is measured exactly (rationals) and charged, so both bounds exist and bracket."""
    pr = vr.general_params(1e-13)
    assert 0.999 < 2 * pr.r < 1.0
    up, lo = vr.vr_delta(1e-14, 1000, pr), vr.vr_delta(1e-14, 1000, pr, kind="lower")
    assert 0.0 <= lo <= up <= 1e-15
