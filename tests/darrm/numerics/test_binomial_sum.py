"""The law of a sum of binomials (``darrm.numerics.binomial_sum``) against 40-digit convolutions."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from darrm.numerics import binomial_sum as ct


def _mp_binom(N: int, q: mpmath.mpf) -> list:
    """Bin(N, q)'s pmf in mpmath, by the ratio recurrence from P(0) = (1-q)^N (40 digits)."""
    out = [(1 - q) ** N]
    for a in range(N):
        out.append(out[-1] * (N - a) / (a + 1) * q / (1 - q))
    return out


def _mp_tails(N1: int, q1: float, N2: int, q2: float, ts) -> tuple[list, list]:
    """P(Y ≥ t) and P(Y = t) for Y = Bin(N1, q1) + Bin(N2, q2), every term summed, 40 digits."""
    mpmath.mp.dps = 40
    p1, p2 = _mp_binom(N1, mpmath.mpf(q1)), _mp_binom(N2, mpmath.mpf(q2))
    suffix = [mpmath.mpf(0)] * (N2 + 2)
    for i in range(N2, -1, -1):
        suffix[i] = suffix[i + 1] + p2[i]

    def sf2(v: int):
        return mpmath.mpf(1) if v <= 0 else (suffix[v] if v <= N2 else mpmath.mpf(0))

    def pm2(v: int):
        return p2[v] if 0 <= v <= N2 else mpmath.mpf(0)

    sf = [mpmath.fsum(p1[a] * sf2(t - a) for a in range(N1 + 1)) for t in ts]
    pm = [mpmath.fsum(p1[a] * pm2(t - a) for a in range(N1 + 1)) for t in ts]
    return sf, pm


CASES = [  # (N1, q1, N2, q2): splits of binary RR (j, p) + (n-1-j, 1-p) at n = 2000 and 20000
    (0, 0.7310585786300049, 1999, 0.2689414213699951),
    (666, 0.7310585786300049, 1333, 0.2689414213699951),
    (1, 0.5621765008857981, 1998, 0.4378234991142019),
    (3000, 0.9820137900379085, 16999, 0.017986209962091496),
    (9999, 0.5621765008857981, 9999, 0.4378234991142019),
]


@pytest.mark.parametrize("N1,q1,N2,q2", CASES)
def test_tails_and_pmf_bracket_the_40_digit_convolution(N1, q1, N2, q2):
    mean = N1 * q1 + N2 * q2
    sd = math.sqrt(N1 * q1 * (1 - q1) + N2 * q2 * (1 - q2))
    ts = [round(mean + k * sd) for k in (0.0, 2.0, 4.0, 6.0)]
    tab = ct.CountTails(N1, q1, N2, q2, min(ts), max(ts), 1e-30)
    s_lo, s_hi = tab.survival(np.array(ts))
    p_lo, p_hi = tab.pmf(np.array(ts))
    sf, pm = _mp_tails(N1, q1, N2, q2, ts)
    for i in range(len(ts)):
        assert s_lo[i] <= sf[i] <= s_hi[i]
        assert p_lo[i] <= pm[i] <= p_hi[i]
        # relative width: the special-function anchors (2·RHO) and a few hundred thousand roundings
        assert s_hi[i] - s_lo[i] <= 1e-8 * float(sf[i])
        assert p_hi[i] - p_lo[i] <= 1e-8 * float(pm[i])


def test_outside_the_support_the_values_are_exact():
    tab = ct.CountTails(3, 0.6, 4, 0.4, -2, 9, 1e-30)
    lo, hi = tab.survival(np.array([-2, 0, 8, 9]))
    assert list(lo) == list(hi) == [1.0, 1.0, 0.0, 0.0]
    lo, hi = tab.pmf(np.array([-1, 8]))
    assert list(lo) == list(hi) == [0.0, 0.0]
    with pytest.raises(ValueError, match="outside the tabulated range"):
        tab.survival(np.array([10]))


def test_a_short_window_needs_its_truncation_term():
    # a window cut short (tol = 1e-3): the upper ends stay above the truth only through the
    # outside-mass terms; without them (the broken variant) the upper survival is below it
    N1, q1, N2, q2 = 600, 0.5621765008857981, 1399, 0.4378234991142019
    mean = N1 * q1 + N2 * q2
    ts = [round(mean + 2 * math.sqrt(2000 * 0.25))]
    tab = ct.CountTails(N1, q1, N2, q2, ts[0], ts[0], 1e-3)
    assert tab.x_lo > 0  # the window's bottom is well inside the support
    sf, _ = _mp_tails(N1, q1, N2, q2, ts)
    lo, hi = tab.survival(np.array(ts))
    assert lo[0] <= sf[0] <= hi[0]
    assert hi[0] - tab.T_sf < sf[0]  # broken: the dropped mass not added


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="N1, N2"):
        ct.CountTails(-1, 0.5, 3, 0.5, 0, 1, 1e-9)
    with pytest.raises(ValueError, match="t_lo <= t_hi"):
        ct.CountTails(1, 0.5, 3, 0.5, 2, 1, 1e-9)


def _mp_sum_law(parts) -> dict[int, mpmath.mpf]:
    """Σ_i Bin(m_i, p_i)'s pmf by exact convolution of the parts, 40 digits."""
    mpmath.mp.dps = 40
    law = [mpmath.mpf(1)]
    for m, p in parts:
        part = _mp_binom(m, mpmath.mpf(p)) if 0.0 < p < 1.0 else [mpmath.mpf(1) if a == (m if p >= 1 else 0)
                                                                  else mpmath.mpf(0) for a in range(m + 1)]
        out = [mpmath.mpf(0)] * (len(law) + len(part) - 1)
        for i, x in enumerate(law):
            for j, y in enumerate(part):
                out[i + j] += x * y
        law = out
    return dict(enumerate(law))


def test_sum_law_brackets_the_40_digit_convolution_and_needs_its_dropped_mass():
    # CountLaw's claim: π = π_w + π_out, |w − π_w| <= rel·w on the window, π_out >= 0 of mass <= dropped.
    # Checked: π(c) >= w(1 − rel) on the window, and the mass that w(1 + rel) does not cover (outside
    # the window and above it inside) is <= dropped.  The parts have a point mass (m = 0) and far
    # tails below 1e-40 (moved to ``dropped``): without them (the broken variant, dropped = 0) the
    # uncovered mass is positive.
    parts = ((40, 0.3), (0, 0.5), (25, 0.8), (300, 0.05))
    law = ct.binomial_sum_law.__wrapped__(parts)
    exact = _mp_sum_law(parts)
    assert law.rel < 1e-8 and np.all(np.diff(law.c) == 1)
    w = dict(zip(law.c.tolist(), law.w.tolist(), strict=True))
    uncovered = mpmath.mpf(0)
    for c, pi in exact.items():
        wc = w.get(c, 0.0)
        assert pi >= wc * (1 - law.rel)
        uncovered += max(mpmath.mpf(0), pi - wc * (1 + law.rel))
    assert 0 < uncovered <= law.dropped


def test_window_pmf_is_within_its_relative_bound_of_40_digit_values():
    # pmf_on_window's claim (relative rel, ratios from one scipy anchor) at the window of window_pmf,
    # n up to 1e6, against the 40-digit ratio recurrence anchored at an mpmath value
    from darrm.numerics import binomial as B

    mpmath.mp.dps = 40
    for n, q in ((2000, 0.2689414213699951), (10**6, 0.7310585786300049), (300, 0.05)):
        law = B.window_pmf(n, q)
        c, w, dropped, rel = law.c, law.w, law.dropped, law.rel
        Q = mpmath.mpf(q)
        a0 = int(c[0])
        ref = [mpmath.binomial(n, a0) * Q**a0 * (1 - Q) ** (n - a0)]
        for a in range(a0, int(c[-1])):
            ref.append(ref[-1] * (n - a) / (a + 1) * Q / (1 - Q))
        err = max(abs(x - r) / r for x, r in zip(w.tolist(), ref, strict=True) if r > 1e-290)
        assert err <= rel < 1.1e-9
        assert all(x == 0.0 for x, r in zip(w.tolist(), ref, strict=True) if r <= 1e-301)  # in dropped
        tails, x, a = mpmath.mpf(0), ref[0], a0  # P(X < a0) and P(X > hi) by the recurrence outwards
        while a > 0 and x > mpmath.mpf(10) ** -60:
            x, a = x * a / (n - a + 1) * (1 - Q) / Q, a - 1
            tails += x
        x, a = ref[-1], int(c[-1])
        while a < n and x > mpmath.mpf(10) ** -60:
            x, a = x * (n - a) / (a + 1) * Q / (1 - Q), a + 1
            tails += x
        assert tails <= dropped
