"""Tails and pmf of a sum of two binomials, without an FFT, with rigorous relative error bounds.

Y = X + V with X ~ Bin(N1, q1) and V ~ Bin(N2, q2) independent (in shuffled binary RR, the
count of 1-reports of the others: Bin(j, p) + Bin(n-1-j, 1-p), :mod:`.binary_rr_exact`).  On a
range of t,

    P(Y ≥ t) = Σ_x P(X = x)·P(V ≥ t - x),     P(Y = t) = Σ_x P(X = x)·P(V = t - x),

summed over a window of x.  Every term is non-negative, so the computed values carry a
*relative* error (a few hundred thousand roundings at most: ~1e-11, plus the special-function
anchors' RHO), unlike the inverse FFT whose rounding is absolute (~1e-16 of the largest entry,
Higham Thm. 24.2) and swamps tails of size δ = 1e-10 at n = 1e8.

Numerics (the rigorous part).

* *Binomial pmf on a window* [lo, hi]: anchored at the window point nearest the mode, where
  scipy's ``stats.binom.pmf`` (Boost's ``ibeta_derivative``) gives c = P(· = anchor) to a relative
  RHO (as in :mod:`.count_sums`); the other entries by the exact ratios
  P(a+1)/P(a) = (N-a)/(a+1)·q/(1-q) going up and P(a-1)/P(a) = a/(N-a+1)·(1-q)/q going down.
  (N-a) and (a+1) are exact in float64 (N < 2^53), q/(1-q) is within 2u, each ratio within
  4u, each running product adds one rounding: an entry k steps from the anchor is within a
  relative (1+5u)^k - 1 ≤ 6ku of the true value times c.  Entries decrease away from the
  anchor (a binomial pmf is unimodal), so an entry that underflows stays below 1e-300: an
  absolute 1e-300 per entry covers it.
* *Mass outside a window*: a binomial pmf is log-concave, so its ratios P(a+1)/P(a) are
  non-increasing and beyond hi, where the ratio r = (N-hi)/(hi+1)·q/(1-q) < 1,
  Σ_{a > hi} P(a) ≤ P(hi)·r/(1-r) (a geometric series); likewise below lo.  These bound the
  dropped part of the sums over x (P(V ≥ ·) ≤ 1, P(V = ·) ≤ 1): T_X is added to the upper values.
* *Survival of V*: P(V ≥ v) = Σ_{i=v}^{top} P(V = i) + P(V > top), the last from scipy's
  ``stats.binom.sf`` (relative RHO), the sum a reverse cumulative sum of non-negative terms
  (each partial sum rounded once: ≤ L·u relative for L terms).
* *The sums over x*: dot products of non-negative terms, ≤ (W + 2)·u relative for W terms.

So every value returned lies in [v·(1 - e) - a, v·(1 + e) + a + T] with e the sum of the
relative bounds above (``rel``), a the absolute underflow/anchor terms and T the outside mass
(lower values have T = 0); :meth:`CountTails.survival` and :meth:`CountTails.pmf` return the
two ends.  The window of X is widened until T_X ≤ ``tol``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

#: relative accuracy assumed of scipy's binomial pmf and survival function (as :mod:`.count_sums`)
RHO = 1e-9
_U = float(np.finfo(float).eps) / 2
#: an entry below this may be subnormal: it is covered by an absolute term of this size
_TINY = 1e-300


def _window_pmf(N: int, q: float, lo: int, hi: int) -> tuple[np.ndarray, float]:
    """(P(Bin(N, q) = a) for a = lo..hi, relative error bound) by ratios from the anchor
    nearest the mode (module docstring); 0 ≤ lo ≤ hi ≤ N."""
    if q <= 0.0 or q >= 1.0 or N == 0:
        atom = 0 if (q <= 0.0 or N == 0) else N
        return np.where(np.arange(lo, hi + 1) == atom, 1.0, 0.0), 0.0
    mode = min(N, max(0, math.floor((N + 1) * q)))
    anchor = min(hi, max(lo, mode))
    c = float(stats.binom.pmf(anchor, N, q))
    cq = q / (1.0 - q)
    out = np.empty(hi - lo + 1)
    out[anchor - lo] = c
    if hi > anchor:  # out[a+1] = out[a]·(N-a)/(a+1)·cq, in place (the same roundings)
        a = np.arange(anchor, hi, dtype=float)
        r = np.subtract(N, a)
        a += 1.0
        r /= a
        r *= cq
        np.cumprod(r, out=r)
        r *= c
        out[anchor - lo + 1:] = r
    if lo < anchor:  # out[a-1] = out[a]·a/(N-a+1)/cq
        a = np.arange(anchor, lo, -1, dtype=float)
        r = np.subtract(N + 1.0, a)
        np.divide(a, r, out=r)
        r /= cq
        np.cumprod(r, out=r)
        r *= c
        out[:anchor - lo][::-1] = r
    k = max(hi - anchor, anchor - lo)
    return out, RHO + 6.0 * (k + 1) * _U


def _above(N: int, q: float, hi: np.ndarray) -> np.ndarray:
    """Bounds on P(Bin(N, q) > hi), elementwise over the integers ``hi``, by log-concavity from
    scipy's pmf at hi (module docstring); 1.0 where hi is not past the mode."""
    hi = np.asarray(hi, dtype=float)
    if q <= 0.0 or N == 0:
        return np.zeros(hi.shape)
    if q >= 1.0:
        return np.where(hi >= N, 0.0, 1.0)
    h = np.minimum(hi, N)
    r = (N - h) / (h + 1.0) * (q / (1.0 - q)) * (1 + 8 * _U)
    pm = stats.binom.pmf(h, N, q) * (1 + RHO) + _TINY
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(r < 1.0, pm * r / (1.0 - r) * (1 + 8 * _U), 1.0)
    return np.where(hi >= N, 0.0, out)


def _below(N: int, q: float, lo: np.ndarray) -> np.ndarray:
    """Bounds on P(Bin(N, q) < lo), as :func:`_above` (by symmetry)."""
    lo = np.asarray(lo, dtype=float)
    if 0.0 < q < 1.0:
        return _above(N, 1.0 - q, N - lo)
    return np.where((q >= 1.0) & (lo > 0) & (lo <= N), 1.0, 0.0)


def _sf_upper(N: int, q: float, v: np.ndarray) -> np.ndarray:
    """Upper bounds on P(Bin(N, q) ≥ v) (scipy's survival function, relative RHO), elementwise."""
    v = np.asarray(v, dtype=float)
    sf = np.minimum(1.0, stats.binom.sf(v - 1, N, q) * (1 + RHO) + _TINY)
    return np.where(v <= 0, 1.0, np.where(v > N, 0.0, sf))


#: the window's half-widths tried, k·sd + k² for k in these (top, then bottom; see CountTails)
_K_TOP = 9.0 * 1.1 ** np.arange(30)
_K_BOTTOM = 2.0 * 1.1 ** np.arange(46)


class CountTails:
    """P(Y ≥ t) and P(Y = t), Y = Bin(N1, q1) + Bin(N2, q2), for t in [t_lo, t_hi], each as a
    certified interval (module docstring).

    Args:
        N1, q1: the binomial summed over (its window is the cost: choose the smaller variance).
        N2, q2: the binomial whose survival function is tabulated.
        t_lo, t_hi: the range of t asked for later.
        tol: the largest mass of Bin(N1, q1) left outside its window.
    """

    def __init__(self, N1: int, q1: float, N2: int, q2: float, t_lo: int, t_hi: int, tol: float) -> None:
        if not (N1 >= 0 and N2 >= 0 and 0.0 <= q1 <= 1.0 and 0.0 <= q2 <= 1.0 and t_lo <= t_hi):
            raise ValueError("CountTails: need N1, N2 >= 0, q1, q2 in [0, 1], t_lo <= t_hi")
        self.t_lo, self.t_hi = int(t_lo), int(t_hi)
        self.top = N1 + N2  # Y's support is [0, N1 + N2]: outside it the values are exact
        mean, sd = N1 * q1, math.sqrt(N1 * q1 * (1 - q1))
        # the window of X: its top widened until P(X > x_hi) ≤ tol/2; its bottom until
        # P(X < x_lo)·P(V ≥ t_lo - x_lo + 1) ≤ tol/2 (for x < x_lo, P(V ≥ t - x) is at most that;
        # t is far in the upper tail, so the bottom can be much closer to the mean)
        his = np.minimum(N1, np.ceil(mean + _K_TOP * sd + _K_TOP**2))
        T_his = _above(N1, q1, his)
        ok = (T_his <= tol / 2) | (his >= N1)
        i = int(np.argmax(ok))
        x_hi, T_hi = (int(his[i]), float(T_his[i])) if ok[i] else (N1, 0.0)
        los = np.maximum(0, np.minimum(x_hi, np.floor(mean - _K_BOTTOM * sd - _K_BOTTOM**2)))
        T_los, sf_edges = _below(N1, q1, los), _sf_upper(N2, q2, self.t_lo - los + 1)
        ok = (T_los * sf_edges <= tol / 2) | (los <= 0)
        i = int(np.argmax(ok))
        x_lo, T_lo, sf_edge = (int(los[i]), float(T_los[i]), float(sf_edges[i])) if ok[i] else (0, 0.0, 1.0)
        px, ex = _window_pmf(N1, q1, x_lo, x_hi)
        # dropped mass: P(Y ≥ t) loses ≤ T_hi + T_lo·sf_edge; P(Y = t) ≤ T_hi + T_lo·P(V = v_e) with
        # v_e = t_lo - x_lo + 1 when v_e is past V's mode (P(V = v) decreases beyond it), else T_lo
        v_e = self.t_lo - x_lo + 1
        mode_v = math.floor((N2 + 1) * q2)
        pv_edge = (min(1.0, float(stats.binom.pmf(v_e, N2, q2)) * (1 + RHO) + _TINY)
                   if (v_e > mode_v and 0.0 < q2 < 1.0) else 1.0)
        self.T_sf = (T_hi + T_lo * sf_edge) * (1 + 4 * _U)
        self.T_pmf = (T_hi + T_lo * pv_edge) * (1 + 4 * _U)
        self.x_lo, self.x_hi, self.px = x_lo, x_hi, px
        # V on [v_lo, v_hi] = [t_lo - x_hi, t_hi - x_lo]: pmf and survival, 1 below 0, 0 above N2
        v_lo, v_hi = self.t_lo - x_hi, self.t_hi - x_lo
        self.v_lo = v_lo
        L = v_hi - v_lo + 1
        pv = np.zeros(L)
        sv = np.zeros(L)
        sv[: max(0, min(L, -v_lo + 1))] = 1.0  # v <= 0
        a, b = max(0, v_lo), min(N2, v_hi)
        ev, av = 0.0, 0.0
        if a <= b:
            vals, ev = _window_pmf(N2, q2, a, b)
            top_sf = float(stats.binom.sf(b, N2, q2)) if b < N2 else 0.0
            pv[a - v_lo: b - v_lo + 1] = vals
            sv[a - v_lo: b - v_lo + 1] = np.cumsum(vals[::-1])[::-1] + top_sf
            if a == 0:
                sv[: a - v_lo + 1] = 1.0  # P(V ≥ 0) = 1 exactly
            ev = ev + (b - a + 4) * _U
            av = RHO * top_sf + _TINY * (b - a + 1)
        self.pv, self.sv = pv, sv
        # relative error of one dot product (module docstring): X entries, V entries, the sum
        self.rel = 1.01 * (ex + ev + (len(px) + 2) * _U)
        self.abs_sf = av * (1 + ex) * 1.01 + _TINY * (len(px) + L)  # the sf anchor's, underflow
        self.abs_pmf = _TINY * (len(px) + L)

    def _dot(self, table: np.ndarray, t: np.ndarray) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=np.int64))
        if t.size and (t.min() < self.t_lo or t.max() > self.t_hi):
            raise ValueError(f"t outside the tabulated range [{self.t_lo}, {self.t_hi}]")
        pxr = self.px[::-1]
        W = len(pxr)
        start = t - self.x_hi - self.v_lo  # v = t - x for x = x_hi .. x_lo
        return np.array([float(np.dot(table[s: s + W], pxr)) for s in start])

    def pmf_point(self, t) -> np.ndarray:
        """The computed sums for P(Y = t) without error terms (a search value, not a bound)."""
        t = np.atleast_1d(np.asarray(t, dtype=np.int64))
        return np.where((t < 0) | (t > self.top), 0.0, self._dot(self.pv, t))

    def survival(self, t) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds on P(Y ≥ t), elementwise over the integers ``t``."""
        t = np.atleast_1d(np.asarray(t, dtype=np.int64))
        d = self._dot(self.sv, t)
        lo = np.maximum(d * (1 - self.rel) - self.abs_sf, 0.0)
        hi = np.minimum(d * (1 + self.rel) + self.abs_sf + self.T_sf, 1.0)
        exact = np.where(t <= 0, 1.0, 0.0)
        out = (t <= 0) | (t > self.top)
        return np.where(out, exact, lo), np.where(out, exact, hi)

    def pmf(self, t) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds on P(Y = t), elementwise over the integers ``t``."""
        t = np.atleast_1d(np.asarray(t, dtype=np.int64))
        d = self._dot(self.pv, t)
        lo = np.maximum(d * (1 - self.rel) - self.abs_pmf, 0.0)
        hi = np.minimum(d * (1 + self.rel) + self.abs_pmf + self.T_pmf, 1.0)
        out = (t < 0) | (t > self.top)
        return np.where(out, 0.0, lo), np.where(out, 0.0, hi)
