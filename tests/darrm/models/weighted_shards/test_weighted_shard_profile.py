"""The budget groups' privacy profile (every record's) against the 40-digit brute force over every
changed member, vertex and end of every other member (:func:`brute_pairs`, no exchangeability
assumed), and against the certified per-group targets."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import darrm
from darrm.backends.executors import ProcessExecutor
from darrm.errors import ParameterError
from darrm.models.profile import privacy_profile
from darrm.models.weighted_shards import WeightedShardParams, lp_variables, table_form
from darrm.prior import IIDPrior

from .test_weighted_shard_certificate import CASES, IDS, brute_pairs

EPS = [0.0, 0.2, 0.5, 1.0, 2.0, 4.0]


def _random_table(params: WeightedShardParams, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(0, 1, int(lp_variables(params).size))
    return table_form(params, IIDPrior()).full(x)


def _exact(gamma: np.ndarray, params: WeightedShardParams, eps: list[float]) -> list[mpmath.mpf]:
    out = [mpmath.mpf(0)] * len(eps)
    for _, a1, b1 in brute_pairs(gamma, params):
        for pa, pb in ((a1, b1), (1 - a1, 1 - b1)):
            for k, e in enumerate(eps):
                s = mpmath.exp(mpmath.mpf(e))
                out[k] = max(out[k], pa - s * pb, pb - s * pa)
    return out


@pytest.mark.parametrize("params", CASES, ids=IDS)
def test_profile_is_an_upper_bound_tight_to_1e_12(params):
    gamma = _random_table(params, 5)
    prof = privacy_profile(gamma, params)
    exact = _exact(gamma, params, EPS)
    for e, d in zip(EPS, exact, strict=True):
        got = float(prof.delta(e))
        assert got >= float(d), (e, got, d)      # an upper bound: outward rounding, never below
        assert got <= float(d) + 1e-12, (e, got, d)  # and tight: the reduction visits the worst case


@pytest.mark.parametrize("params", CASES[:2], ids=IDS[:2])
def test_a_certified_table_meets_every_groups_target_on_its_profile(params):
    """The profile every record meets is the largest group's; at each group's own ε_g the profile of
    a certified table is within that group's δ_g only if every group with a smaller ε is too, so the
    check is at the loosest: δ(max_g ε_g) ≤ max_g δ_g."""
    table = darrm.solve(params)
    prof = privacy_profile(table)
    assert prof.model == "weighted-shards"
    assert prof.delta(max(g.target_eps for g in params.groups)) <= max(g.target_delta for g in params.groups)


def test_a_table_too_generous_for_its_groups_shows_on_the_profile():
    """γ ≡ 1 for nonprivate members releases the majority: its profile at ε_g is far above δ_g,
    as the brute force says (a broken table is caught by the profile, not only the certificate)."""
    params = CASES[0]
    ones = np.ones(tuple(g.size + 1 for g in params.groups))
    prof = privacy_profile(ones, params)
    exact = float(_exact(ones, params, [0.5])[0])
    assert exact > 0.1 and float(prof.delta(0.5)) >= exact


def test_the_profile_runs_in_this_process():
    params = CASES[0]
    with pytest.raises(ParameterError, match="executor"):
        privacy_profile(_random_table(params, 1), params, executor=ProcessExecutor(2))
