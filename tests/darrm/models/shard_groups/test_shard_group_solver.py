"""γ_opt for record groups on shards: the disjoint special case, the full LP, nesting, parameters."""

from __future__ import annotations

import numpy as np
import pytest

import darrm
from darrm.errors import ParameterError
from darrm.models.disjoint import ApproxDP, DisjointParams, LocalRR, NonPrivate, solve_gamma_opt_disjoint
from darrm.models.shard_groups import (
    RecordGroup,
    ShardGroupParams,
    all_rows,
    parse_record_groups,
    solve_gamma_opt_shard_groups,
)
from darrm.prior import IIDPrior
from darrm.solver.full_lp import solve_all_rows
from darrm.solver.objective import objective_coefficients

PRIOR = IIDPrior(0.75)


@pytest.mark.parametrize("member", [NonPrivate(), ApproxDP(0.2, 1e-5), LocalRR(2.0)], ids=["np", "dp", "rr"])
def test_one_group_with_one_copy_is_the_disjoint_gamma_opt(member):
    K, eps, delta = 21, 0.5, 1e-5
    a = solve_gamma_opt_shard_groups(ShardGroupParams(K, member, [(1, eps, delta)]), PRIOR)
    b = solve_gamma_opt_disjoint(DisjointParams(K, member, eps, delta), PRIOR)
    assert np.max(np.abs(a.gamma - b.gamma)) <= 1e-12
    assert abs(a.objective - b.objective) <= 1e-12


@pytest.mark.parametrize("params", [
    ShardGroupParams(15, NonPrivate(), [(1, 0.5, 1e-5), (2, 1.0, 1e-5), (3, 1.6, 1e-5)]),
    ShardGroupParams(13, ApproxDP(0.3, 1e-4), [(1, 0.6, 1e-4), (3, 1.5, 1e-4)]),
], ids=["three-groups", "approx-dp"])
def test_constraint_generation_equals_the_full_lp(params):
    table = solve_gamma_opt_shard_groups(params, PRIOR)
    assert table.status == "optimal"
    c, A = objective_coefficients(params.K, PRIOR)
    full = A + float(c @ np.clip(solve_all_rows(all_rows(params), params.rhs, c)[0], 0.0, 1.0))
    assert abs(table.objective - full) <= 1e-9


def _error(groups, K=15, member=None) -> float:
    return solve_gamma_opt_shard_groups(ShardGroupParams(K, member or NonPrivate(), groups), PRIOR).objective


def test_more_copies_never_lower_the_error_and_looser_targets_never_raise_it():
    base = _error([(1, 0.5, 1e-5), (2, 1.0, 1e-5)])
    assert _error([(1, 0.5, 1e-5), (3, 1.0, 1e-5)]) >= base - 1e-12   # more copies: more constraints
    assert _error([(1, 0.5, 1e-5), (2, 1.5, 1e-5)]) <= base + 1e-12   # a looser target: fewer
    # dropping a group relaxes the LP
    assert _error([(1, 0.5, 1e-5)]) <= base + 1e-12


def test_individual_targets_beat_everyone_at_the_worst_budget():
    """Records copied r_g times with their own ε_g against treating every record at the smallest ε
    and the largest number of copies (the all-at-worst ensemble satisfies every group's constraints,
    so it is feasible for the individualised LP: never better)."""
    groups = [(1, 0.5, 1e-5), (2, 1.0, 1e-5), (3, 1.5, 1e-5)]
    worst = [(3, 0.5, 1e-5)]
    assert _error(groups) <= _error(worst) + 1e-12
    assert _error(groups) < _error(worst) - 1e-3


def test_bad_parameters_name_what_is_wrong():
    with pytest.raises(ParameterError, match="groups"):
        ShardGroupParams(5, NonPrivate(), [(6, 1.0, 0.0)])
    with pytest.raises(ParameterError, match="groups"):
        ShardGroupParams(5, NonPrivate(), [])
    with pytest.raises(ParameterError, match="copies"):
        RecordGroup(0, 1.0)
    with pytest.raises(ParameterError, match="target_eps"):
        RecordGroup(1, -1.0)
    with pytest.raises(ParameterError, match="K"):
        ShardGroupParams(4, NonPrivate(), [(1, 1.0, 0.0)])
    with pytest.raises(ParameterError, match="member"):
        ShardGroupParams(5, "nonprivate", [(1, 1.0, 0.0)])
    for text in ("", "1:2", "a:1:0", "1:1:2", "0:1:0"):
        with pytest.raises(ParameterError, match="record-groups"):
            parse_record_groups(text)
    assert parse_record_groups("1:0.5:1e-5, 3:1.5:0") == (RecordGroup(1, 0.5, 1e-5), RecordGroup(3, 1.5, 0.0))


def test_a_table_survives_save_and_load_and_an_edited_group_is_refused(tmp_path):
    params = ShardGroupParams(9, NonPrivate(), [(1, 0.5, 1e-5), (2, 1.0, 1e-5)])
    table = darrm.solve(params, PRIOR)
    path = tmp_path / "g.json"
    darrm.save(table, path)
    loaded = darrm.load(path)
    assert loaded.params == params and np.array_equal(loaded.gamma, table.gamma)
    assert params.query_budget == (1.0, 1e-5)
    # the same γ claimed for records copied three times does not certify
    assert not darrm.certify(table.gamma, ShardGroupParams(9, NonPrivate(), [(1, 0.5, 1e-5), (3, 1.0, 1e-5)])).certified


@pytest.mark.parametrize("randomness", ["fresh", "fixed"])
def test_a_labelling_session_charges_the_bound_every_record_meets(randomness):
    """A session over a record-groups table charges what holds for every record: the composition of
    the pair every record meets (fresh members) or the composition of the most copies' members
    (fixed), the same as the accountant's."""
    from darrm.accounting import LabellingSession, QueryAccountant
    from darrm.accounting.queries import record_group_bounds

    table = darrm.solve(ShardGroupParams(7, ApproxDP(0.5, 1e-5), [(1, 0.5, 1e-5), (2, 1.0, 1e-5)]), PRIOR)
    session = LabellingSession(table, member_randomness=randomness, budget_epsilon=50.0, delta=1e-3)
    session.label(np.zeros((2, 7), dtype=int))
    assert session.queries == 2
    acc = QueryAccountant(randomness)
    acc.step(table, 2)
    assert session.get_epsilon() == pytest.approx(acc.get_epsilon(1e-3), rel=1e-6)  # its own PLD grid
    per = record_group_bounds(table, 2, delta_total=1e-3, member_randomness=randomness)
    assert max(b.epsilon for b in per) <= session.get_epsilon() + 1e-3  # PLD intervals apart


def test_large_K_is_certified_optimal_with_few_rows():
    """Linear in K: 501 teachers, three record groups, proven optimal with a small working set."""
    params = ShardGroupParams(501, NonPrivate(), [(1, 0.1, 1e-6), (2, 0.2, 1e-6), (3, 0.3, 1e-6)])
    table = solve_gamma_opt_shard_groups(params, PRIOR)
    assert table.status == "optimal" and table.report.optimality_gap <= table.report.gap_tol
    assert darrm.certify(table.gamma, params).certified
    assert table.info["lp_rows"] < table.info["multisets"]  # constraint generation used a fraction of the rows
