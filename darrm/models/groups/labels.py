"""Labels from a per-group table γ(l_1, …, l_G): the votes' columns are the members in group order.

Algorithm 1 with γ read from each group's vote count (:mod:`darrm.models.groups.per_group`): the
majority of all K votes with probability γ(l_1, …, l_G), else a fair coin.  The columns of a
(Q, K) vote matrix are the members of group 1 (K_1 columns), then group 2, and so on, the order
of ``params.groups``; vote counts are a (Q, G) matrix, one column per group.
"""

from __future__ import annotations

import numpy as np

from ...errors import ParameterError
from ...mechanism import draw_labels, vote_counts
from .params import GroupParams


def group_counts(votes: object, params: GroupParams) -> np.ndarray:
    """(Q, G) per-group vote counts of a (Q, K) 0/1 matrix whose columns are the members in group order.

    Raises:
        ParameterError: naming ``votes`` (the checks of :func:`darrm.mechanism.vote_counts`).
    """
    vote_counts(votes, params.K)  # shape, 0/1, K columns
    a = np.asarray(votes).astype(np.int64)
    bounds = np.cumsum([0] + [g.size for g in params.groups])
    return np.stack([a[:, bounds[i]:bounds[i + 1]].sum(axis=1) for i in range(len(params.groups))], axis=1)


def check_group_counts(counts: object, params: GroupParams) -> np.ndarray:
    """(Q, G) per-group vote counts, l_g integers in [0, K_g] (int64 copy).

    Raises:
        ParameterError: naming ``counts``.
    """
    a = np.asarray(counts)
    G = len(params.groups)
    if a.dtype == bool or (a.size and not np.issubdtype(a.dtype, np.number)):
        raise ParameterError("counts", f"must be integers, got dtype {a.dtype}")
    if a.ndim != 2 or a.shape[1] != G:
        raise ParameterError("counts", f"a per-group table takes a (Q, G={G}) matrix of per-group vote counts, "
                                       f"got shape {a.shape}")
    if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
        raise ParameterError("counts", "vote counts must be integers")
    out = a.astype(np.int64)
    sizes = np.array([g.size for g in params.groups])
    if np.any(out < 0) or np.any(out > sizes[None, :]):
        raise ParameterError("counts", f"group g's vote count must lie in [0, K_g], K_g = {sizes.tolist()}")
    return out


def label_group_counts(counts: np.ndarray, gamma: np.ndarray, params: GroupParams,
                       rng: np.random.Generator | int | None, secure: bool) -> np.ndarray:
    """Algorithm 1 for checked per-group counts (Q, G): the majority of L = Σ_g l_g with
    probability γ(l), else a fair coin (:func:`darrm.mechanism.draw_labels`)."""
    keep = np.asarray(gamma, dtype=np.float64)[tuple(counts.T)]
    majority = (counts.sum(axis=1) >= params.mid).astype(np.int64)
    return draw_labels(keep, majority, rng, secure)
