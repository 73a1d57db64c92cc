"""Poisson-binomial distributions, many at once.

L = Σ_i S_i with independent S_i ~ Bernoulli(p_i) has α_l = Pr[L = l].  We compute
α by the direct dynamic-programming convolution α ← α·(1−p_i) + shift(α)·p_i.
Every step is a convex combination of non-negative numbers, so the result is
never negative and has no FFT ringing: relative accuracy is at the level of float64
rounding for every entry that does not underflow (tails may underflow to 0).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError


def _as_probs(ps: np.ndarray, name: str = "ps") -> np.ndarray:
    a = np.asarray(ps, dtype=np.float64)
    if a.ndim == 0:
        raise ParameterError(name, "must have at least one dimension (the K probabilities)")
    if a.shape[-1] == 0:
        raise ParameterError(name, "needs at least one probability")
    if not np.all(np.isfinite(a)):
        raise ParameterError(name, "contains NaN or infinite values")
    if np.any(a < 0.0) or np.any(a > 1.0):
        raise ParameterError(name, "probabilities must lie in [0, 1]")
    return a


def pmf(ps: np.ndarray, qs: np.ndarray | None = None) -> np.ndarray:
    """Poisson-binomial pmf of each row of ``ps``.

    Args:
        ps: array of shape (..., K) of success probabilities in [0, 1].
        qs: their complements 1 − p (same shape) when known more accurately than
            ``1.0 - ps`` (a p close to 1 loses its complement's relative accuracy).

    Returns:
        array of shape (..., K+1); entry l is Pr[Σ S_i = l].
    """
    a = _as_probs(ps)
    K = a.shape[-1]
    lead = a.shape[:-1]
    flat = a.reshape(-1, K)
    qflat = 1.0 - flat if qs is None else _as_probs(qs, "qs").reshape(-1, K)
    if qs is not None and qflat.shape != flat.shape:  # (qs None: 1 - flat has the shape)
        raise ParameterError("qs", f"must have the shape of ps {a.shape}, got {np.shape(qs)}")
    out = np.zeros((flat.shape[0], K + 1), dtype=np.float64)
    out[:, 0] = 1.0
    for j in range(K):
        p = flat[:, j : j + 1]
        # entries 0..j+1 are live after this step
        shifted = out[:, : j + 1] * p
        out[:, : j + 1] *= qflat[:, j : j + 1]
        out[:, 1 : j + 2] += shifted
    return out.reshape(*lead, K + 1)
