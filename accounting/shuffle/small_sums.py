"""E[(G_1 + ... + G_n)_+] for few summands, by enumerating the multinomial counts.

Claim: for i.i.d. G with atoms v_1..v_a (probabilities w_1..w_a), ΣG = Σ_j c_j v_j where the counts
c ~ Mult(n; w), so E[(ΣG)_+] = Σ_c Mult(c; n, w)·(c·v)_+ over the C(n + a − 1, a − 1) count
vectors — exact, no grid.  It is used where that number is small (small n, few atoms), where the
grids of :mod:`.decomposition` are needlessly fine.

Rigour: the multinomial probabilities are exp(lgamma(n+1) − Σ lgamma(c_j+1) + Σ c_j ln w_j); the
absolute error of each log is below 64·ulp·Λ with Λ = lgamma(n+1) + n·max_j |ln w_j| + a (lgamma
accurate to a few ulp of its value, each product and sum to one ulp of the running magnitude), so
each probability is within a relative 128·ulp·Λ; the values c·v and the final sum of M terms add a
relative 64·ulp·(a + M).  ρ = RHO_ENUM + 256·ulp·(Λ + M) (RHO_ENUM = 1e-10 covers scipy's gammaln
being a few ulp off) times Σ_c Mult(c)·|c·v| is added for an upper bound and subtracted for a lower
bound.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln

#: at most this many count vectors are enumerated (else None: use the grids)
MAX_COUNT_VECTORS = 60_000
#: relative error allowance of the enumerated sum (module docstring)
RHO_ENUM = 1e-10


@functools.lru_cache(maxsize=64)
def _compositions(n: int, a: int) -> np.ndarray:
    """Every vector of a non-negative integers summing to n, one per row."""
    if a == 1:
        return np.array([[n]], dtype=np.int64)
    parts = []
    for c in range(n + 1):
        sub = _compositions(n - c, a - 1)
        parts.append(np.hstack([np.full((len(sub), 1), c, dtype=np.int64), sub]))
    return np.vstack(parts)


def positive_part_by_counts(vals: np.ndarray, w: np.ndarray, n: int, kind: str) -> float | None:
    """A bound on E[(Σ_{i<=n} G_i)_+] by enumeration (module docstring), or None when there are more
    than :data:`MAX_COUNT_VECTORS` count vectors.

    Args:
        vals: the atoms' values.
        w: their probabilities (zero-probability atoms are dropped).
        n: the number of summands.
        kind: ``"upper"`` (the allowance added) or ``"lower"`` (subtracted, floored at 0).

    Returns:
        The bound, or None when the enumeration is too large.
    """
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float)
    keep = w > 0
    vals, w = vals[keep], w[keep] / w[keep].sum()
    a = len(vals)
    if math.comb(n + a - 1, a - 1) > MAX_COUNT_VECTORS:
        return None
    c = _compositions(n, a)
    logp = gammaln(n + 1) - gammaln(c + 1).sum(axis=1) + c @ np.log(w)
    p = np.exp(logp)
    s = c @ vals
    core = float(np.dot(p, np.maximum(s, 0.0)))
    lam = float(gammaln(n + 1)) + n * float(np.max(np.abs(np.log(w)))) + a
    rho = RHO_ENUM + 256 * np.finfo(float).eps * (lam + len(c))
    slack = rho * float(np.dot(p, np.abs(s)))
    return core + slack if kind == "upper" else max(0.0, core - slack)
