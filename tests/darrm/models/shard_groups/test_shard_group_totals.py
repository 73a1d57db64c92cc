"""Each record group's total over Q queries: the PLD of its own pair against the 40-digit product of
the pair, the one-query total against the group's target, the fixed-members bound against the exact
homogeneous composition of the r_g changed members, and the total every record meets."""

from __future__ import annotations

import numpy as np
import pytest

import darrm
from darrm.accounting.composition import optimal_homogeneous_epsilon
from darrm.accounting.queries import (
    BOUND_FIXED_COPIES,
    BOUND_FRESH,
    bound_name,
    composed_epsilon,
    fixed_members_bound,
    record_group_bounds,
)
from darrm.errors import ParameterError
from darrm.models.disjoint import ApproxDP, LocalRR
from darrm.models.shard_groups import ShardGroupParams, record_group_profiles
from darrm.prior import IIDPrior

PARAMS = ShardGroupParams(7, ApproxDP(0.3, 1e-5), [(1, 0.5, 1e-4), (3, 1.0, 1e-4)])


@pytest.fixture(scope="module")
def table():
    return darrm.solve(PARAMS, IIDPrior(0.75))


def test_one_query_total_is_each_groups_target(table):
    """Q = 1 at δ_total = δ_g: at most ε_g plus the PLD's one interval (the pair dominates the
    certified release of group g's records, whose profile meets (ε_g, δ_g))."""
    for grp, b in zip(PARAMS.groups, record_group_bounds(table, 1, delta_total=1e-4, member_randomness="fresh"),
                      strict=True):
        assert b.bound == BOUND_FRESH and b.queries == 1
        assert b.lower <= b.epsilon <= grp.target_eps + 1e-4


@pytest.mark.parametrize("Q", [2, 3])
def test_each_groups_total_brackets_the_exact_product_of_its_pair(table, Q, exact_product_delta):
    """The reported δ_total of group g lies between the optimistic and the pessimistic PLD around the
    exact Q-fold product of group g's pair (40 digits); the groups' totals differ."""
    pairs = [p.pair() for p in record_group_profiles(table)]
    for e in (0.5, 1.5):
        bounds = record_group_bounds(table, Q, epsilon_total=e, member_randomness="fresh",
                                     value_discretization_interval=1e-4)
        for (P, Qm), b in zip(pairs, bounds, strict=True):
            exact = exact_product_delta([(P, Qm)] * Q, e)
            assert b.lower <= exact * (1 + 1e-9) + 1e-14 and exact <= b.delta * (1 + 1e-9) + 1e-14, (e, b, exact)
        assert bounds[0].delta < bounds[1].delta  # one copy leaks less than three at these targets


def test_the_largest_group_total_is_below_the_union_pairs_composition(table):
    """Every record meets the largest group total; composing the pair every record meets (the union
    of the groups' clouds) is also valid and never smaller."""
    per = record_group_bounds(table, 20, delta_total=1e-3, member_randomness="fresh")
    union = composed_epsilon(table, 20, delta_total=1e-3, member_randomness="fresh")
    assert max(b.epsilon for b in per) <= union.epsilon + 1e-9


def test_fixed_members_compose_the_changed_copies(table):
    """Fixed members: group g's records are owed the exact composition of r_g (ε, Δ) members, any Q;
    the table's fixed bound is the largest r_g's."""
    per = record_group_bounds(table, 50, delta_total=1e-3, member_randomness="fixed")
    for grp, b in zip(PARAMS.groups, per, strict=True):
        assert b.bound == BOUND_FIXED_COPIES and b.queries == 50
        assert b.epsilon == optimal_homogeneous_epsilon(0.3, 1e-5, grp.copies, 1e-3)
    assert per[0].epsilon <= 0.3  # one copy: the member's own (0.3, 1e-5), read at δ = 1e-3
    whole = fixed_members_bound(table, delta_total=1e-3)
    assert whole.epsilon == per[1].epsilon and bound_name("fixed", table) == BOUND_FIXED_COPIES
    back = record_group_bounds(table, 50, epsilon_total=per[1].epsilon, member_randomness="fixed")
    assert back[1].delta <= 1e-3 + 1e-9


def test_record_group_bounds_refuse_other_tables_and_bad_arguments(table):
    plain = darrm.solve(darrm.PrivacyParams(5, 2, 0.4, 1e-3))
    with pytest.raises(ParameterError, match="table"):
        record_group_bounds(plain, 3, delta_total=1e-3, member_randomness="fresh")
    with pytest.raises(ParameterError, match="delta_total"):
        record_group_bounds(table, 3, member_randomness="fresh")
    with pytest.raises(ParameterError, match="member_randomness"):
        record_group_bounds(table, 3, delta_total=1e-3, member_randomness="sometimes")
    rr = darrm.solve(ShardGroupParams(5, LocalRR(1.0), [(2, 1.0, 1e-4)]), IIDPrior(0.75))
    with pytest.raises(ParameterError, match="member_randomness"):  # reports randomised afresh
        record_group_bounds(rr, 3, delta_total=1e-3, member_randomness="fixed")
    assert np.isfinite(record_group_bounds(rr, 3, delta_total=1e-3, member_randomness="fresh")[0].epsilon)
