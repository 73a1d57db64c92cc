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

* *Binomial pmf on a window* [lo, hi]: :func:`darrm.numerics.binomial.pmf_on_window` (ratios
  from scipy's pmf at the anchor nearest the mode: relative RHO + 6(k+1)u for k steps from the
  anchor, and an absolute 1e-300 per entry for underflow).
* *Mass outside a window*: :func:`darrm.numerics.binomial.mass_above_bound` and
  :func:`~darrm.numerics.binomial.mass_below_bound` (geometric series by log-concavity).  These
  bound the dropped part of the sums over x (P(V ≥ ·) ≤ 1, P(V = ·) ≤ 1): T_X is added to the
  upper values.
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

from darrm.numerics import binomial as B

RHO = B.RHO
_U = float(np.finfo(float).eps) / 2
_TINY = B.TINY


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
        T_his = B.mass_above_bound(N1, q1, his)
        ok = (T_his <= tol / 2) | (his >= N1)
        i = int(np.argmax(ok))
        x_hi, T_hi = (int(his[i]), float(T_his[i])) if ok[i] else (N1, 0.0)
        los = np.maximum(0, np.minimum(x_hi, np.floor(mean - _K_BOTTOM * sd - _K_BOTTOM**2)))
        T_los, sf_edges = B.mass_below_bound(N1, q1, los), B.sf_bound(N2, q2, self.t_lo - los + 1)
        ok = (T_los * sf_edges <= tol / 2) | (los <= 0)
        i = int(np.argmax(ok))
        x_lo, T_lo, sf_edge = (int(los[i]), float(T_los[i]), float(sf_edges[i])) if ok[i] else (0, 0.0, 1.0)
        px, ex = B.pmf_on_window(N1, q1, x_lo, x_hi)
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
            vals, ev = B.pmf_on_window(N2, q2, a, b)
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
