"""The LP's objective (Eq. 196–201): the expected signed error of γ under a prior."""

from __future__ import annotations

import numpy as np

from ..gamma import validate_gamma
from ..prior import Prior
from ..validation import instance


def objective_coefficients(K: int, prior: Prior) -> tuple[np.ndarray, float]:
    """(c, A): LP costs c_l = −½E[α_l − α_{K−l}] (l = mid..K) and constant A = −Σc, so that
    the expected signed error of γ is A + c·γ(mid..K) (Eq. 196–201)."""
    ea = np.asarray(prior.expected_pmf(K), dtype=np.float64)
    mid = (K + 1) // 2
    diff = ea[mid:] - ea[: K + 1 - mid][::-1]
    c = -0.5 * diff
    return c, float(-c.sum())


def expected_signed_error(gamma: np.ndarray, prior: Prior) -> float:
    """½ Σ_{l≥mid} E_T[α_l − α_{K−l}]·(1 − γ(l)): the LP objective plus its constant."""
    gamma = validate_gamma(gamma)
    instance("prior", prior, Prior, "a darrm.Prior (IIDPrior, BetaPrior, …)")
    K = len(gamma) - 1
    c, A = objective_coefficients(K, prior)
    return A + float(c @ np.asarray(gamma)[(K + 1) // 2 :])
