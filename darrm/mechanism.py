"""DaRRM itself (Algorithm 1): release the majority with probability γ(L), else a fair coin."""

from __future__ import annotations

import numpy as np

from .errors import ParameterError
from .gamma import validate_gamma
from .secure_random import bernoulli, fair_coins
from .validation import flag, generator


def output_weights(gamma: np.ndarray) -> np.ndarray:
    """w_l = Pr[A = 1 | L = l] = γ(l)·1{l ≥ mid} + ½(1 − γ(l)) (Algorithm 1)."""
    gamma = np.asarray(gamma, dtype=np.float64)
    K = gamma.shape[0] - 1
    w = 0.5 * (1.0 - gamma)
    w[(K + 1) // 2 :] += gamma[(K + 1) // 2 :]
    return w


def class_votes(votes: object, K: int | None, classes: int = 2, *, min_queries: int = 0) -> np.ndarray:
    """A (Q, K) matrix of class labels in 0..classes−1 (one row per query, one column per member),
    validated: the input of every aggregator (two classes: :func:`vote_counts`; C classes: the
    plurality aggregator of the PATE experiments).

    A 1-D array is refused: it could be one query's K votes or Q counts.  Rows of different
    lengths, non-numeric or complex data, non-integral or non-finite labels, labels outside
    0..classes−1 and fewer than ``min_queries`` rows are refused too (``K=None``: any number of
    columns but zero): a label that is no class
    would be released as one, outside the set the (ε, δ) claim covers.

    Returns:
        The labels as int64 (the input itself when it is int64 already).

    Raises:
        ParameterError: (``votes``) any of the above.
    """
    try:
        a = np.asarray(votes)
    except (ValueError, TypeError) as exc:  # ragged rows (numpy >= 1.24), unconvertible objects
        raise ParameterError("votes", f"must be a (Q, K) matrix with rows of equal length "
                                      f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.size and a.dtype.kind not in "iuf":
        raise ParameterError("votes", f"must be numeric, got dtype {a.dtype}")
    if a.ndim == 1:
        raise ParameterError(
            "votes", f"got a 1-D array of shape {a.shape}, which is ambiguous: pass a (1, K) matrix for one "
            "query, or vote counts through counts= (aggregate_counts)")
    what = "0/1" if classes == 2 else "class-label"
    if a.ndim != 2:
        raise ParameterError("votes", f"must be a (Q, K) {what} matrix, got shape {a.shape}")
    if a.shape[1] != K and K is not None:
        raise ParameterError("votes", f"must have K={K} columns (one per mechanism), got shape {a.shape}")
    if a.shape[1] == 0 and K is None:
        raise ParameterError("votes", f"must have at least one column (member), got shape {a.shape}")
    if a.shape[0] < min_queries:
        raise ParameterError("votes", f"must have at least {min_queries} row(s) (queries), got shape {a.shape}")
    if a.dtype.kind in "iu":  # min and max: no temporary as large as the votes
        ok = not a.size or (int(a.min()) >= 0 and int(a.max()) <= classes - 1)
    else:  # NaN fails every comparison
        ok = bool(np.all((a >= 0) & (a <= classes - 1) & (a == np.floor(a))))
    if not ok:
        raise ParameterError("votes", "entries must be 0 or 1" if classes == 2
                             else f"entries must be class labels, integers in 0..{classes - 1}")
    return a.astype(np.int64, copy=False)


def vote_counts(votes: object, K: int) -> np.ndarray:
    """Vote counts L of a (Q, K) 0/1 vote matrix (one row per query, one column per mechanism),
    validated by :func:`class_votes`.

    A 1-D array is refused: it could be one query's K votes or Q counts.  Pass a (1, K) matrix
    for one query, or counts to :func:`check_counts` / :func:`aggregate_counts`.
    """
    return class_votes(votes, K).sum(axis=1, dtype=np.int64)


def check_counts(counts: object, K: int) -> np.ndarray:
    """Vote counts L ∈ [0, K] of Q queries, given as a 1-D integer array (int64 copy)."""
    a = np.asarray(counts)
    if a.dtype == bool or (a.size and not np.issubdtype(a.dtype, np.number)):
        raise ParameterError("counts", f"must be integers in [0, K={K}], got dtype {a.dtype}")
    if a.ndim != 1:
        raise ParameterError("counts", f"must be a 1-D array of Q vote counts, got shape {a.shape} "
                                       "(a (Q, K) 0/1 vote matrix goes through votes=)")
    if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
        raise ParameterError("counts", "vote counts must be integers")
    L = a.astype(np.int64)
    if np.any(L < 0) or np.any(L > K):
        raise ParameterError("counts", f"vote counts must lie in [0, K={K}]")
    return L


def draw_labels(keep: np.ndarray, majority: np.ndarray, rng: np.random.Generator | int | None,
                secure: bool) -> np.ndarray:
    """Algorithm 1's draw, query by query: the majority with probability ``keep`` (γ of the votes),
    else a fair coin.  ``secure``: every coin from the OS CSPRNG (:mod:`darrm.secure_random`),
    ``rng`` ignored (but checked).

    Args:
        keep: (Q,) probabilities γ in [0, 1].
        majority: (Q,) the majorities (0/1).
        rng: numpy Generator or seed.
        secure: draw from the OS CSPRNG.

    Returns:
        The Q labels (0/1 integers).

    Raises:
        ParameterError: naming ``secure`` or ``rng``.
    """
    secure = flag("secure", secure)
    rng = generator("rng", rng)  # checked even when secure ignores it
    if secure:
        kept, coin = bernoulli(keep), fair_coins(keep.shape[0])
    else:
        kept = rng.random(keep.shape[0]) < keep
        coin = rng.integers(0, 2, size=(keep.shape[0],))
    return np.where(kept, majority, coin)


def _draw_labels(L: np.ndarray, g: np.ndarray, rng: np.random.Generator | int | None, secure: bool) -> np.ndarray:
    """Algorithm 1 for vote counts L: the majority with probability γ(L), else a fair coin."""
    K = g.shape[0] - 1
    return draw_labels(g[L], (L >= (K + 1) // 2).astype(np.int64), rng, secure)


def aggregate(votes: object, gamma: np.ndarray, rng: np.random.Generator | int | None = None, *,
              secure: bool = False) -> np.ndarray:
    """Private majority labels (0/1) for a batch of queries.

    Args:
        votes: (Q, K) array of 0/1 votes (one query: shape (1, K)); vote counts go through
            :func:`aggregate_counts`.
        gamma: symmetric γ table of length K+1.
        rng: numpy Generator or seed; every query uses fresh randomness from it.
        secure: draw every coin from the OS CSPRNG (exact Bernoulli(γ(L)) draws, like Opacus's
            ``secure_mode``); ``rng`` is then ignored.
    """
    g = validate_gamma(gamma)
    return _draw_labels(vote_counts(votes, g.shape[0] - 1), g, rng, secure)


def aggregate_counts(counts: object, gamma: np.ndarray, rng: np.random.Generator | int | None = None, *,
                     secure: bool = False) -> np.ndarray:
    """:func:`aggregate` from the vote counts L ∈ [0, K] of Q queries (a 1-D array); the same
    labels as ``aggregate(votes)`` with ``counts = votes.sum(axis=1)`` and the same rng."""
    g = validate_gamma(gamma)
    return _draw_labels(check_counts(counts, g.shape[0] - 1), g, rng, secure)
