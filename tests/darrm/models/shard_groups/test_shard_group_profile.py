"""Each record group's privacy profile against the 40-digit brute force over every ordered
configuration (tests/darrm/models/shard_groups/conftest.py), the profile every record meets, and a profile that
knows a table solved for too few copies."""

from __future__ import annotations

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.gamma import symmetric_from_upper
from darrm.models.disjoint import ApproxDP, LocalRR, NonPrivate
from darrm.models.profile import privacy_profile
from darrm.models.shard_groups import ShardGroupParams, record_group_profiles, solve_gamma_opt_shard_groups
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior

PRIOR = IIDPrior(0.75)
EPS = [0.0, 0.2, 0.4, 0.9, 1.5, 3.0]

CASES = [
    ShardGroupParams(5, NonPrivate(), [(1, 0.5, 1e-4), (3, 2.0, 1e-3)]),
    ShardGroupParams(5, ApproxDP(0.3, 1e-3), [(1, 0.4, 1e-3), (2, 0.9, 2e-3)]),
    ShardGroupParams(7, LocalRR(1.0), [(2, 0.8, 0.0), (3, 1.5, 1e-5)]),
]


def _random_gamma(params: ShardGroupParams) -> np.ndarray:
    rng = np.random.default_rng(params.K + len(params.groups))
    return symmetric_from_upper(rng.uniform(0, 1, (params.K + 1) // 2), params.K)


@pytest.mark.parametrize("params", CASES, ids=["nonprivate", "approx-dp", "rr"])
def test_each_group_profile_is_an_upper_bound_tight_to_1e_13(params, brute):
    """δ_g(ε′) ≥ the exact profile of group g's records over every ordered configuration (rigorous)
    and within 1e-13 of it, at every ε′ of a grid; the profile every record meets is their maximum."""
    g = _random_gamma(params)
    exact = brute.profile(g, params, EPS)
    profs = record_group_profiles(g, params)
    assert len(profs) == len(params.groups) and all(p.model == "shard-groups" for p in profs)
    for gi, prof in enumerate(profs):
        got = prof.delta(np.array(EPS))
        for e, x, y in zip(EPS, exact[gi], got, strict=True):
            assert y >= x, (gi, e)
            assert y - x < 1e-13, (gi, e)
    every = privacy_profile(g, params).delta(np.array(EPS))
    for j, e in enumerate(EPS):
        worst = max(exact[gi][j] for gi in range(len(params.groups)))
        assert worst <= every[j] < worst + 1e-13, e


@pytest.mark.parametrize("params", CASES[1:], ids=["approx-dp", "rr"])
def test_a_certified_tables_group_profiles_meet_their_own_targets(params):
    """Each group's profile at its ε_g is at most δ_g (the table is certified for every group), and
    a group with a larger target is not held to a smaller one's."""
    table = solve_gamma_opt_shard_groups(params, PRIOR)
    for grp, prof in zip(params.groups, record_group_profiles(table), strict=True):
        assert prof.delta(grp.target_eps) <= grp.target_delta + 1e-15
    small, large = sorted(params.groups, key=lambda gr: gr.target_eps)[:2]
    every = privacy_profile(table)
    assert every.delta(small.target_eps) > small.target_delta  # the looser group leaks more at ε_small


def test_a_table_solved_for_one_copy_leaks_past_the_target_of_three(brute):
    """γ_opt for records in one shard, used when records sit in three: the three-copy group's profile
    exceeds its target at ε_g, by the brute force's amount (a broken deployment is caught)."""
    one = ShardGroupParams(5, NonPrivate(), [(1, 1.0, 1e-4)])
    both = ShardGroupParams(5, NonPrivate(), [(1, 1.0, 1e-4), (3, 1.0, 1e-4)])
    gamma = solve_gamma_opt_shard_groups(one, PRIOR).gamma
    p1, p3 = record_group_profiles(gamma, both)
    assert p1.delta(1.0) <= 1e-4 + 1e-15
    exact = float(brute.profile(gamma, both, [1.0])[1][0])
    assert exact > 1e-3
    assert exact <= p3.delta(1.0) < exact + 1e-13


def test_record_group_profiles_refuse_other_parameters():
    with pytest.raises(ParameterError, match="params"):
        record_group_profiles(np.ones(6), PrivacyParams(5, 3, 0.1, 1e-5))
    with pytest.raises(ParameterError, match="g"):
        CASES[0].record_group_params(2)
    with pytest.raises(ParameterError, match="gamma"):
        record_group_profiles(np.ones(4), CASES[0])
