"""Privacy-constraint rows of the γ_opt LP (Lemma 3.4, Eq. 1; Section 5; Appendix C.3).

For a configuration v — one corner (p_i, p′_i) per mechanism — with vote-count pmfs
α = PB(p) and α′ = PB(p′), DaRRM_γ with symmetric γ is (mε, δ)-DP iff for every v

    f(v; γ) = Σ_{l<mid} (e^{mε}α′_l − α_l)γ(l) + Σ_{l≥mid} (α_l − e^{mε}α′_l)γ(l) ≤ e^{mε} − 1 + 2δ.

Substituting γ(K−l) = x_l for the upper-half variables x_l (l = mid..K) folds this
into one row per configuration (spec §2.4):

    Σ_{l=mid}^{K} [(α_l − e^{mε}α′_l) + (e^{mε}α′_{K−l} − α_{K−l})]·x_l ≤ e^{mε} − 1 + 2δ.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from ..numerics.binomial import binomial_pmf
from ..numerics.poisson_binomial import pmf
from ..params import PrivacyParams
from ..privacy.condition import folded_rows
from ..privacy.corners import corners, expand, iter_count_vector_blocks


def pmf_pairs(
    counts: np.ndarray, corner_set: np.ndarray, complement_set: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(α, α′) of shape (N, K+1) for count vectors (N, C) over the corner set (C, 2);
    ``complement_set`` holds (1 − p, 1 − p′) when known in closed form
    (:func:`darrm.privacy.corners.complements`; the certificates pass it)."""
    p = expand(counts, corner_set[:, 0])
    pp = expand(counts, corner_set[:, 1])
    if complement_set is None:
        return pmf(p), pmf(pp)
    return pmf(p, expand(counts, complement_set[:, 0])), pmf(pp, expand(counts, complement_set[:, 1]))


@functools.lru_cache(maxsize=8192)
def _binomial(n: int, q: float) -> np.ndarray:
    """Bin(n, q) (:func:`darrm.numerics.binomial.binomial_pmf`), cached across calls: constraint
    generation builds rows from the same few corner probabilities every round.  Read-only."""
    a = binomial_pmf(n, q)
    a.flags.writeable = False
    return a


@functools.lru_cache(maxsize=4096)  # ≤ 4096·(K+1) floats: 33 MB at K = 1001
def _factor(qs: tuple[float, ...], key: tuple[int, ...]) -> np.ndarray:
    """⊛_q Bin(n_q, q) over the corner probabilities ``qs`` with counts ``key``, cached across
    calls (the cuts of consecutive rounds share most factors).  Read-only."""
    a = np.ones(1)
    for q, nq in zip(qs, key, strict=True):
        if nq:
            a = np.convolve(a, _binomial(nq, q))
    a.flags.writeable = False
    return a


def factored_pmf_pairs(counts: np.ndarray, corner_set: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Same as :func:`pmf_pairs`, via the factorisation α = z^{#(p=1)} · ⊛_q Bin(n_q, q) over the
    distinct corner probabilities q ∉ {0, 1} (n_q: mechanisms at a corner with probability q).

    A multiset of corners has at most four such factors, so each pmf costs a few binomial
    convolutions instead of K Poisson-binomial steps (K = 1001: 2,048 rows in 0.09 s instead of
    8.5 s); the factors are cached (LRU) across multisets and calls.  Every term is a product
    of non-negative numbers, as in :func:`darrm.numerics.poisson_binomial.pmf`; tests compare both.
    """
    counts = np.asarray(counts, dtype=np.int64)
    K = int(counts[0].sum()) if counts.shape[0] else 0

    def one(col: int) -> np.ndarray:
        probs = corner_set[:, col]
        qs = tuple(sorted({float(q) for q in probs if 0.0 < q < 1.0}))
        groups = [np.flatnonzero(probs == q) for q in qs]
        ones = np.flatnonzero(probs == 1.0)
        out = np.zeros((counts.shape[0], K + 1))
        keys = np.stack([counts[:, g].sum(axis=1) for g in groups], axis=1) if groups else None
        starts = counts[:, ones].sum(axis=1)
        for i in range(counts.shape[0]):
            a = _factor(qs, tuple(keys[i].tolist()) if keys is not None else ())
            s = int(starts[i])
            out[i, s : s + a.shape[0]] = a
        return out

    return one(0), one(1)


def iter_row_blocks(params: PrivacyParams, block: int = 1 << 15) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (count vectors, folded rows) blocks over all C(K+C−1, K) corner multisets."""
    cs = corners(params.eps, params.member_delta)
    e = params.exp_meps
    for counts in iter_count_vector_blocks(params.K, cs.shape[0], block):
        a, ap = pmf_pairs(counts, cs)
        yield counts, folded_rows(a, ap, e)


def possibly_binding(rows: np.ndarray, rhs: float) -> np.ndarray:
    """Mask of rows that can bind inside the box 0 ≤ x ≤ 1.

    max_{x∈[0,1]^n} r·x = Σ_l max(r_l, 0); a row whose maximum is ≤ rhs is implied by the
    bounds and can be dropped from the LP without changing its feasible set.
    """
    return np.maximum(rows, 0.0).sum(axis=1) > rhs
