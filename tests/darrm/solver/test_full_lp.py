"""The sparse full LP is the one full LP on rows held sparsely: same optimum, valid bounds, failures refused."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import darrm
from darrm.errors import SolveError
from darrm.models.weighted_shards.full_lp import sparse_rows
from darrm.models.weighted_shards.solver import table_form
from darrm.solver.full_lp import solve_all_rows, solve_sparse_rows
from darrm.solver.restricted_lp import lagrangian_bound


@pytest.mark.parametrize("weights", [None, (1.0, 2.0)])
def test_the_sparse_full_lp_has_the_optimum_of_the_one_full_lp_on_the_same_rows(weights):
    params = darrm.WeightedShardParams(darrm.NonPrivate(), [(3, 0.05, 5e-8), (4, 0.1, 5e-8)], weights)
    c = table_form(params, darrm.IIDPrior(0.9)).costs
    R = sparse_rows(params)
    x_s, y_s = solve_sparse_rows(R, params.rhs, c)
    x_d, y_d = solve_all_rows(R.toarray(), params.rhs, c)
    assert abs(float(c @ x_s) - float(c @ x_d)) <= 1e-9
    assert np.max(R @ x_s - params.rhs) <= 1e-9 and np.all((x_s >= -1e-12) & (x_s <= 1 + 1e-12))
    # both duals give valid lower bounds (Lagrangian, any y ≥ 0) that meet the optimum
    for y in (y_s, y_d):
        lb = lagrangian_bound(c, R.toarray(), params.rhs, y)
        assert lb <= float(c @ x_d) + 1e-12
        assert float(c @ x_d) - lb <= 1e-8


def test_an_infeasible_sparse_full_lp_is_an_error_not_a_table():
    with pytest.raises(SolveError, match="sparse full LP"):
        solve_sparse_rows(sp.csr_matrix(np.array([[-1.0]])), -2.0, np.array([1.0]))
