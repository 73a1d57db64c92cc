"""The law of a sum of independent binomials, with rigorous error terms: the one home of this concept.

Y = Σ_i Bin(m_i, p_i) (independent).  Two evaluation modes, because their costs differ by orders
of magnitude at the sizes they serve:

* *the whole pmf on a window* — :func:`binomial_sum_law` (a :class:`~.binomial.CountLaw`): the
  parts' windowed pmfs convolved directly, Σ_i W_{<i}·W_i products (W_i ≈ 25·sd_i the parts'
  window widths, W_{<i} that of the sum of the parts before i).  For moderate n (the
  multi-message bounds' count laws, also fed to ``variation_ratio.vr_delta``; J ≤ 3 parts, n up
  to ~1e6), where every value of the law is used.
* *tails and pmf at a few points* — :class:`CountTails`: P(Y ≥ t) and P(Y = t) of two parts for t
  in a short range, a window of one part's pmf dotted with the other's tabulated pmf and survival,
  O(W_X·#t + W_V).  For n up to 1e8 (shuffled binary RR's splits), where the whole window is out
  of reach (two windows of ~1e5 points: 1e10 products for a direct convolution) and an FFT's
  absolute rounding (~1e-16 of the largest entry, Higham Thm. 24.2) swamps tails of size 1e-10.

Both are built from the same pieces of :mod:`.binomial` and account the same three errors:

* each part's pmf on a window with a relative error bound, :func:`~.binomial.pmf_on_window`
  (ratios from scipy's pmf at one anchor: RHO + 6(k+1)u for k steps; an absolute
  :data:`~.binomial.TINY` per entry for underflow), through :func:`~.binomial.window_pmf` (the
  window of :func:`~.binomial.tail_window`, all but 1e-25 of the mass) in the whole-window mode;
* the mass outside the windows, an upper bound added to upper values (``dropped``, ``T_sf``,
  ``T_pmf``): :func:`~.binomial.tail_window`'s cdf and survival function in the whole-window mode;
  :func:`~.binomial.mass_above_bound` / :func:`~.binomial.mass_below_bound` (geometric series by
  log-concavity) in the few-points mode, whose window of X is widened until the dropped part of
  the *tails at t ≥ t_lo* is ≤ ``tol`` (its bottom can sit much closer to the mean than a window
  that keeps all but ``tol`` of X's mass);
* the roundings of sums of non-negative terms, a relative (L + O(1))·u for L terms.

Few-points mode, numerics (the rigorous part).  Y = X + V with X ~ Bin(N1, q1) and V ~ Bin(N2, q2)
(in shuffled binary RR, the count of 1-reports of the others: Bin(j, p) + Bin(n-1-j, 1-p),
:mod:`darrm.accounting.shuffle.binary_rr_exact`).  On a range of t,

    P(Y ≥ t) = Σ_x P(X = x)·P(V ≥ t - x),     P(Y = t) = Σ_x P(X = x)·P(V = t - x),

summed over a window of x.  Every term is non-negative, so the computed values carry a
*relative* error (a few hundred thousand roundings at most: ~1e-11, plus the special-function
anchors' RHO).

* *Binomial pmf on a window* [lo, hi]: :func:`~.binomial.pmf_on_window` (above).
* *Mass outside X's window*: :func:`~.binomial.mass_above_bound` and
  :func:`~.binomial.mass_below_bound`.  These bound the dropped part of the sums over x
  (P(V ≥ ·) ≤ 1, P(V = ·) ≤ 1): T_X is added to the upper values.
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

import functools
import math

import numpy as np

from . import binomial as B
from .binomial import CountLaw

RHO = B.RHO
_U = float(np.finfo(float).eps) / 2
_TINY = B.TINY


# ----------------------------------------------------------------------------
# The whole pmf on a window

#: window values below this are moved to the dropped mass (:func:`binomial_sum_law`)
CONVOLVE_FLOOR = 1e-40


@functools.lru_cache(maxsize=32)
def binomial_sum_law(parts: tuple[tuple[int, float], ...]) -> CountLaw:
    """The law of C = Σ_i Bin(m_i, p_i) (independent) on a window, with rigorous error terms.

    Each part's pmf is taken on its window (:func:`darrm.numerics.binomial.window_pmf`, a
    :class:`~darrm.numerics.binomial.CountLaw`: dropped mass ≤ d_i, relative error ≤ rel_i) and the parts
    are convolved directly (np.convolve: every entry is a sum of non-negative products; window
    and partial values below 1e-40 are counted as dropped, with their error, and set to 0:
    measured, such values make np.convolve up to 100x slower).  Proof of the error terms:
    π_i = π_i|win + π_i|out, so the convolution of the parts is (*_i π_i|win) + a non-negative
    remainder of mass <= Σ_i d_i (each factor has mass <= 1): ``dropped`` = Σ d_i plus the
    values set to 0 (each ≤ its computed value × the relative bound so far).  The values kept
    are >= 1e-40 (no underflow): the
    window values carry a relative error <= rel_i each and a sum of L non-negative products a
    relative (L − 1)·u (u the unit roundoff) per convolution, so ``rel`` =
    Π_i (1 + rel_i)(1 + L u) − 1 over the J parts, rounded up.

    Args:
        parts: (m_i, p_i) pairs, m_i >= 0, p_i in [0, 1].

    Returns:
        The :class:`CountLaw`.
    """
    lo, w, dropped, rel = 0, np.ones(1), 0.0, 1.0
    u = float(np.finfo(float).eps)
    for m, prob in parts:
        part = B.window_pmf(int(m), float(prob))
        w_i, d_i, rel_i = np.array(part.w, dtype=float), part.dropped, part.rel
        tiny = w_i < CONVOLVE_FLOOR  # measured: tiny factors make np.convolve up to 100x slower
        d_i += float(w_i[tiny].sum()) * (1 + rel_i) * (1 + int(tiny.sum()) * u)
        w_i[tiny] = 0.0
        lo += int(part.c[0])
        length = len(w) + len(w_i)
        w = np.convolve(w, w_i)
        rel *= (1 + rel_i) * (1 + length * u)
        tiny = w < CONVOLVE_FLOOR
        d_i += float(w[tiny].sum()) * rel * (1 + 2 * length * u)
        w[tiny] = 0.0
        dropped += d_i
    return CountLaw(np.arange(lo, lo + len(w), dtype=np.int64), np.maximum(w, 0.0), dropped * (1 + 1e-12),
                    (rel - 1) * 1.01)


# ----------------------------------------------------------------------------
# Tails and pmf at a few points

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
        from scipy import stats  # scipy.stats costs ~0.3 s to import: only where it is used

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
