"""Privacy-constraint rows of the γ_opt LP (Lemma 3.4, Eq. 1; Section 5; Appendix C.3).

For a configuration v — one corner (p_i, p′_i) per mechanism — with vote-count pmfs
α = PB(p) and α′ = PB(p′), DaRRM_γ with symmetric γ is (mε, δ)-DP iff for every v

    f(v; γ) = Σ_{l<mid} (e^{mε}α′_l − α_l)γ(l) + Σ_{l≥mid} (α_l − e^{mε}α′_l)γ(l) ≤ e^{mε} − 1 + 2δ.

Substituting γ(K−l) = x_l for the upper-half variables x_l (l = mid..K) folds this
into one row per configuration (γ symmetric, Section 5):

    Σ_{l=mid}^{K} [(α_l − e^{mε}α′_l) + (e^{mε}α′_{K−l} − α_{K−l})]·x_l ≤ e^{mε} − 1 + 2δ.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..params import PrivacyParams
from ..privacy.condition import folded_rows
from ..privacy.corner_pmfs import factored_pmf_pairs, pmf_pairs
from ..privacy.corners import corners, iter_count_vector_blocks

__all__ = ["factored_pmf_pairs", "iter_row_blocks", "pmf_pairs", "possibly_binding"]  # pmfs: privacy.corner_pmfs


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
