"""Error (1 − utility) of DaRRM_γ (Definition 2.4).

For symmetric γ and any independent mechanisms with vote-count pmf α (Eq. 186/196):

    E(DaRRM_γ) = |Pr[A(D)=1] − Pr[g(S)=1]| = |½ Σ_{l=mid}^{K} (α_l − α_{K−l})·(1 − γ(l))|.

Everything here is exact (no Monte Carlo) except :func:`expected_error_mc`, which
reproduces the paper's estimator of E_{p_i ~ U[0,1] i.i.d.}[E] with a seeded generator.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError
from .gamma import validate_gamma
from .numerics.binomial import binomial_pmf
from .numerics.poisson_binomial import pmf


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
    """E(DaRRM_γ) for i.i.d. mechanisms, p_i = p, at each p of the array ``p``."""
    g = validate_gamma(gamma)
    p = np.asarray(p, dtype=np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ParameterError("p", "must lie in [0, 1]")
    return error_from_pmf(g, binomial_pmf(g.shape[0] - 1, p))


def expected_error_mc(
    gamma: np.ndarray,
    *,
    samples: int = 10000,
    low: float = 0.0,
    high: float = 1.0,
    seed: int | np.random.Generator | None = 0,
) -> float:
    """Monte-Carlo E_{p_i ~ U[low, high] i.i.d.}[E(DaRRM_γ)] (the paper's error panels, T = 10000).

    Draws K probabilities per sample (the reference code's K+1 is an off-by-one; spec §4).
    """
    g = validate_gamma(gamma)
    K = g.shape[0] - 1
    rng = np.random.default_rng(seed)
    ps = rng.uniform(low, high, size=(samples, K))
    return float(error(g, ps).mean())
