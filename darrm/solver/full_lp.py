"""The full LP of Section 5: every (possibly binding) row at once.

:func:`solve_all_rows` is the one full LP of every member model: its ``method="full"`` solves (shared
data, grouped members) and the reference the tests compare constraint generation with (a model's rows
from its own builder: :func:`build_rows`, :func:`darrm.models.shard_groups.solver.all_rows`,
:func:`darrm.models.weighted_shards.solver.all_rows`, :func:`darrm.models.groups.solver.group_rows`).
:func:`solve_sparse_rows` is its specialisation to rows held sparsely (the budget groups' Kronecker-built
rows, :mod:`darrm.models.weighted_shards.full_lp`): the same LP, min c·x subject to rows·x ≤ rhs and
0 ≤ x ≤ 1, handed to HiGHS as a sparse matrix (cvxpy would hold ~10⁶ rows densely)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..errors import SolveError
from ..params import PrivacyParams
from ..privacy.corners import corner_count, multiset_count
from .restricted_lp import HIGHS_DEFAULTS, CvxpyRestrictedLP
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


def solve_sparse_rows(rows, rhs: float, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`solve_all_rows` for a sparse (CSR) ``rows``: min c·x subject to rows·x ≤ rhs, 0 ≤ x ≤ 1, one
    HiGHS solve through scipy on costs scaled to ‖c‖∞ = 1 (the duals scaled back).  Returns (x, the rows'
    duals y ≥ 0 for the exact c, which give the Lagrangian lower bound
    :func:`darrm.solver.restricted_lp.lagrangian_bound`, valid for any y ≥ 0).

    Raises:
        SolveError: the LP failed."""
    from scipy.optimize import linprog

    scale = float(np.max(np.abs(c))) or 1.0
    # scipy's stubs type A_ub as dense; HiGHS takes the sparse matrix as is
    res = linprog(c / scale, A_ub=cast(Any, rows), b_ub=np.full(rows.shape[0], rhs), bounds=(0.0, 1.0),
                  method="highs",
                  options=cast(Any, {k: v for k, v in HIGHS_DEFAULTS.items() if k != "small_matrix_value"}))
    if res.status != 0 or res.x is None:
        raise SolveError(f"the sparse full LP failed: {res.message}")
    return np.asarray(res.x, dtype=np.float64), -scale * np.asarray(res.ineqlin.marginals, dtype=np.float64)


#: Above this many corner multisets "auto" uses constraint generation instead of all rows
#: (same optimum to 1e-9, tested; faster from K = 11 with Δ > 0 on).
FULL_LP_LIMIT = 20_000


def choose_method(params: PrivacyParams) -> str:
    """"full" (every row; K ≤ 9 for Δ > 0, K ≤ 45 for Δ = 0) or "cutting-planes"."""
    C = corner_count(params.member_delta)
    return "full" if multiset_count(params.K, C) <= FULL_LP_LIMIT else "cutting-planes"
