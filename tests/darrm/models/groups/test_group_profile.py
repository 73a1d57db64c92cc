"""The grouped privacy profile (both γ forms) against the 40-digit brute force over every member
assignment, the exhaustive and the factorised cloud agreeing, and a profile that knows a broken table."""

from __future__ import annotations

import numpy as np
import pytest

import darrm
from darrm.errors import ParameterError
from darrm.models.groups.params import GroupParams
from darrm.models.groups.per_group import joint_from_upper, variables
from darrm.models.profile import privacy_profile

PRIOR = darrm.IIDPrior(0.75)
EPS = [0.0, 0.1, 0.3, 0.5, 0.8, 1.2, 2.0, 4.0]

PARAMS = [
    GroupParams(((1, 0.3, 1e-3), (2, 0.8, 0.0)), 0.9, 2e-3),
    GroupParams(((1, 0.3, 1e-3), (2, 0.8, 0.0)), 0.9, 2e-3, "per-group"),
    GroupParams(((2, 0.2, 1e-4), (1, 1.1, 1e-2)), 1.2, 1e-2, "per-group"),
    GroupParams(((1, 0.1, 0.0), (1, 0.5, 1e-3), (1, 0.9, 0.0)), 1.0, 1e-3, "per-group"),
]


def _table(params: GroupParams) -> np.ndarray:
    rng = np.random.default_rng(params.K + len(params.groups))
    if params.per_group:
        return joint_from_upper(rng.uniform(0, 1, variables(params)), params)
    up = rng.uniform(0, 1, (params.K + 1) // 2)
    return np.concatenate([up[::-1], up])


@pytest.mark.parametrize("params", PARAMS)
def test_profile_is_an_upper_bound_tight_to_1e_13(params, brute):
    """δ(ε′) ≥ the exact profile over every ordered member assignment (rigorous) and within 1e-13
    of it, at every ε′ of a grid, by the exhaustive cloud and by the factorised sweep."""
    g = _table(params)
    exact = brute.profile(g, params, EPS)
    for method in ("direct", "sweep"):
        prof = privacy_profile(g, params, method=method)
        assert prof.model == "groups"
        got = prof.delta(np.array(EPS))
        for e, x, y in zip(EPS, exact, got, strict=True):
            assert y >= x, (method, e)
            assert y - x < 1e-13, (method, e)


def test_the_solved_tables_profile_meets_its_target_and_gamma_one_does_not(brute):
    """The certified per-group table's profile at the target ε is ≤ the target δ; plain majority
    (γ ≡ 1) leaks more, and its profile says so, as the brute force does."""
    params = PARAMS[1]
    table = darrm.solve(params, PRIOR)
    prof = privacy_profile(table)
    assert prof.delta(params.target_eps) <= params.target_delta + 1e-15
    ones = np.ones(params.gamma_shape)
    bad = privacy_profile(ones, params).delta(params.target_eps)
    assert bad > params.target_delta + 1e-3
    assert abs(bad - float(brute.profile(ones, params, [params.target_eps])[0])) < 1e-13


def test_profile_refuses_a_table_of_the_other_form():
    with pytest.raises(ParameterError, match="gamma"):
        privacy_profile(np.ones(PARAMS[1].K + 1), PARAMS[1])


def test_totals_over_queries_compose_the_grouped_profile():
    """One query at the target δ composes to at most the target ε (the pair dominates the certified
    release; PLD discretisation 1e-4 on top), and ten queries to a finite total below 10× the target."""
    from darrm.accounting.queries import composed_epsilon

    params = GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3, "per-group")
    table = darrm.solve(params, PRIOR)
    one = composed_epsilon(table, 1, delta_total=params.target_delta, member_randomness="fresh")
    assert one.epsilon <= params.target_eps + 1e-3
    ten = composed_epsilon(table, 10, delta_total=1e-2, member_randomness="fresh")
    assert one.epsilon < ten.epsilon < 10 * params.target_eps


def test_fixed_grouped_members_compose_their_own_budgets():
    """Fixed members: the heterogeneous composition of all K members' (ε_g, Δ_g), for any number of
    queries: at most basic composition Σ K_g ε_g (at δ ≥ Σ K_g Δ_g), at least the exact optimal
    composition of K members at the smallest budget, and for one group within K·1e-4 of the exact
    homogeneous optimum; ε → δ is the inverse within the grid."""
    from darrm.accounting.composition import optimal_homogeneous_epsilon
    from darrm.accounting.queries import bound_name, fixed_members_bound

    params = GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3)
    table = darrm.solve(params, PRIOR)
    b = fixed_members_bound(table, delta_total=1e-2)
    assert b.bound == bound_name("fixed", table) == "members-groups-composition"
    assert optimal_homogeneous_epsilon(0.2, 1e-4, 5, 1e-2) <= b.epsilon <= 2 * 0.2 + 3 * 0.6
    back = fixed_members_bound(table, epsilon_total=b.epsilon)
    assert back.delta <= 1e-2 + 1e-9
    one = darrm.solve(GroupParams(((5, 0.6, 1e-4),), 0.8, 1e-3), PRIOR)
    exact = optimal_homogeneous_epsilon(0.6, 1e-4, 5, 1e-2)
    assert exact <= fixed_members_bound(one, delta_total=1e-2).epsilon <= exact + 5 * 1e-4
