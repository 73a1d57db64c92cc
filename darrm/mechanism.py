"""DaRRM itself (Algorithm 1): release the majority with probability γ(L), else a fair coin."""

from __future__ import annotations

import numpy as np

from .errors import ParameterError
from .gamma import validate_gamma
from .secure_random import bernoulli, fair_coins


def output_weights(gamma: np.ndarray) -> np.ndarray:
    """w_l = Pr[A = 1 | L = l] = γ(l)·1{l ≥ mid} + ½(1 − γ(l)) (Algorithm 1)."""
    gamma = np.asarray(gamma, dtype=np.float64)
    K = gamma.shape[0] - 1
    w = 0.5 * (1.0 - gamma)
    w[(K + 1) // 2 :] += gamma[(K + 1) // 2 :]
    return w


def vote_counts(votes: object, K: int) -> np.ndarray:
    """Vote counts L from a (Q, K) 0/1 vote matrix or a 1-D array of counts in [0, K]."""
    a = np.asarray(votes)
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.size and not np.issubdtype(a.dtype, np.number):
        raise ParameterError("votes", f"must be numeric, got dtype {a.dtype}")
    if a.ndim == 2:
        if a.shape[1] != K:
            raise ParameterError("votes", f"must have K={K} columns (one per mechanism), got shape {a.shape}")
        if not np.all((a == 0) | (a == 1)):
            raise ParameterError("votes", "entries must be 0 or 1")
        return a.sum(axis=1).astype(np.int64)
    if a.ndim == 1:
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ParameterError("votes", "vote counts must be integers")
        L = a.astype(np.int64)
        if np.any(L < 0) or np.any(L > K):
            raise ParameterError("votes", f"vote counts must lie in [0, K={K}]")
        return L
    raise ParameterError("votes", f"must be a (Q, K) 0/1 matrix or a 1-D array of counts, got shape {a.shape}")


def aggregate(votes: object, gamma: np.ndarray, rng: np.random.Generator | int | None = None, *,
              secure: bool = False) -> np.ndarray:
    """Private majority labels (0/1) for a batch of queries.

    Args:
        votes: (Q, K) array of 0/1 votes, or 1-D array of Q vote counts L ∈ [0, K].
        gamma: symmetric γ table of length K+1.
        rng: numpy Generator or seed; every query uses fresh randomness from it.
    """
    g = validate_gamma(gamma)
    K = g.shape[0] - 1
    L = vote_counts(votes, K)
    rng = np.random.default_rng(rng)
    majority = (L >= (K + 1) // 2).astype(np.int64)
    keep = bernoulli(g[L]) if secure else rng.random(L.shape[0]) < g[L]
    coin = fair_coins(L.shape[0]) if secure else rng.integers(0, 2, size=L.shape[0])
    return np.where(keep, majority, coin)
