"""γ_opt(L) for grouped members: agreement with today's γ_opt, nesting, full LP vs constraint generation."""

from __future__ import annotations

import numpy as np
import pytest

import darrm
from darrm.models.groups.certificate import certify_groups
from darrm.models.groups.params import GroupParams
from darrm.models.groups.solver import solve_gamma_opt_groups
from darrm.solver.options import SolveOptions

PRIOR = darrm.IIDPrior(0.75)


@pytest.mark.parametrize("K,Delta", [(5, 1e-4), (7, 0.0)])
def test_one_group_reproduces_todays_gamma_opt(K, Delta):
    """G = 1 is Problem 1.1 with the target (mε, δ): the same LP, the same certified optimum."""
    shared = darrm.PrivacyParams(K=K, m=2.0, eps=0.25, member_delta=Delta, delta=2e-4)
    grouped = GroupParams(((K, 0.25, Delta),), 0.5, 2e-4)
    ref = darrm.solve(shared, PRIOR, options=SolveOptions(method="full"))
    got = darrm.solve(grouped, PRIOR)
    assert got.status == "optimal" and ref.status == "optimal"
    assert abs(got.objective - ref.objective) <= 1e-12
    np.testing.assert_allclose(got.gamma, ref.gamma, rtol=0, atol=1e-12)
    # and the certificates agree on a table neither solved for
    g = np.linspace(1, 0.2, K + 1)
    g = np.minimum(g, g[::-1])
    assert abs(certify_groups(g, grouped).violation - darrm.certify(g, shared).violation) <= 1e-15


def test_groups_are_never_worse_than_all_at_the_worst_budget_nor_better_than_all_at_the_best():
    """Each group's region lies inside the worst budget's region and contains the best's, so the
    feasible sets are nested and so are the optima (within the proven gaps)."""
    grouped = GroupParams(((3, 0.1, 1e-5), (4, 0.3, 1e-5)), 0.5, 1e-4)
    worst = darrm.PrivacyParams(K=7, m=0.5 / 0.3, eps=0.3, member_delta=1e-5, delta=1e-4)
    best = darrm.PrivacyParams(K=7, m=5.0, eps=0.1, member_delta=1e-5, delta=1e-4)
    g, w, b = (darrm.solve(p, PRIOR) for p in (grouped, worst, best))
    tol = 2e-9  # the three proven gaps (gap_tol 1e-9 each on the two that bracket)
    assert b.objective - tol <= g.objective <= w.objective + tol
    assert g.objective < w.objective - 1e-3  # and strictly better here: the point of groups
    # the worst budget's table is private for the groups (the nesting itself), checked rigorously
    assert certify_groups(w.gamma, grouped).certified


def test_full_lp_equals_constraint_generation():
    params = GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3)
    full = solve_gamma_opt_groups(params, PRIOR, options=SolveOptions(method="full"))
    cg = solve_gamma_opt_groups(params, PRIOR, options=SolveOptions(method="cutting-planes", cuts_per_round=8))
    assert full.info["method"] == "groups-full-lp" and cg.info["method"] == "groups-cutting-planes"
    assert cg.info["rounds"] > 1
    assert abs(full.objective - cg.objective) <= 1e-9
    assert full.status == cg.status == "optimal"


def test_three_groups_certified_and_saved(tmp_path):
    """G = 3: solved, certified by the dispatching certificate, saved and reloaded (re-certified)."""
    params = GroupParams(((1, 0.1, 0.0), (2, 0.5, 1e-4), (2, 1.0, 1e-4)), 1.0, 1e-3)
    table = darrm.solve(params, PRIOR)
    assert darrm.certify(table.gamma, params).certified
    darrm.save(table, tmp_path / "g.json")
    loaded = darrm.load(tmp_path / "g.json")
    assert loaded.params == params and np.array_equal(loaded.gamma, table.gamma)
    assert loaded.status == table.status


def test_requests_the_grouped_solver_would_ignore_are_refused(tmp_path):
    params = GroupParams(((2, 0.2, 0.0), (3, 0.6, 0.0)), 0.8, 0.0)
    with pytest.raises(darrm.ParameterError, match="checkpoint"):
        darrm.solve(params, checkpoint=tmp_path / "c")
    with pytest.raises(darrm.ParameterError, match="screen"):
        darrm.solve(params, options=SolveOptions(screen=False))
    with pytest.raises(darrm.ParameterError, match="family"):
        darrm.solve(params, family="sub")


def test_per_group_cuts_scale_with_the_variables_and_reach_the_same_optimum():
    """γ(l_1, …, l_G) adds cuts_per_round per (K + 1)/2 LP variables (darrm.models.groups.solver.cuts_per_round);
    the optimum is the one about 256 cuts reach (cuts_per_round=37, × 7; both certified, each within its
    proven gap), in no more rounds; γ(L) keeps the flat count."""
    from darrm.models.groups import solver

    params = darrm.GroupParams(((3, 0.1, 1e-5), (3, 0.2, 1e-5), (3, 0.3, 1e-5)), 0.5, 1e-4, "per-group")
    opts = darrm.SolveOptions(method="cutting-planes")
    assert solver.cuts_per_round(params, opts) == 256 * 7  # 32 variables, (K + 1)/2 = 5
    total = darrm.GroupParams(params.groups, 0.5, 1e-4)
    assert solver.cuts_per_round(total, opts) == 256
    new = darrm.solve(params, darrm.IIDPrior(0.75), options=opts)
    flat = darrm.SolveOptions(method="cutting-planes", cuts_per_round=37)  # 37 × 7 = 259: about the flat 256
    assert solver.cuts_per_round(params, flat) == 259
    old = darrm.solve(params, darrm.IIDPrior(0.75), options=flat)
    assert new.status == old.status == "optimal"
    assert abs(new.objective - old.objective) <= new.info["optimality_gap"] + old.info["optimality_gap"]
    assert new.info["rounds"] <= old.info["rounds"]
