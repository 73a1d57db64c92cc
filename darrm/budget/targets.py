"""Target privacy profiles for one query, and the grid rows that bound γ's profile by them.

Two shapes (the total-budget search of :mod:`darrm.budget.design` scales their parameter):

* **μ-GDP** (Dong, Roth & Su 2022, Corollary 2.13): δ_μ(ε′) = Φ(−ε′/μ + μ/2) − e^{ε′}Φ(−ε′/μ − μ/2);
  the Q-fold composition of μ-GDP mechanisms is √Q·μ-GDP (their Corollary 3.3), so
  :func:`gdp_mu_for_total` gives the per-query μ whose Q-fold meets (ε_tot, δ_tot).
* **the profile of a table** (γ_Sub at integer m): its exact profile, :mod:`darrm.privacy.profile`.

The (ε0, δ0)-shaped target (the randomised-response pair, whose profile is
δ0 + (1 − δ0)(e^{ε0} − e^{ε′})₊/(1 + e^{ε0})) needs no grid: a binary-output mechanism is
(ε0, δ0)-DP iff the RR pair dominates it (Kairouz, Oh & Viswanath 2017, Theorem 2.1), i.e. iff
its ONE row family at (ε0, δ0) holds; with δ0 = 1 − (1 − Δ)^{ε0/ε} that LP is γ_opt at the real
m = ε0/ε (Section 5), which :mod:`darrm.budget.design` searches directly.

**Grid rule (conservative).**  Every privacy profile is non-increasing in ε′.  Given a grid
ε′_0 < … < ε′_n and a non-increasing target T, the rows δ_γ(ε′_k) ≤ T(ε′_{k+1}) (k < n) give, for
every ε′ ∈ [ε′_k, ε′_{k+1}], δ_γ(ε′) ≤ δ_γ(ε′_k) ≤ T(ε′_{k+1}) ≤ T(ε′): the bound holds on the
whole interval [ε′_0, ε′_n], not only at grid points; the last point carries δ_γ(ε′_n) ≤ T(ε′_n).
Beyond ε′_n nothing is asserted by the rows — the table is then CERTIFIED by the exact
Q-fold composition of its own profile (:mod:`darrm.budget.compose`), which covers every ε′, so
the grid only shapes the LP and never carries the privacy claim.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..errors import ParameterError
from ..solver.multi_pair import ProfilePair
from ..validation import count, open_unit, positive


def gdp_delta(eps: float | np.ndarray, mu: float) -> np.ndarray:
    """δ_μ(ε′) of μ-GDP (Dong, Roth & Su, Corollary 2.13), in log space (the two terms cancel
    in the tail: each is formed as exp(log Φ), the difference clipped at 0)."""
    mu = positive("mu", mu)
    e = np.asarray(eps, dtype=np.float64)
    a = log_ndtr(-e / mu + mu / 2.0)
    b = e + log_ndtr(-e / mu - mu / 2.0)
    return np.maximum(np.exp(a) - np.exp(b), 0.0)


def gdp_mu_for_total(epsilon: float, delta: float, queries: int) -> float:
    """The per-query μ whose Q-fold composition (√Q·μ-GDP) has δ(ε_tot) = δ_tot.

    δ_μ(ε) increases in μ, so the root is found by bisection (relative precision 1e-12).

    Raises:
        ParameterError: a bad value."""
    epsilon = positive("epsilon", epsilon)
    delta = open_unit("delta", delta)
    queries = count("queries", queries)
    lo, hi = 1e-8, 1.0
    while float(gdp_delta(epsilon, hi)) < delta:
        hi *= 2.0
        if hi > 1e6:  # pragma: no cover - δ_μ(ε) → 1 as μ → ∞
            raise ParameterError("delta", f"no μ reaches δ = {delta!r} at ε = {epsilon!r}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if float(gdp_delta(epsilon, mid)) < delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo / math.sqrt(queries)


def default_grid(K: int, eps: float, points: int = 24) -> np.ndarray:
    """ε′ grid on [0, Kε] (beyond Kε the members' own composition bounds every post-processing,
    δ_γ(ε′) ≤ 1 − (1 − Δ)^K, and the certificate covers the tail)."""
    K = count("K", K)
    eps = positive("eps", eps)
    points = count("points", points, 2)
    return np.linspace(0.0, K * eps, points)


def conservative_pairs(grid: np.ndarray, target: np.ndarray) -> list[ProfilePair]:
    """Rows δ_γ(ε′_k) ≤ T(ε′_{k+1}) (k < n) and δ_γ(ε′_n) ≤ T(ε′_n) (module docstring).

    A point with ε′ = 0 and bound 0 is left out (its row would force γ ≡ 0; the composition
    certificate decides in any case).

    Raises:
        ParameterError: grid not increasing, or target not non-increasing / outside [0, 1]."""
    g = np.asarray(grid, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    if g.ndim != 1 or g.shape != t.shape or g.shape[0] < 2 or np.any(np.diff(g) <= 0) or g[0] < 0:
        raise ParameterError("grid", "must be an increasing 1-d array of ε′ ≥ 0, as long as the target")
    if np.any(np.diff(t) > 0) or np.any(t < 0) or np.any(t > 1):
        raise ParameterError("target", "must be a non-increasing profile with values in [0, 1]")
    bound = np.concatenate([t[1:], t[-1:]])
    out = []
    for e, d in zip(g, bound, strict=True):
        if e > 0 or d > 0:
            out.append(ProfilePair(float(e), float(d)))
    return out
