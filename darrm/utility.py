"""Error (1 − utility) of DaRRM_γ (Definition 2.4).

For symmetric γ and any independent mechanisms with vote-count pmf α (Eq. 186/196):

    E(DaRRM_γ) = |Pr[A(D)=1] − Pr[g(S)=1]| = |½ Σ_{l=mid}^{K} (α_l − α_{K−l})·(1 − γ(l))|.

Everything here is exact (no Monte Carlo); the paper's seeded Monte-Carlo estimator of
E_{p_i ~ U[0,1] i.i.d.}[E] lives with the simulations that use it (:mod:`darrm.experiments.simulations`).
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError
from .gamma import validate_gamma
from .numerics.binomial import log_comb
from .numerics.poisson_binomial import pmf
from .validation import float_array


def error_from_pmf(gamma: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """E(DaRRM_γ) for vote-count pmfs α of shape (..., K+1)."""
    g = validate_gamma(gamma)
    K = g.shape[0] - 1
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape[-1] != K + 1:
        raise ParameterError("alpha", f"last axis must have K+1={K + 1} entries, got {alpha.shape}")
    mid = (K + 1) // 2
    diff = alpha[..., mid:] - alpha[..., : K + 1 - mid][..., ::-1]
    return np.abs(0.5 * diff @ (1.0 - g[mid:]))


def error(gamma: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """E(DaRRM_γ) for the mechanisms' probabilities ``ps`` of shape (..., K) (any, not only i.i.d.)."""
    g = validate_gamma(gamma)
    ps = np.asarray(ps, dtype=np.float64)
    if ps.ndim == 0 or ps.shape[-1] != g.shape[0] - 1:
        raise ParameterError("ps", f"last axis must have K={g.shape[0] - 1} probabilities, got shape {ps.shape}")
    return error_from_pmf(g, pmf(ps))


def error_curve(gamma: np.ndarray, p: np.ndarray) -> np.ndarray:
    """E(DaRRM_γ) for i.i.d. mechanisms, p_1 = … = p_K = p, at each p of the array ``p``, with
    each Bin_l − Bin_{K−l} evaluated without cancellation:

        Bin_l(p) − Bin_{K−l}(p) = C(K,l)·(pq)^{K−l}·(p^j − q^j),  j = 2l − K, q = 1−p,

    so the error is exactly 0 at p = ½ (α_l = α_{K−l}) instead of ±1e-16.

    Args:
        gamma: the table, K + 1 values in [0, 1].
        p: the probabilities at which to evaluate, in [0, 1] (any shape).

    Returns:
        Pr[DaRRM_γ ≠ the true majority] at each p (the shape of ``p``).

    Raises:
        ParameterError: ``gamma`` is not a valid table or ``p`` not in [0, 1].
    """
    g = validate_gamma(gamma)
    p = float_array("p", p)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ParameterError("p", "must lie in [0, 1]")
    K = g.shape[0] - 1
    mid = (K + 1) // 2
    l = np.arange(mid, K + 1, dtype=np.float64)
    j = 2.0 * l - K
    logc = log_comb(K, l)
    pe = p[..., None]
    q = 1.0 - pe
    with np.errstate(divide="ignore", invalid="ignore"):
        lp, lq = np.log(pe), np.log(q)
        inner = (K - l) * (lp + lq)
        inner = np.where(K - l == 0, 0.0, inner)  # (pq)^0 = 1 even at p ∈ {0, 1}
        # p^j − q^j = sign(p − q)·max(p, q)^j·(−expm1(−j·|log p − log q|)): no overflow
        big = np.maximum(lp, lq)
        diff = np.sign(pe - q) * np.exp(logc + inner + j * big) * -np.expm1(-j * np.abs(lp - lq))
    # p ∈ {0, 1}: only l = K (or its mirror) carries mass: Bin_K − Bin_0 = ±1
    edge = np.where(l == K, 1.0, 0.0)
    diff = np.where(pe == 1.0, edge, np.where(pe == 0.0, -edge, diff))
    return np.abs(0.5 * diff @ (1.0 - g[mid:]))
