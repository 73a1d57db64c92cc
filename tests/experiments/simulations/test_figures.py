"""The simulation figures' numeric claims (quick configurations, plus small direct solves)."""

import dataclasses

import numpy as np
import pytest

import darrm
from darrm import IIDPrior, PrivacyParams, certify, certify_tight, error_curve, gamma_sub
from darrm.experiments.simulations.compute import compute_figure
from darrm.experiments.simulations.expected_error import product_uniform_error_mc
from darrm.experiments.simulations.figures import FIGURES, figure2
from darrm.experiments.simulations.table3 import PAPER_TABLE3, table3


@pytest.fixture(scope="module")
def quick():
    return {res.config.key: res for res in (compute_figure(build(True)) for build in FIGURES.values())}


def test_every_gamma_of_every_figure_is_certified(quick):
    for res in quick.values():
        for pr in res.panels:
            for c in pr.curves:
                assert c.certified, (res.config.key, pr.label, c.name, c.violation)
                assert c.violation <= 0.0  # the rigorous bound, never widened
                assert np.all((c.gamma >= 0) & (c.gamma <= 1)) and np.array_equal(c.gamma, c.gamma[::-1])


def test_gamma_opt_objective_is_at_most_every_certified_baseline(quick):
    """Each baseline is feasible (certified), so the LP optimum cannot be worse under its prior."""
    for key, res in quick.items():
        for pr in res.panels:
            for opt in (c for c in pr.curves if c.family == "opt"):
                mu = next(cv.prior_mean for panel in res.config.panels if panel.label == pr.label
                          for cv in panel.curves if cv.name == opt.name)
                for base in pr.curves:
                    assert opt.objectives[mu] <= base.objectives[mu] + 1e-9, (key, pr.label, opt.name, base.name)


def test_m1_gamma_opt_equals_gamma_sub(quick):
    for key in ("figure2", "figure7"):
        pr = next(p for p in quick[key].panels if p.params.m == 1)
        assert np.max(np.abs(pr.curve("opt").gamma - pr.curve("Sub").gamma)) < 1e-7
        assert np.allclose(pr.curve("Sub").gamma, np.abs(11 - 2 * np.arange(12)) / 11)


def test_pure_dp_gamma_opt_is_one_exactly_from_m_6_at_K_11():
    for m, is_one in ((5, False), (6, True)):
        p = PrivacyParams(11, m, 0.1, 0.0, delta=0.0)
        g = darrm.solve(p, IIDPrior(0.75), progress=False).gamma
        assert bool(np.min(g) > 1 - 1e-9) is is_one
        # independent check: the all-ones γ (exact majority) is mε-DP iff m ≥ 6 (tight at m = 6:
        # certified after a 1 − O(ρ) scale)
        _, c, scale = certify_tight(np.ones(12), p)
        assert c.certified is is_one and scale >= 1 - 1e-10


def test_pure_dp_exact_majority_threshold_at_K_101():
    """γ ≡ 1 is infeasible at m = 40 (by 4.8e-8 in probability, far above rounding) and tight-feasible at m = 51."""
    p40, p51 = (PrivacyParams(101, m, 0.1, 0.0, delta=0.0) for m in (40, 51))
    assert certify(np.ones(102), p40).violation > 1e-8
    _, c, scale = certify_tight(np.ones(102), p51)
    assert c.certified and scale >= 1 - 1e-10


def test_figure7_and_8_dsub_and_opt_have_zero_error_from_half_K(quick):
    for key in ("figure7", "figure8"):
        for pr in quick[key].panels:
            K, m = pr.params.K, pr.params.m
            for name in ("opt", "DSub"):
                if m >= (K + 1) / 2:
                    assert np.max(pr.error_curves[name]) < 1e-9
            if m < (K + 1) / 2:
                assert np.max(pr.error_curves["DSub"]) > 1e-3
            # Lemma B.11: γ_DSub ≥ γ_Sub pointwise ⇒ smaller error at every p
            assert np.all(pr.error_curves["DSub"] <= pr.error_curves["Sub"] + 1e-12)


def test_figure2_m3_gamma_opt_loses_to_gamma_sub_only_near_the_ends(quick):
    pr = next(p for p in quick["figure2"].panels if p.params.m == 3)
    p = np.array([0.01, 0.025, 0.975, 0.99, 0.1, 0.3, 0.7, 0.9])
    eo, es = error_curve(pr.curve("opt").gamma, p), error_curve(pr.curve("Sub").gamma, p)
    assert np.all(eo[:4] > es[:4]) and np.all(eo[4:] < es[4:])


def test_figure2_matches_the_spec_reference_table_within_monte_carlo_error():
    """spec §10: E_{p_i ~ U[0,1], K draws} from 20k samples (γ_opt there used μ = 0.745)."""
    ref = {"opt": (.1319, .0379, .0010, .0000), "Sub": (.1319, .0957, .0676, .0433),
           "const": (.1817, .1418, .1031, .0662)}
    res = compute_figure(dataclasses.replace(figure2(False), mc_samples=20_000))
    for j, pr in enumerate(res.panels):
        for name, vals in ref.items():
            e = pr.expected_value(name, "U[0,1]", "product-mc")
            tol = 4 * np.sqrt(2) * e.se + 5e-5 + (6e-4 if name == "opt" else 0.0)  # 2 MC errors, rounding, μ
            assert abs(e.value - vals[j]) <= tol, (pr.label, name, e.value, vals[j])


def test_figure2_pconst_matches_the_closed_values(quick):
    vals = [pr.curve("const").gamma[0] for pr in quick["figure2"].panels]
    assert np.round(vals, 4).tolist() == [0.0998, 0.2975][: len(vals)]


def test_figure6_exact_majority_is_already_private_with_delta_0_1(quick):
    pr = quick["figure6"].panels[0]
    assert pr.label == "M = 10"
    assert np.min(pr.curve("opt").gamma) > 1 - 1e-9
    assert certify(np.ones(36), pr.params).certified
    # but not with δ = 1-(1-Δ)^M (no δ′): the huge δ′ = 0.1 is what makes γ ≡ 1 feasible
    tight = PrivacyParams(35, pr.params.m, 0.1, 1e-5)
    assert not certify(np.ones(36), tight).certified
    assert np.array_equal(pr.curve("Sub").gamma, gamma_sub(35, 10))


def test_table3_reproduces_the_paper_to_four_decimals():
    rows = table3()
    for r in rows:
        for k in ("m", "tau", "lam", "eps_total", "delta"):
            assert f"{getattr(r, k):.4f}" == f"{PAPER_TABLE3[r.M][k]:.4f}", (r.M, k)
        assert r.active_term == 2
    assert np.round([r.p_const for r in rows], 3).tolist() == [0.590, 0.660, 0.701, 0.794]


def test_figure9_priors_pull_gamma_opt_apart(quick):
    pr = quick["figure9"].panels[0]
    u, p = pr.curve("opt-U"), pr.curve("opt-P")
    assert np.max(np.abs(u.gamma - p.gamma)) > 0.05
    assert u.objectives[0.75] <= p.objectives[0.75] + 1e-12
    assert p.objectives[0.85] <= u.objectives[0.85] + 1e-12
    # spec §10 (μ = 0.85, m = 3): γ_opt(0..5) = [1, 1, 1, .9357, .743, .4303]
    assert np.allclose(p.gamma[:6], [1, 1, 1, .9357, .743, .4303], atol=6e-4)


def test_figure9_half_panel_is_identically_zero_and_u01_panel_exact(quick):
    pr = quick["figure9"].panels[0]
    for c in pr.curves:
        assert pr.expected_value(c.name, "p=0.5").value == 0.0
        exact = pr.expected_value(c.name, "U[0,0.1]", "exact").value
        assert exact == pytest.approx(float(error_curve(c.gamma, np.array([0.05]))[0]), abs=0)
        mc, se = product_uniform_error_mc(c.gamma, 0.0, 0.1, samples=20_000, seed=2)
        assert abs(mc - exact) <= 5 * se + 1e-12
