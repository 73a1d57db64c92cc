"""Corners of the per-mechanism privacy region and multisets of them (Lemma 5.1).

For an (ε, Δ)-DP mechanism M_i the pair (p_i, p′_i) = (Pr[M_i(D)=1], Pr[M_i(D′)=1])
lies in the polygon F (Appendix C.3, Part I)::

    p ≤ e^ε p′ + Δ,   p′ ≤ e^ε p + Δ,   1−p ≤ e^ε(1−p′) + Δ,   1−p′ ≤ e^ε(1−p) + Δ,   0 ≤ p, p′ ≤ 1.

The privacy cost f of Lemma 3.4 is affine in each (p_i, p′_i) when the others are
fixed, so its maximum over ∏F is attained with every pair at a vertex of F, and
because the Poisson-binomial pmf is invariant under permuting the mechanisms
(jointly in p and p′) only the multiset of vertices matters (Part II).

The vertex count depends on Δ, not on δ (Lemma 5.1 writes δ; its proof, Appendix C.3, uses the members' Δ): 8 for
Δ > 0, 4 for Δ = 0.  The set is closed under swap (p, p′)→(p′, p) and reflection
(p, p′)→(1−p, 1−p′), which is why one inequality family covers both neighbouring
directions and both outputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..errors import ParameterError


def corners(eps: float, Delta: float) -> np.ndarray:
    """Vertices of F as an array of shape (C, 2) with columns (p, p′); C = 8 if Δ > 0 else 4."""
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError("eps", f"must be finite and > 0, got {eps!r}")
    if not (math.isfinite(Delta) and 0.0 <= Delta < 1.0):
        raise ParameterError("Delta", f"must lie in [0, 1), got {Delta!r}")
    e = math.exp(eps)
    hi = (e + Delta) / (e + 1.0)
    lo = (1.0 - Delta) / (e + 1.0)
    if Delta == 0.0:
        pts = [(0.0, 0.0), (1.0, 1.0), (hi, lo), (lo, hi)]
    else:
        pts = [
            (0.0, 0.0),
            (1.0, 1.0),
            (0.0, Delta),
            (Delta, 0.0),
            (1.0 - Delta, 1.0),
            (1.0, 1.0 - Delta),
            (hi, lo),
            (lo, hi),
        ]
    return np.array(pts, dtype=np.float64)


def corner_count(Delta: float) -> int:
    """Vertices of F: 8 for Δ > 0, 4 for Δ = 0 (Lemma 5.1 counts Δ, not δ)."""
    return 8 if Delta > 0 else 4


#: Corner-index permutations of the symmetries of F, in the order of :func:`corners`:
#: SWAP[C] maps (p, p′) → (p′, p), REFLECT[C] maps (p, p′) → (1 − p, 1 − p′) (C = 8 or 4 corners).
SWAP = {8: [0, 1, 3, 2, 5, 4, 7, 6], 4: [0, 1, 3, 2]}
REFLECT = {8: [1, 0, 5, 4, 3, 2, 7, 6], 4: [1, 0, 3, 2]}


def orientations(counts: np.ndarray) -> np.ndarray:
    """The multisets v, swap(v), reflect(v), reflect(swap(v)) for each row of ``counts``."""
    C = counts.shape[1]
    s, r = np.array(SWAP[C]), np.array(REFLECT[C])
    # new count of corner j is the old count of the corner mapped onto j (permutations are involutions)
    return np.concatenate([counts, counts[:, s], counts[:, r], counts[:, s][:, r]])


def complements(eps: float, Delta: float) -> np.ndarray:
    """(1 − p, 1 − p′) of every corner of :func:`corners`, in closed form, same order.

    The corner set is closed under reflection, so each complement is another corner's
    coordinate: 1 − hi = lo, 1 − lo = hi, 1 − Δ and Δ.  Certificates use these instead of
    ``1.0 - p``, which loses all relative accuracy when p is close to 1 (large ε)."""
    cs = corners(eps, Delta)
    e = math.exp(eps)
    hi = (e + Delta) / (e + 1.0)
    lo = (1.0 - Delta) / (e + 1.0)
    comp = {0.0: 1.0, 1.0: 0.0, hi: lo, lo: hi, Delta: 1.0 - Delta, 1.0 - Delta: Delta}
    return np.vectorize(lambda v: comp[float(v)], otypes=[np.float64])(cs)


def in_region(p: np.ndarray, pp: np.ndarray, eps: float, Delta: float, tol: float = 1e-12) -> np.ndarray:
    """Whether (p, p′) satisfy the four (ε, Δ)-DP inequalities of F (elementwise)."""
    e = math.exp(eps)
    p = np.asarray(p, dtype=float)
    pp = np.asarray(pp, dtype=float)
    return (
        (p <= e * pp + Delta + tol)
        & (pp <= e * p + Delta + tol)
        & (1 - p <= e * (1 - pp) + Delta + tol)
        & (1 - pp <= e * (1 - p) + Delta + tol)
        & (p >= -tol)
        & (p <= 1 + tol)
        & (pp >= -tol)
        & (pp <= 1 + tol)
    )


def multiset_count(K: int, C: int) -> int:
    """Number of multisets of size K from C items: C(K+C−1, K)."""
    return math.comb(K + C - 1, K)


def count_vectors(K: int, C: int) -> np.ndarray:
    """All count vectors n ∈ ℕ^C with Σ n_c = K, shape (C(K+C−1,K), C), lexicographic order.

    Built vectorised one coordinate at a time (no Python loop per multiset).
    """
    if C < 1:
        raise ParameterError("C", "needs at least one corner")
    rows = np.zeros((1, 0), dtype=np.int32)
    remaining = np.array([K], dtype=np.int32)
    for _ in range(C - 1):
        reps = remaining + 1
        parent = np.repeat(np.arange(rows.shape[0]), reps)
        # the new coordinate runs 0..remaining[parent] for each parent
        starts = np.cumsum(reps) - reps
        new = np.arange(parent.shape[0], dtype=np.int32) - starts[parent].astype(np.int32)
        rows = np.concatenate([rows[parent], new[:, None]], axis=1)
        remaining = remaining[parent] - new
    return np.concatenate([rows, remaining[:, None]], axis=1)


def iter_count_vector_blocks(K: int, C: int, block: int = 1 << 16) -> Iterator[np.ndarray]:
    """Count vectors in blocks of at most ``block`` rows (memory-bounded).

    The first coordinates are enumerated as a prefix and the tail expanded per prefix,
    so no block is materialised beyond its own size plus one tail expansion.
    """
    total = multiset_count(K, C)
    if total <= block or C <= 2:
        yield from _chunks(count_vectors(K, C), block)
        return
    for n0 in range(K, -1, -1):
        # lexicographic order would be n0 ascending; any order is fine for a sweep
        tail = K - n0
        sub = multiset_count(tail, C - 1)
        if sub <= block:
            cv = count_vectors(tail, C - 1)
            yield np.concatenate([np.full((cv.shape[0], 1), n0, dtype=np.int32), cv], axis=1)
        else:
            for blk in iter_count_vector_blocks(tail, C - 1, block):
                yield np.concatenate([np.full((blk.shape[0], 1), n0, dtype=np.int32), blk], axis=1)


def _chunks(a: np.ndarray, block: int) -> Iterator[np.ndarray]:
    for s in range(0, a.shape[0], block):
        yield a[s : s + block]


def expand(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Expand count vectors (N, C) to per-mechanism values (N, K): corner c repeated n_c times."""
    counts = np.asarray(counts)
    K = int(counts[0].sum()) if counts.shape[0] else 0
    cum = np.cumsum(counts, axis=1)  # (N, C)
    j = np.arange(K)
    idx = (j[None, None, :] >= cum[:, :, None]).sum(axis=1)  # (N, K) corner index of slot j
    return np.asarray(values)[idx]
