"""The contraction of the groups' pmfs with the output weights: Σ_k Π_g pmfs_g[k_g] · w_{Σ k_g}.

Shared by the exhaustive certificate (:mod:`darrm.models.groups.certificate`, over corner multisets) and
the factorised sweep (:mod:`darrm.models.groups.sweep`, over tuples).  Every number is non-negative and
nothing is subtracted, so Higham's bounds hold in any order (the rounding analyses of both modules).
"""

from __future__ import annotations

import numpy as np


def inner_table(pmfs: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """T[n_2, …, n_G, s] = Σ_{k_2..k_G} Π_{g≥2} pmfs_g[n_g, k_g] · w_{s + Σ k_g}, s = 0..K_1: the
    sums over every group but the first, innermost-first (non-negative sums only; module docstring).
    A G-dimensional ``w`` (G ≥ 2) holds per-group weights W(k_1, …, k_G) (:func:`joint_inner_table`)."""
    T = np.asarray(w, dtype=np.float64)
    if T.ndim > 1:
        return joint_inner_table(pmfs, T)
    for a in reversed(pmfs[1:]):
        Kg = a.shape[1] - 1
        S = T.shape[-1] - Kg  # trailing length after this group
        lead = (a.shape[0],) + (1,) * T.ndim
        acc = a[:, 0].reshape(lead) * T[None, ..., 0:S]
        for k in range(1, Kg + 1):
            acc += a[:, k].reshape(lead) * T[None, ..., k:k + S]
        T = acc
    return T


def joint_inner_table(pmfs: list[np.ndarray], W: np.ndarray) -> np.ndarray:
    """T[n_2, …, n_G, s] = Σ_{k_2..k_G} Π_{g≥2} pmfs_g[n_g, k_g] · W(s, k_2, …, k_G) for the weights
    of the per-group form (:mod:`darrm.models.groups.per_group`): one tensor contraction per group,
    innermost-first, each entry a dot product of K_g + 1 non-negative terms (the same rounding count
    per level as :func:`inner_table`; a probability's tree has ≤ Σ_g Π_{h≤g}(K_h + 1) ≤ 2Π_g(K_g + 1)
    products, within the (2G + 2)Π_g(K_g + 2) of :func:`darrm.models.groups.params.group_check`)."""
    T = np.moveaxis(np.asarray(W, dtype=np.float64), 0, -1)  # (K_2+1, …, K_G+1, K_1+1)
    for g in range(len(pmfs) - 1, 0, -1):  # group g's count axis is T's axis g − 1
        T = np.moveaxis(np.tensordot(pmfs[g], T, axes=([1], [g - 1])), 0, g - 1)
    return T


def outer(a1: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The outermost group's sum: one matrix product (dot products of K_1 + 1 non-negative terms)."""
    return np.tensordot(a1, T, axes=([1], [T.ndim - 1]))


def contract(pmfs: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """P[n_1, …, n_G] = Σ_k Π_g pmfs_g[n_g, k_g] · w_{Σ k_g}: the output probability of every
    configuration (:func:`inner_table`, then :func:`outer`)."""
    return outer(pmfs[0], inner_table(pmfs, w))
