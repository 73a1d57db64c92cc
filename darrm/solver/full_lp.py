"""The full LP of Section 5: every (possibly binding) corner-multiset row at once."""

from __future__ import annotations

import numpy as np

from ..params import PrivacyParams
from ..privacy.corners import corner_count, multiset_count
from .restricted_lp import CvxpyRestrictedLP
from .rows import iter_row_blocks, possibly_binding


def build_rows(params: PrivacyParams, *, prune: bool = True, block: int = 1 << 15) -> np.ndarray:
    """All folded privacy rows (possibly-binding ones only when ``prune``)."""
    rhs = params.rhs
    keep = []
    for _, rows in iter_row_blocks(params, block):
        keep.append(rows[possibly_binding(rows, rhs)] if prune else rows)
    n = (params.K + 1) // 2
    return np.concatenate(keep, axis=0) if keep else np.zeros((0, n))


def solve_lp(rows: np.ndarray, rhs: float, c: np.ndarray, *, solver_opts: dict | None = None) -> tuple[np.ndarray, str]:
    """Solve min c·x s.t. rows·x ≤ rhs, 0 ≤ x ≤ 1 with cvxpy + HiGHS; returns (x, status)."""
    lp = CvxpyRestrictedLP(c, rhs, solver_opts)
    lp.add(rows)
    x, _ = lp.solve()
    return x, lp.status


#: Above this many corner multisets "auto" uses constraint generation instead of all rows
#: (same optimum to 1e-9, tested; faster from K = 11 with Δ > 0 on).
FULL_LP_LIMIT = 20_000


def choose_method(params: PrivacyParams) -> str:
    """"full" (every row; K ≤ 9 for Δ > 0, K ≤ 45 for Δ = 0) or "cutting-planes"."""
    C = corner_count(params.member_delta)
    return "full" if multiset_count(params.K, C) <= FULL_LP_LIMIT else "cutting-planes"
