"""The full LP of Section 5: every (possibly binding) row at once.

:func:`solve_all_rows` is the one full LP of every member model: its ``method="full"`` solves (shared
data, grouped members) and the reference the tests compare constraint generation with (a model's rows
from its own builder: :func:`build_rows`, :func:`darrm.models.shard_groups.solver.all_rows`,
:func:`darrm.models.weighted_shards.solver.all_rows`, :func:`darrm.models.groups.solver.group_rows`).  The budget
groups' sparse full LP (:mod:`darrm.models.weighted_shards.full_lp`) keeps its own rows, held sparsely."""

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


def solve_all_rows(rows: np.ndarray, rhs: float, c: np.ndarray, *,
                   solver_opts: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """min c·x subject to rows·x ≤ rhs, 0 ≤ x ≤ 1, every row at once (cvxpy + HiGHS): (x, the rows'
    duals y ≥ 0, which give the Lagrangian lower bound :func:`darrm.solver.restricted_lp.lagrangian_bound`).

    Raises:
        SolveError: the LP failed."""
    lp = CvxpyRestrictedLP(c, rhs, solver_opts)
    lp.add(rows)
    return lp.solve()


#: Above this many corner multisets "auto" uses constraint generation instead of all rows
#: (same optimum to 1e-9, tested; faster from K = 11 with Δ > 0 on).
FULL_LP_LIMIT = 20_000


def choose_method(params: PrivacyParams) -> str:
    """"full" (every row; K ≤ 9 for Δ > 0, K ≤ 45 for Δ = 0) or "cutting-planes"."""
    C = corner_count(params.member_delta)
    return "full" if multiset_count(params.K, C) <= FULL_LP_LIMIT else "cutting-planes"
