"""Expected error of DaRRM_γ under an "actual" distribution of the mechanisms' p_i.

Definition 2.4 gives the error for fixed p = (p_1..p_K):

    E(p) = |½ Σ_{l≥mid} (α_l(p) − α_{K−l}(p))·(1 − γ(l))|      (Eq. 186/196),

and the paper's error panels (Figs 2, 6–9) average it over a distribution of p.  Three
averages are computed here, two of them exactly:

* :func:`iid_uniform_error` — all p_i equal to one p ~ U[low, high] ("i.i.d. reading").
  On each side of ½ the sign of the bracket is constant (Bin(K,p)_l ≥ Bin(K,p)_{K−l} for
  l ≥ mid iff p ≥ ½), so E(p) is a polynomial of degree K there and Gauss–Legendre with
  K+1 nodes per side integrates it exactly (up to float64 rounding).
* :func:`product_uniform_error` — p_i i.i.d. U[low, high], **exact** when the interval
  lies on one side of ½ (e.g. the U[0, 0.1] panel of Fig. 9).  Proof: if every p_i ≤ ½,
  then α_l ≤ α_{K−l} for l ≥ mid (match each l-subset S with a (K−l)-subset T ⊂ S by a
  symmetric chain decomposition of the Boolean lattice; the term of S is the term of
  T times Π_{i∈S∖T} p_i/(1−p_i) ≤ 1).  So the bracket never changes sign, E(p) equals
  the signed (multilinear) expression, and its expectation under a product law is its
  value at the means: E = E(p_i ≡ (low+high)/2).  Symmetrically for p_i ≥ ½.
* :func:`product_uniform_error_mc` — p_i i.i.d. U[low, high] by seeded Monte Carlo
  with its standard error, for intervals that straddle ½ (the paper's U[0, 1] panels;
  the sign of the bracket then varies over the cube and no closed form is used).
"""

from __future__ import annotations

import math

import numpy as np

from darrm import ParameterError, error_curve
from darrm.gamma import validate_gamma
from darrm.utility import error
from darrm.validation import count, unit


def _interval(low: float, high: float) -> tuple[float, float]:
    lo, hi = unit("interval", low), unit("interval", high)
    if lo > hi:
        raise ParameterError("interval", f"need 0 <= low <= high <= 1, got [{low!r}, {high!r}]")
    return lo, hi


def iid_uniform_error(gamma: np.ndarray, low: float = 0.0, high: float = 1.0) -> float:
    """Exact E_{p~U[low,high]}[E(DaRRM_γ) at p_1 = … = p_K = p] (a point mass if low == high)."""
    g = validate_gamma(gamma)
    lo, hi = _interval(low, high)
    if lo == hi:
        return float(error_curve(g, np.array([lo]))[0])
    K = g.shape[0] - 1
    x, w = np.polynomial.legendre.leggauss(K + 1)
    total = 0.0
    for a, b in ((lo, min(hi, 0.5)), (max(lo, 0.5), hi)):
        if b > a:  # each piece is a polynomial of degree K: Gauss–Legendre is exact
            p = 0.5 * (b - a) * x + 0.5 * (a + b)
            total += 0.5 * (b - a) * float(w @ error_curve(g, p))
    return total / (hi - lo)


def is_one_sided(low: float, high: float) -> bool:
    """True when [low, high] lies within [0, ½] or within [½, 1]."""
    lo, hi = _interval(low, high)
    return hi <= 0.5 or lo >= 0.5


def product_uniform_error(gamma: np.ndarray, low: float, high: float) -> float:
    """Exact E_{p_i ~ U[low,high] i.i.d.}[E(DaRRM_γ)] for a one-sided interval (module doc)."""
    g = validate_gamma(gamma)
    lo, hi = _interval(low, high)
    if not is_one_sided(lo, hi):
        raise ParameterError("interval", f"[{lo}, {hi}] straddles 1/2: no exact form, use product_uniform_error_mc")
    return float(error_curve(g, np.array([0.5 * (lo + hi)]))[0])


def product_uniform_error_mc(
    gamma: np.ndarray, low: float = 0.0, high: float = 1.0, *, samples: int = 100_000, seed: int = 0,
    chunk: int = 20_000,
) -> tuple[float, float]:
    """Monte-Carlo (mean, standard error) of E_{p_i ~ U[low,high] i.i.d.}[E(DaRRM_γ)].

    K probabilities per draw (the reference code's K+1 is an off-by-one; Appendix D.1), drawn
    with ``numpy.random.default_rng(seed)`` in chunks, so the estimate depends only on
    (γ, low, high, samples, seed, chunk).
    """
    g = validate_gamma(gamma)
    lo, hi = _interval(low, high)
    count("samples", samples, minimum=2)
    K = g.shape[0] - 1
    rng = np.random.default_rng(seed)
    s1 = s2 = 0.0
    left = int(samples)
    while left:
        n = min(left, int(chunk))
        e = error(g, rng.uniform(lo, hi, size=(n, K)))
        s1 += float(e.sum())
        s2 += float((e * e).sum())
        left -= n
    N = int(samples)
    mean = s1 / N
    var = max(0.0, (s2 - N * mean * mean) / (N - 1))
    return mean, math.sqrt(var / N)
