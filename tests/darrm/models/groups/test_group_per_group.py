"""The per-group form γ(l_1, …, l_G): certificate against a 40-digit brute force, full LP against
constraint generation, the nesting per group ≤ γ(L) ≤ all at the worst budget, the objective
against a direct evaluation, γ files and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import darrm
from darrm.errors import GammaFileError, ParameterError
from darrm.models.groups.certificate import certify_groups
from darrm.models.groups.params import GroupParams
from darrm.models.groups.per_group import (
    joint_expected_error,
    joint_from_upper,
    joint_margins,
    joint_of_total,
    upper_mask,
    validate_joint_gamma,
    variables,
)
from darrm.models.groups.solver import solve_gamma_opt_groups
from darrm.solver.options import SolveOptions

PRIOR = darrm.IIDPrior(0.75)

PARAMS = [
    GroupParams(((1, 0.3, 1e-3), (2, 0.8, 0.0)), 0.9, 2e-3, "per-group"),
    GroupParams(((2, 0.2, 1e-4), (1, 1.1, 1e-2)), 1.2, 1e-2, "per-group"),
    GroupParams(((1, 0.1, 0.0), (1, 0.5, 1e-3), (1, 0.9, 0.0)), 1.0, 1e-3, "per-group"),
    GroupParams(((2, 0.3, 0.0), (3, 0.8, 0.0)), 1.0, 0.0, "per-group"),
]


def _tables(params: GroupParams) -> list[np.ndarray]:
    """Random symmetric per-group tables, one that is not a function of L, and γ ≡ 1, γ ≡ 0."""
    rng = np.random.default_rng(params.K)
    n = variables(params)
    out = [joint_from_upper(rng.uniform(0, 1, n), params) for _ in range(3)]
    shape = params.gamma_shape
    return out + [np.ones(shape), np.zeros(shape)]


def test_the_variables_are_half_the_count_vectors_and_the_mirror_is_the_joint_reflection():
    """⌈Π_g(K_g + 1)/2⌉ variables on {Σ l_g ≥ mid}; every other cell is its reflection's."""
    for params in PARAMS:
        n = math.prod(params.gamma_shape)
        assert variables(params) == math.ceil(n / 2) == int(upper_mask(params).sum())
        g = _tables(params)[0]
        for l in itertools.product(*[range(s) for s in params.gamma_shape]):
            mirror = tuple(gr.size - x for gr, x in zip(params.groups, l, strict=True))
            assert g[l] == g[mirror]


@pytest.mark.parametrize("params", PARAMS)
def test_certificate_bounds_the_exact_worst_violation_tightly(params, brute):
    """v̂ (sweep and exhaustive) ≥ the exact maximum over every ordered member assignment, both
    outputs evaluated directly, and exceeds it by < 1e-13; the verdicts agree."""
    for gamma in _tables(params):
        exact = brute.violation(gamma, params)
        for exhaustive in (False, True):
            cert = certify_groups(gamma, params, exhaustive=exhaustive)
            assert cert.violation >= exact
            assert cert.violation - exact < 1e-13
            assert cert.certified == (exact <= 0) or abs(exact) < 1e-13


def test_a_per_group_table_that_is_too_generous_is_refused_by_both(brute):
    """γ ≡ 1 (plain majority) and the solved table raised by 5 % violate exactly and are refused."""
    params = PARAMS[0]
    table = solve_gamma_opt_groups(params, PRIOR)
    broken = np.minimum(1.0, table.gamma * 1.05)
    for g in (np.ones(params.gamma_shape), broken):
        assert brute.violation(g, params) > 1e-6
        assert not certify_groups(g, params).certified
        assert not certify_groups(g, params, exhaustive=True).certified
    assert brute.violation(table.gamma, params) <= 0


def test_full_lp_equals_constraint_generation():
    params = GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3, "per-group")
    full = solve_gamma_opt_groups(params, PRIOR, options=SolveOptions(method="full"))
    cg = solve_gamma_opt_groups(params, PRIOR, options=SolveOptions(method="cutting-planes", cuts_per_round=4))
    assert full.info["method"] == "groups-full-lp" and cg.info["method"] == "groups-cutting-planes"
    assert cg.info["rounds"] > 1
    assert full.status == cg.status == "optimal"
    assert abs(full.objective - cg.objective) <= 1e-9
    assert full.gamma.shape == cg.gamma.shape == (3, 4)


@pytest.mark.parametrize("K,Delta", [(5, 1e-4), (7, 0.0)])
def test_one_group_per_group_is_gamma_of_L(K, Delta):
    """G = 1: l_1 = L, so the per-group LP is the γ(L) LP."""
    total = GroupParams(((K, 0.25, Delta),), 0.5, 2e-4)
    per = GroupParams(((K, 0.25, Delta),), 0.5, 2e-4, "per-group")
    a, b = solve_gamma_opt_groups(total, PRIOR), solve_gamma_opt_groups(per, PRIOR)
    assert abs(a.objective - b.objective) <= 1e-12
    np.testing.assert_allclose(b.gamma, a.gamma, rtol=0, atol=1e-12)


def test_issue_26_reference_setting_is_nested():
    """K = 11: 5 members at (0.1, 1e-5), 6 at (0.3, 1e-5), target (0.5, 1e-4), i.i.d. 0.75: the
    per-group optimum ≤ γ_opt(L) ≤ every member at the worst budget (the LPs are nested), and the
    γ(L) table read per group is a feasible per-group table with the same error."""
    groups = ((5, 0.1, 1e-5), (6, 0.3, 1e-5))
    per = darrm.solve(GroupParams(groups, 0.5, 1e-4, "per-group"), PRIOR)
    total = darrm.solve(GroupParams(groups, 0.5, 1e-4), PRIOR)
    worst = darrm.solve(darrm.PrivacyParams(K=11, m=0.5 / 0.3, eps=0.3, member_delta=1e-5, delta=1e-4), PRIOR)
    assert per.status == total.status == worst.status == "optimal"
    gaps = per.info["optimality_gap"] + total.info["optimality_gap"] + worst.info["optimality_gap"]
    assert per.objective <= total.objective + gaps and total.objective <= worst.objective + gaps
    # the measured values (issue 26: ≤ 0.070 / 0.100 / 0.128)
    assert abs(per.objective - 0.07012) < 5e-6
    assert abs(total.objective - 0.10017) < 5e-6
    assert abs(worst.objective - 0.12773) < 5e-6
    embedded = joint_of_total(total.gamma, per.params)
    assert certify_groups(embedded, per.params).certified
    assert abs(joint_expected_error(embedded, per.params, PRIOR) - total.objective) <= 1e-12


def _direct_error(gamma: np.ndarray, params: GroupParams, means: np.ndarray) -> float:
    """|Pr[A = 1] − Pr[majority = 1]| for members voting 1 with probabilities ``means``, by
    enumerating every vote vector (no pmf algebra of the package)."""
    mid = (params.K + 1) // 2
    bounds = np.cumsum([0] + [g.size for g in params.groups])
    out = 0.0
    for votes in itertools.product((0, 1), repeat=params.K):
        v = np.array(votes)
        pr = float(np.prod(np.where(v == 1, means, 1 - means)))
        l = tuple(int(v[bounds[i]:bounds[i + 1]].sum()) for i in range(len(params.groups)))
        g = gamma[l]
        w = g * (sum(l) >= mid) + 0.5 * (1 - g)
        out += pr * (w - (sum(l) >= mid))
    return abs(out)


def test_objective_is_the_expected_error_by_enumeration():
    """The per-group objective equals the error summed over every vote vector, for the i.i.d.
    prior (through the exchangeable split h(l)) and for independent means."""
    params = GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3, "per-group")
    g = _tables(params)[1]
    assert abs(joint_expected_error(g, params, PRIOR) - _direct_error(g, params, np.full(5, 0.75))) < 1e-14
    means = np.array([0.55, 0.9, 0.6, 0.7, 0.8])
    ind = darrm.IndependentPrior(tuple(means))
    assert abs(joint_expected_error(g, params, ind) - _direct_error(g, params, means)) < 1e-14


def test_priors_without_a_per_group_split_are_refused():
    params = PARAMS[0]

    class Odd(darrm.IIDPrior):
        kind = "odd"

    with pytest.raises(ParameterError, match="prior"):
        joint_margins(params, Odd(0.75))


def test_bad_per_group_tables_and_forms_are_refused():
    params = PARAMS[0]
    with pytest.raises(ParameterError, match="gamma_form"):
        GroupParams(((1, 0.3, 1e-3), (2, 0.8, 0.0)), 0.9, 2e-3, "joint")
    with pytest.raises(ParameterError, match="gamma.*shape"):
        validate_joint_gamma(np.ones(params.K + 1), params)
    g = _tables(params)[0]
    g[0, 0] = 1.0 - g[0, 0] / 2
    with pytest.raises(ParameterError, match="joint reflection"):
        validate_joint_gamma(g, params)
    with pytest.raises(ParameterError, match="gamma"):
        darrm.certify(np.ones(params.K + 1), params)


def test_saved_and_loaded_bit_for_bit_and_a_tampered_table_is_refused(tmp_path):
    """save/load round trip (re-certified on load); a γ(L) file of the same groups stays as it was."""
    import json

    params = GroupParams(((1, 0.1, 0.0), (2, 0.5, 1e-4), (2, 1.0, 1e-4)), 1.0, 1e-3, "per-group")
    table = darrm.solve(params, PRIOR)
    path = tmp_path / "g.json"
    darrm.save(table, path)
    back = darrm.load(path)
    assert back.params == params and back.params.per_group
    assert np.array_equal(back.gamma, table.gamma) and back.gamma.shape == (2, 3, 3)
    d = json.loads(path.read_text())
    assert d["gamma_form"] == "per-group" and isinstance(d["gamma"][0][0], list)
    d["gamma"] = np.minimum(1.0, np.asarray(d["gamma"]) * 1.2).tolist()
    from darrm.gamma_file import checksum

    d["checksum"] = checksum(d)
    path.write_text(json.dumps(d))
    with pytest.raises(GammaFileError, match="NOT"):
        darrm.load(path)
    total = darrm.solve(GroupParams(params.groups, 1.0, 1e-3), PRIOR)
    darrm.save(total, tmp_path / "t.json")
    assert "gamma_form" not in json.loads((tmp_path / "t.json").read_text())
