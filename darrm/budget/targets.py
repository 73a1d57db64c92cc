"""Target privacy profiles for one query, and the grid rows that bound γ's profile by them.

Two shapes (the total-budget search of :mod:`darrm.accounting.budget.shared` scales their parameter):

* **μ-GDP** (Dong, Roth & Su 2022, Corollary 2.13): δ_μ(ε′) = Φ(−ε′/μ + μ/2) − e^{ε′}Φ(−ε′/μ − μ/2);
  the Q-fold composition of μ-GDP mechanisms is √Q·μ-GDP (their Corollary 3.3), so
  :func:`gdp_mu_for_total` gives the per-query μ whose Q-fold meets (ε_tot, δ_tot).
* **the profile of a table** (γ_Sub at integer m): its exact profile, :mod:`darrm.privacy.profile`.

The (ε0, δ0)-shaped target (the randomised-response pair, whose profile is
δ0 + (1 − δ0)(e^{ε0} − e^{ε′})₊/(1 + e^{ε0})) needs no grid: a binary-output mechanism is
(ε0, δ0)-DP iff the RR pair dominates it (Kairouz, Oh & Viswanath 2017, Theorem 2.1), i.e. iff
its ONE row family at (ε0, δ0) holds; with δ0 = 1 − (1 − Δ)^{ε0/ε} that LP is γ_opt at the real
m = ε0/ε (Section 5), which :mod:`darrm.accounting.budget.shared` searches directly.

**Grid rule (conservative).**  Every privacy profile is non-increasing in ε′.  Given a grid
ε′_0 < … < ε′_n and a non-increasing target T, the rows δ_γ(ε′_k) ≤ T(ε′_{k+1}) (k < n) give, for
every ε′ ∈ [ε′_k, ε′_{k+1}], δ_γ(ε′) ≤ δ_γ(ε′_k) ≤ T(ε′_{k+1}) ≤ T(ε′): the bound holds on the
whole interval [ε′_0, ε′_n], not only at grid points; the last point carries δ_γ(ε′_n) ≤ T(ε′_n).
Beyond ε′_n nothing is asserted by the rows — the table is then CERTIFIED by the exact
Q-fold composition of its own profile (the accountant, :mod:`darrm.accounting.budget`), which covers every ε′, so
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


# ----------------------------------------------------------------------------- the exact target check
#: mpmath precision (decimal digits) of the rigorous target checks
CHECK_DIGITS = 40


def gdp_delta_exact(mu: float, eps: float):
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) of a μ-GDP mechanism (Dong, Roth & Su, Corollary 2.13),
    as an mpmath number at :data:`CHECK_DIGITS` digits (finite μ > 0)."""
    import mpmath

    with mpmath.workdps(CHECK_DIGITS):
        m, x = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε (to ~1e-12, rounded up) with δ_μ(ε) ≤ ``delta``: the ε of a μ-GDP mechanism at
    δ, checked in mpmath at :data:`CHECK_DIGITS` digits (so the float64 evaluation of
    :func:`gdp_delta` never decides); inf for μ = inf.

    Raises:
        ParameterError: a bad value."""
    delta = open_unit("delta", delta)
    if mu == math.inf:
        return math.inf
    mu = positive("mu", mu)

    def exact(e: float):
        return gdp_delta_exact(mu, e)

    lo, hi = 0.0, max(1.0, mu * mu)
    while exact(hi) > delta:
        hi *= 2.0
    for _ in range(200):
        if hi - lo <= 1e-12 * max(hi, 1e-12):
            break
        mid = 0.5 * (lo + hi)
        if exact(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def certified_gdp_mu(x: np.ndarray, y: np.ndarray) -> float:
    """The smallest μ (rounded up) such that every point (x_j, y_j) satisfies y_j ≤ Φ(Φ⁻¹(x_j) + μ).

    The caller passes a query's cloud of points (x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) over the worst
    configurations, both outputs and both directions, rounded outward (x down, y up), keeping the
    points with x + y ≤ 1 (+ a selection margin); then the query is μ-GDP.

    **Claim.**  If every true cloud point with x + y ≤ 1 satisfies y ≤ U_μ(x) := Φ(Φ⁻¹(x) + μ), the
    query's pair is dominated by (N(μ, 1), N(0, 1)), and Q such queries answered with fresh member
    randomness are √Q·μ-GDP.  *Proof.*  The cloud is closed under the mirror (x, y) ↦ (1 − y, 1 − x)
    (output 1 in one direction ↔ output 0 in the other), and U_μ has the same symmetry
    (1 − U_μ(1 − y) = Φ(Φ⁻¹(y) − μ), so y ≤ U_μ(x) ⟺ 1 − x ≤ U_μ(1 − y)); a mirror pair has sums s and
    2 − s, so one of them is checked.  Hence every cloud point is below U_μ.  The privacy profile is
    δ(s) = max over the cloud of (y − s·x)⁺ (:mod:`darrm.privacy.profile`, Claim 1): one line per
    point, piecewise linear in s = e^{ε′} with its kinks at the likelihood ratios.  A line y − s·x is
    below δ_μ(s) for all s ≥ 0 iff y ≤ inf_s (δ_μ(s) + s·x) = U_μ(x) (U_μ is the most powerful
    level-x test's power: Dong, Roth & Su 2022, Eq. 2.3).  Checking the curve only at its kinks
    would not do (δ_μ is convex in s and may dip below a chord between kinks); the per-line test is
    exact.  So δ ≤ δ_μ, also for s < 1 by the symmetry, the pair is dominated by the Gaussian pair
    (Zhu, Dong & Wang 2022, Definition 7), and the Q-fold composition is the Gaussian pair at √Q·μ
    (their Theorem 10; Dong, Roth & Su, Corollary 3.3).  Only the upper concave envelope's
    vertices need checking: U_μ is concave, so it lies above every chord between checked vertices.  ∎

    *Rigour.*  μ̂ is found in float64 and padded, then every vertex is checked in mpmath: a float
    q_j with Φ(q_j) ≤ x_j and Φ(q_j + μ̂) ≥ y_j (both checked at :data:`CHECK_DIGITS` digits) prove
    y_j ≤ U_μ̂(x_j) since U is increasing; a failed check pads more.  A point at x = 0 with y > 0
    (infinite loss) gives inf.

    Returns:
        The certified μ (≥ 0), or inf."""
    import mpmath
    from scipy.special import ndtri

    from ..privacy.profile import upper_hull

    hx, hy = upper_hull(np.concatenate([np.asarray(x, dtype=np.float64).ravel(), [0.0]]),
                        np.concatenate([np.asarray(y, dtype=np.float64).ravel(), [0.0]]))
    if hy[0] > 0.0:
        return math.inf
    inner = (hx > 0.0) & (hy > hx)
    if not inner.any():
        return 0.0
    xi, yi = hx[inner], hy[inner]
    if np.any(yi >= 1.0) and np.any(xi[yi >= 1.0] < 1.0):
        return math.inf
    z = ndtri(xi)
    mu = max(0.0, float(np.max(ndtri(yi) - z)))
    q = z - 1e-12 * (1.0 + np.abs(z))
    pad = 1e-10 * max(1.0, mu)
    with mpmath.workdps(CHECK_DIGITS):
        lows = []
        for qj, xj in zip(q.tolist(), xi.tolist(), strict=True):
            while mpmath.ncdf(qj) > xj:
                qj -= 1e-9 * (1.0 + abs(qj))
            lows.append(qj)
        for _ in range(60):
            m = mu + pad
            if all(mpmath.ncdf(mpmath.mpf(qj) + mpmath.mpf(m)) >= yj for qj, yj in zip(lows, yi.tolist(), strict=True)):
                return m
            pad *= 10.0
    return math.inf  # pragma: no cover - a pad of 1e50 always passes
