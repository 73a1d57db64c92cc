"""The LP's objective (Eq. 196–201): the expected signed error of γ under a prior."""

from __future__ import annotations

import numpy as np

from ..gamma import validate_gamma
from ..prior import Prior
from ..validation import instance


def objective_coefficients(K: int, prior: Prior) -> tuple[np.ndarray, float]:
    """(c, A): LP costs c_l = −½ d_l (l = mid..K, d the prior's margins,
    :meth:`darrm.Prior.expected_margins`) and constant A = −Σc, so that the expected error of γ
    is A + c·γ(mid..K) (Eq. 196–201).

    Raises:
        ParameterError: naming ``prior``, when its objective would not be the expected error.
    """
    c = -0.5 * np.asarray(prior.expected_margins(K), dtype=np.float64)
    return c, float(-c.sum())


def expected_signed_error(gamma: np.ndarray, prior: Prior) -> float:
    """The expected error of DaRRM_γ under the prior, ½ Σ_{l≥mid} d_l·(1 − γ(l)) with the prior's
    margins d (the LP objective plus its constant; Eq. 196–201).

    Args:
        gamma: a full symmetric table γ(0..K).
        prior: the prior (its margins are folded for a common p; :mod:`darrm.prior`).

    Returns:
        E_T[|Pr[A = 1] − Pr[majority = 1]|] (for independent p_i: with their means, exact when
        they are ≥ ½).

    Raises:
        ParameterError: a bad γ or prior.
    """
    gamma = validate_gamma(gamma)
    instance("prior", prior, Prior, "a darrm.Prior (IIDPrior, BetaPrior, …)")
    K = len(gamma) - 1
    c, A = objective_coefficients(K, prior)
    return A + float(c @ np.asarray(gamma)[(K + 1) // 2 :])
