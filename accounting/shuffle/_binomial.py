"""Binomial helpers for the truncated sums used by the dominating-pair bounds.

Every truncated sum returns the probability mass it dropped so that the caller
can add (dropped mass) x (largest possible term) to δ — never drop it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

# Mass left outside the summation window on each side (before it is added back
# to δ as an error term).  1e-30 is far below any δ of practical interest.
TAIL = 1e-25


def window(n: int, prob: float, tail: float = TAIL) -> tuple[int, int, float]:
    """[lo, hi] covering all but ``dropped`` mass of Bin(n, prob), and that mass.

    Starts from mean +- K sd (+ K^2 on the upper side, a Bernstein-type margin for
    skewed binomials) and widens until the exactly computed dropped mass is
    <= ``tail``.  (scipy's ``binom.isf`` is unreliable at 1e-30 for n ~ 1e8.)
    """
    if n == 0 or prob <= 0.0:
        return 0, 0, 0.0
    if prob >= 1.0:
        return n, n, 0.0
    mu = n * prob
    sd = math.sqrt(n * prob * (1 - prob))
    k = 11.0
    while True:
        lo = max(0, int(math.floor(mu - k * sd - 1)))
        hi = min(n, int(math.ceil(mu + k * sd + k * k + 1)))
        dropped = 0.0
        if lo > 0:
            dropped += float(stats.binom.cdf(lo - 1, n, prob))
        if hi < n:
            dropped += float(stats.binom.sf(hi, n, prob))
        if dropped <= tail or (lo == 0 and hi == n):
            return lo, hi, dropped
        k *= 1.5


def upper_tail(k: np.ndarray, c: np.ndarray, prob: float = 0.5) -> np.ndarray:
    """Pr[Bin(c, prob) >= k] (1 for k <= 0, 0 for k > c), via the survival function."""
    return stats.binom.sf(k - 1, c, prob)


def pmf(k: np.ndarray, c: np.ndarray, prob: float = 0.5) -> np.ndarray:
    return stats.binom.pmf(k, c, prob)


_W_CACHE: dict[tuple[int, float], tuple[np.ndarray, np.ndarray, float]] = {}


def weights(n: int, prob: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(c window, Bin(n, prob) pmf on it, dropped mass), memoised (pure function)."""
    key = (n, prob)
    hit = _W_CACHE.get(key)
    if hit is None:
        lo, hi, dropped = window(n, prob)
        c = np.arange(lo, hi + 1, dtype=np.int64)
        w = pmf(c, n, prob) if n > 0 else np.ones(1)
        if len(_W_CACHE) > 64:
            _W_CACHE.clear()
        hit = _W_CACHE[key] = (c, w, dropped)
    return hit


def tail_along(k: np.ndarray, c: np.ndarray, pm_km1: np.ndarray | None = None, chunk: int = 512) -> np.ndarray:
    """T_c(k_c) = Pr[Bin(c, 1/2) >= k_c] along consecutive c with |k_{c+1} - k_c| <= 1.

    scipy's binomial survival function costs ~20 us per call for c ~ 1e8, so
    along a path of consecutive c we use the exact recurrence
    T_{c+1}(k) = T_c(k) + b_c(k-1)/2 plus one pmf for a unit change of k, and
    re-anchor with an exact ``sf`` every ``chunk`` steps (rounding error stays
    ~1e-16 x chunk in absolute value).  ``pm_km1`` may pass b_c(k_c - 1) if the
    caller already has it.  Falls back to ``sf`` everywhere when the path has
    larger jumps.
    """
    k = np.asarray(k, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if c.size <= 2 * chunk or np.any(np.diff(c) != 1) or np.any(np.abs(np.diff(k)) > 1):
        return upper_tail(k, c)
    if pm_km1 is None:
        pm_km1 = pmf(k - 1, c)
    dk = np.diff(k)
    inc = 0.5 * pm_km1[:-1]
    up = np.nonzero(dk == 1)[0]
    down = np.nonzero(dk == -1)[0]
    if up.size:
        inc[up] -= pmf(k[up], c[up + 1])
    if down.size:
        inc[down] += pmf(k[down] - 1, c[down + 1])
    out = np.empty(c.size)
    anchors = np.arange(0, c.size, chunk)
    anchor_vals = upper_tail(k[anchors], c[anchors])
    for a, v in zip(anchors, anchor_vals):
        b = min(a + chunk, c.size)
        out[a] = v
        np.cumsum(inc[a : b - 1], out=out[a + 1 : b])
        out[a + 1 : b] += v
    return np.clip(out, 0.0, 1.0)
