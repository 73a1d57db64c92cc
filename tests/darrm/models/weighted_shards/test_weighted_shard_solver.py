"""γ_opt for budget groups on one-group shards: G = 1 is the disjoint members' γ_opt, constraint
generation equals the every-row LP, the LPs are nested, tables round-trip through γ files and label."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm
from darrm.errors import GammaFileError, ParameterError
from darrm.models.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.models.weighted_shards import WeightedShardParams, all_rows, solve_gamma_opt_weighted_shards, table_form
from darrm.solver.full_lp import solve_all_rows

PRIOR = darrm.IIDPrior(0.75)


@pytest.mark.parametrize("method", ["full", "cutting-planes"])
@pytest.mark.parametrize("member", [NonPrivate(), ApproxDP(0.5, 1e-5), LocalRR(1.0)], ids=["np", "dp", "rr"])
def test_one_group_equals_the_disjoint_members_gamma_opt(member, method):
    one = solve_gamma_opt_weighted_shards(WeightedShardParams(member, [(11, 1.0, 1e-4)]), PRIOR,
                                          options=darrm.SolveOptions(method=method))
    assert one.info["method"] == ("weighted-shards-full-lp" if method == "full" else "weighted-shards-cutting-planes")
    ref = darrm.solve(darrm.DisjointParams(11, member, 1.0, 1e-4), PRIOR)
    assert one.status == ref.status == "optimal"
    assert np.max(np.abs(one.gamma - ref.gamma)) <= 1e-12
    assert abs(one.objective - ref.objective) <= 1e-12


@pytest.mark.parametrize("method", ["full", "cutting-planes"])
@pytest.mark.parametrize("weights", [None, (1.0, 2.0, 3.0)], ids=["per-group", "weighted"])
def test_both_methods_equal_the_dense_every_row_lp(weights, method):
    params = WeightedShardParams(ApproxDP(0.2, 1e-5), [(3, 0.5, 1e-4), (3, 1.0, 1e-4), (1, 1.5, 1e-4)], weights)
    table = solve_gamma_opt_weighted_shards(params, PRIOR, options=darrm.SolveOptions(method=method))
    form = table_form(params, PRIOR)
    x, _ = solve_all_rows(all_rows(params), params.rhs, form.costs)
    err = form.constant + float(form.costs @ np.clip(x, 0.0, 1.0))
    assert table.status == "optimal"
    assert abs(table.objective - err) <= 1e-9


@pytest.mark.parametrize("member", [NonPrivate(), ApproxDP(0.3, 1e-3), LocalRR(1.0)], ids=["np", "dp", "rr"])
@pytest.mark.parametrize("weights", [None, (1.0, 2.5)], ids=["per-group", "weighted"])
def test_the_sparse_rows_are_every_possibly_binding_constraint_row(member, weights):
    """The Kronecker-built rows of the sparse full LP are, as a set, the rows of constraint_row over
    every configuration, output and direction that some point of the box can violate."""
    from darrm.models.weighted_shards import constraint_row, lp_variables
    from darrm.models.weighted_shards.certificate import flat_violations, violations
    from darrm.models.weighted_shards.full_lp import sparse_rows
    from darrm.solver.rows import possibly_binding

    params = WeightedShardParams(member, [(2, 0.5, 1e-4), (3, 1.2, 1e-3)], weights)
    var = lp_variables(params)
    n = flat_violations(violations(np.zeros(params.gamma_shape), params)).size
    dense = np.array([constraint_row(params, i, var) for i in range(n)])
    dense = dense[possibly_binding(dense, 1.0)]
    sparse = sparse_rows(params).toarray()
    key = lambda a: a[np.lexsort(np.round(a, 12).T[::-1])]  # noqa: E731 - rows in one canonical order
    assert sparse.shape == dense.shape
    assert np.max(np.abs(key(sparse) - key(dense))) <= 1e-12


def test_the_lps_are_nested_per_group_weighted_worst_budget():
    """Per-group γ ≤ weighted γ (a subspace of the per-group tables) ≤ γ at the worst budget for all
    (a γ(L) is a weighted table with equal weights, feasible for every group at the smallest target)."""
    groups = [(4, 0.5, 1e-5), (5, 1.0, 1e-5), (2, 1.5, 1e-5)]
    per = solve_gamma_opt_weighted_shards(WeightedShardParams(NonPrivate(), groups), PRIOR)
    weighted = solve_gamma_opt_weighted_shards(WeightedShardParams(NonPrivate(), groups, (1.0, 2.0, 3.0)), PRIOR)
    equal = solve_gamma_opt_weighted_shards(WeightedShardParams(NonPrivate(), groups, (1.0, 1.0, 1.0)), PRIOR)
    worst = darrm.solve(darrm.DisjointParams(11, NonPrivate(), 0.5, 1e-5), PRIOR)
    tol = 1e-9  # every table's proven gap is below gap_tol = 1e-9 (status "optimal")
    assert per.status == weighted.status == equal.status == worst.status == "optimal"
    assert per.objective <= weighted.objective + tol
    assert per.objective <= equal.objective + tol
    assert equal.objective <= worst.objective + tol
    assert per.objective < worst.objective - 1e-3  # individual targets are worth something here
    # the weighted table is one value per weighted count
    S = np.add.outer(np.add.outer(np.arange(5), 2 * np.arange(6)), 3 * np.arange(3))
    for s in np.unique(S):
        assert np.ptp(weighted.gamma[(S == s) | (S == S.max() - s)]) == 0.0


def test_a_weighted_table_must_be_constant_on_equal_weighted_counts():
    """Weights (1, 1) on sizes (2, 1): S = l_1 + l_2, classes {S ∈ {0, 3}} and {S ∈ {1, 2}}; the second
    holds two reflection pairs, (1, 0)~(1, 1) and (0, 1)~(2, 0), which a symmetric table may set apart
    but a weighted one may not."""
    params = WeightedShardParams(NonPrivate(), [(2, 1.0, 1e-4), (1, 1.0, 1e-4)], (1.0, 1.0))
    g = np.array([[0.9, 0.3], [0.3, 0.3], [0.3, 0.9]])
    params.validate_table(g)
    g[0, 1] = g[2, 0] = 0.6  # still symmetric under the joint reflection
    WeightedShardParams(NonPrivate(), [(2, 1.0, 1e-4), (1, 1.0, 1e-4)]).validate_table(g)
    with pytest.raises(ParameterError, match="weighted"):
        params.validate_table(g)
    with pytest.raises(ParameterError, match="symmetric"):
        params.validate_table(np.array([[0.9, 0.3], [0.3, 0.3], [0.3, 0.8]]))


def test_parameters_are_validated_naming_the_field():
    with pytest.raises(ParameterError, match="odd"):
        WeightedShardParams(NonPrivate(), [(2, 1.0, 1e-4), (2, 1.0, 1e-4)])
    with pytest.raises(ParameterError, match="weights"):
        WeightedShardParams(NonPrivate(), [(2, 1.0, 1e-4), (1, 1.0, 1e-4)], (1.0,))
    with pytest.raises(ParameterError, match="weights"):
        WeightedShardParams(NonPrivate(), [(2, 1.0, 1e-4), (1, 1.0, 1e-4)], (1.0, -2.0))
    with pytest.raises(ParameterError, match="groups"):
        WeightedShardParams(NonPrivate(), [(0, 1.0, 1e-4)])
    with pytest.raises(ParameterError, match="member"):
        WeightedShardParams("nonprivate", [(1, 1.0, 1e-4)])  # type: ignore[arg-type]


def test_save_load_verify_and_tamper(tmp_path):
    params = WeightedShardParams(NonPrivate(), [(2, 0.5, 1e-4), (3, 1.5, 1e-4)], (1.0, 3.0))
    table = darrm.solve(params, PRIOR)
    path = tmp_path / "w.json"
    darrm.save(table, path)
    back = darrm.load(path)
    assert back.params == params and np.array_equal(back.gamma, table.gamma)
    assert back.objective == table.objective and back.params.gamma_form == "weighted"
    d = json.loads(path.read_text())
    assert d["format"] == "darrm-gamma-weighted-shards/1" and len(d["gamma"]) == 3
    d["budget_groups"][0][1] = 0.1  # a tighter target for group 0, checksum recomputed: refused as not private
    from darrm.gamma_file import checksum

    d["checksum"] = checksum(d)
    path.write_text(json.dumps(d))
    with pytest.raises(GammaFileError, match="NOT"):
        darrm.load(path)


def test_labels_read_each_groups_count():
    """aggregate() on votes whose columns are the members in group order releases the majority with
    probability γ(l_1, l_2): a vote matrix and its (Q, G) counts give the same labels, and a
    unanimous query whose γ is 1 is released as is."""
    params = WeightedShardParams(NonPrivate(), [(2, 0.5, 1e-4), (3, 1.5, 1e-4)])
    table = darrm.solve(params, PRIOR)
    rng = np.random.default_rng(0)
    votes = rng.integers(0, 2, (200, 5))
    counts = np.stack([votes[:, :2].sum(1), votes[:, 2:].sum(1)], axis=1)
    a = darrm.aggregate(votes, table, rng=7)
    b = darrm.aggregate_counts(counts, table, rng=7)
    assert np.array_equal(a, b)
    ones = np.ones((50, 5), dtype=np.int64)
    if table.gamma[2, 3] == 1.0:
        assert np.all(darrm.aggregate(ones, table, rng=1) == 1)
    with pytest.raises(ParameterError, match="counts"):
        darrm.aggregate_counts(np.array([[3, 0]]), table)


def test_a_full_lp_past_max_memory_is_refused_before_any_work():
    params = WeightedShardParams(NonPrivate(), [(34, 0.1, 1e-7), (44, 0.2, 1e-7), (23, 0.3, 1e-7)])
    with pytest.raises(ParameterError, match="max_memory"):
        darrm.solve(params, options=darrm.SolveOptions(max_memory=1e8))
