"""The facade: ``import darrm`` gives the whole everyday API, pinned here."""

from __future__ import annotations

import inspect

import numpy as np

import darrm

PUBLIC = [
    "ApproxDP", "BetaPrior", "BudgetDesign", "Certificate", "CertificationError", "DarrmError", "DensityPrior",
    "DisjointParams", "FAMILIES", "GammaFileError", "GammaTable", "GroupParams", "IIDPrior", "IndependentPrior",
    "LocalRR", "MemberGroup", "MissingDependencyError", "NeighboringRelation", "NonPrivate", "PaperMCPrior",
    "ParameterError", "Prior", "PrivacyParams", "PrivacyProfile", "RecordGroup", "ShardGroupParams", "SolveError",
    "BudgetGroup", "WeightedShardParams",
    "SolveOptions", "SolveReport",
    "StopReason", "GroupBudgets", "TotalBudget", "WarmStart", "WorkerLostError", "__version__", "aggregate",
    "aggregate_counts",
    "certify",
    "certify_tight", "design_for_budget", "error_curve", "verify_charged_total",
    "expected_signed_error", "family_gamma", "gamma_const", "gamma_dsub", "gamma_sub", "load",
    "privacy_profile", "record_group_profiles", "save", "solve",
]


def test_all_is_pinned():
    assert sorted(darrm.__all__) == sorted(PUBLIC)


def test_every_public_name_resolves_and_callables_are_documented():
    for name in darrm.__all__:
        obj = getattr(darrm, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert (obj.__doc__ or "").strip(), f"darrm.{name} has no docstring"


def test_the_facade_serves_the_readme_workflow(tmp_path):
    """Solve, certify, save, load and label with facade names only, shared and disjoint."""
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)
    table = darrm.solve(params, darrm.IIDPrior(0.75))
    assert darrm.certify(table.gamma, params).certified and table.status == "optimal"
    assert table.report.stop is darrm.StopReason.GAP and table.report.converged
    darrm.save(table, tmp_path / "g.json")
    loaded = darrm.load(tmp_path / "g.json")
    assert np.array_equal(loaded.gamma, table.gamma)
    labels = darrm.aggregate(np.ones((4, 11), dtype=int), loaded, rng=0)
    assert labels.shape == (4,)
    sub = darrm.solve(params, family="sub")
    assert sub.family == "sub" and darrm.certify(sub.gamma, params).certified
    dj = darrm.solve(darrm.DisjointParams(101, darrm.NonPrivate(), 1.0, 1e-6))
    assert dj.params.neighboring is darrm.NeighboringRelation.ONE_MEMBER_CHANGES
    assert params.neighboring is darrm.NeighboringRelation.EVERY_MEMBER_SEES_RECORD


def test_solve_refuses_bad_arguments_naming_them():
    import pytest

    p = darrm.PrivacyParams(11, 3, 0.1, 1e-5)
    for kwargs, name in (({"family": "nope"}, "family"), ({"options": {"gap_tol": 1}}, "options")):
        with pytest.raises(darrm.ParameterError, match=name):
            darrm.solve(p, **kwargs)
    for field, bad in (("gap_tol", -1.0), ("max_rounds", 0), ("method", "x"), ("stabilize", 2.0),
                       ("lp_backend", "glpk"), ("cuts_per_round", True), ("accept_gap", "yes")):
        with pytest.raises(darrm.ParameterError, match=field):
            darrm.SolveOptions(**{field: bad})
    with pytest.raises(darrm.ParameterError, match="family"):
        darrm.solve(darrm.DisjointParams(11, darrm.NonPrivate(), 1.0), family="sub")
