"""Total-budget design for members on disjoint shards: never worse than binary GNMax at equal total,
and its charged total re-checked independently.

The independent check enumerates the worst pairs itself (non-private members: the vote counts
(L, L + 1), outputs Bern(w_L) against Bern(w_{L+1}), both outputs and directions), checks each
against the recorded μ-GDP curve in mpmath (Φ(Φ⁻¹(x) + μ) ≥ y), composes √Q·μ-GDP by the analytic
Gaussian formula in mpmath, and composes the enumerated pairs with dp_accounting directly (its
optimistic PLD, a lower bound on their exact composition, must lie below the budget too).
GNMax is written from its definition: the margin L − K/2 plus N(0, s²), s = √Q/μ_total with μ_total
from the analytic Gaussian composition solved here by brentq.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from darrm.accounting.budget import design_for_budget
from darrm.budget.spec import TotalBudget
from darrm.mechanism import output_weights
from darrm.models.disjoint import DisjointParams, LocalRR, NonPrivate
from darrm.prior import IIDPrior


def gaussian_delta(eps: float, mu: float) -> float:
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def gnmax_error(K: int, Q: int, eps_total: float, delta_total: float, p: float) -> float:
    """Binary GNMax at equal total: its signed error against the members' majority."""
    mu_total = optimize.brentq(lambda m: gaussian_delta(eps_total, m) - delta_total, 1e-6, 50.0, xtol=1e-14)
    s = math.sqrt(Q) / mu_total
    ell = np.arange(K + 1)
    pmf = stats.binom.pmf(ell, K, p)
    release1 = stats.norm.cdf((ell - K / 2) / s)
    majority1 = (ell > K / 2).astype(float)
    return abs(float(np.sum(pmf * (release1 - majority1))))


def enumerated_points(gamma: np.ndarray) -> list[tuple[float, float]]:
    """(x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) for every pair of counts (L, L+1), both outputs and directions."""
    w = output_weights(gamma)
    pts = []
    for n in range(len(gamma) - 1):
        for a, b in ((w[n], w[n + 1]), (1 - w[n], 1 - w[n + 1])):
            pts += [(a, b), (b, a)]
    return pts


def independent_total_check(gamma: np.ndarray, total: dict, budget: TotalBudget, check_gdp_total) -> None:
    """Re-check the recorded total (``info["total_budget"]``) by the accountant it names
    (``check_gdp_total``: the conftest's 40-digit GDP check)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    from darrm.privacy.profile import upper_hull

    pts = np.array(enumerated_points(gamma))
    hx, hy = upper_hull(np.concatenate([pts[:, 0], [0.0, 1.0]]), np.concatenate([pts[:, 1], [0.0, 1.0]]))
    P, Qm = np.diff(np.concatenate([[0.0], hy])), np.diff(np.concatenate([[0.0], hx]))
    P[0] += hy[0]
    upper = {i: math.log(v) for i, v in enumerate(P) if v > 0}
    lower = {i: math.log(v) for i, v in enumerate(Qm) if v > 0}

    def composed(pessimistic: bool) -> float:
        # 1e-5: finer than the accountant's own grid, whose connect-the-dots pair is tighter than
        # dp_accounting's rounded-up one at the same interval
        one = pld.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=pessimistic,
                                                      value_discretization_interval=1e-5)
        return one.self_compose(budget.queries).get_epsilon_for_delta(budget.delta)

    # dp_accounting's optimistic PLD of the enumerated pairs: a lower bound on their exact composition
    lower_bound = composed(False)
    assert lower_bound <= budget.epsilon
    if total["accountant"] == "dominating-pair-pld":
        # the accountant's connect-the-dots total is bracketed by dp_accounting's rounded-down and
        # rounded-up PLDs of the same pairs (below the first it would be invalid)
        assert lower_bound <= total["composed_epsilon"] <= composed(True)
        return
    check_gdp_total(enumerated_points(gamma), total["target"]["mu"], budget)


POINTS = [  # (K, Q, ε_total, p)
    (11, 10, 1.0, 0.75),
    (11, 100, 4.0, 0.9),
    (31, 50, 2.0, 0.6),
    (31, 1000, 8.0, 0.75),
    (101, 100, 4.0, 0.75),
    (101, 100, 4.0, 0.9),
]


@pytest.mark.parametrize(("K", "Q", "eps_total", "p"), POINTS)
def test_designed_error_never_exceeds_binary_gnmax_at_equal_total_and_total_rechecks(K, Q, eps_total, p, budget_check):
    budget = TotalBudget(eps_total, 1e-5, Q)
    d = design_for_budget(DisjointParams(K, NonPrivate(), 1.0), budget, IIDPrior(p))
    t = d.table
    gn = gnmax_error(K, Q, eps_total, 1e-5, p)
    # GNMax's exact-γ scale is feasible up to the float64 rounding of its table (certified μ* within
    # ~1e-9 of 1/s) and the search's precision on 1/s (1e-8): a relative 1e-6 covers both
    assert t.objective <= gn * (1 + 1e-6)
    tb = t.info["total_budget"]
    assert tb["composed_epsilon"] <= eps_total
    independent_total_check(t.gamma, tb, budget, budget_check.check_gdp_total)


def test_the_independent_check_catches_a_deliberately_broken_target(budget_check):
    """A table whose recorded GDP target is too small: the certificate's μ and the enumeration both refuse it."""
    from darrm.accounting.budget.disjoint import Cloud
    from darrm.gamma import gamma_threshold

    K, budget = 31, TotalBudget(2.0, 1e-5, 50)
    g = gamma_threshold(K, 2.0)  # (1/2)-GDP: far above the budget's per-query μ
    mu_claimed = 0.5 * 0.9  # a target it does not meet
    assert Cloud(K, NonPrivate()).gdp_mu(g) > mu_claimed
    record = {"accountant": "gdp-vertex-certificate", "target": {"mu": mu_claimed}}
    with pytest.raises(AssertionError):
        independent_total_check(g, record, budget, budget_check.check_gdp_total)


def test_the_plain_majority_is_returned_when_it_fits():
    d = design_for_budget(DisjointParams(11, LocalRR(0.05), 1.0), TotalBudget(4.0, 1e-5, 10), IIDPrior(0.75))
    assert np.array_equal(d.table.gamma, np.ones(12))
    assert d.table.info["design"]["majority_fits"] and d.winner.family == "majority"
    assert d.table.info["total_budget"]["composed_epsilon"] <= 4.0


def test_a_member_model_without_a_total_budget_design_and_bad_arguments_are_refused_by_name():
    from darrm.errors import ParameterError

    with pytest.raises(ParameterError, match="^params:"):
        design_for_budget("K=11", TotalBudget(1.0, 1e-5, 10))
    with pytest.raises(ParameterError, match="^budget:"):
        design_for_budget(DisjointParams(11, NonPrivate(), 1.0), (1.0, 1e-5, 10))


def test_cli_solves_disjoint_members_for_a_total_budget_and_verify_rechecks_target_and_total(tmp_path, capsys):
    import json

    from darrm import cli

    out = tmp_path / "d.json"
    args = ["--no-progress", "solve", "--members", "disjoint", "--member-privacy", "nonprivate", "--K", "11",
            "--total-eps", "2", "--total-delta", "1e-5", "--queries", "100", "--prior", "iid:0.85",
            "--out", str(out), "--json"]
    assert cli.main(args) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["family"] == "budget" and rec["total_budget"]["epsilon_total_composed"] <= 2.0
    assert cli.main(["verify", str(out)]) == 0
    assert "total budget" in capsys.readouterr().out
    # the old refusal is gone, and the per-query target the budget replaces is refused by name
    assert cli.main(args[:-3] + ["--target-eps", "1"]) == 2
    assert "target-eps: does not apply with a total budget" in capsys.readouterr().err


#: one designed table of non-private members (K = 11), shared by the tests of its record and its session
BUDGET11 = TotalBudget(2.0, 1e-5, 100)


@pytest.fixture(scope="module")
def design11():
    return design_for_budget(DisjointParams(11, NonPrivate(), 1.0), BUDGET11, IIDPrior(0.85))


def test_a_table_whose_record_claims_a_smaller_target_or_total_is_refused(design11):
    import dataclasses

    import darrm

    verify_total_budget = darrm.verify_charged_total
    t = design11.table
    assert verify_total_budget(t) == t.info["total_budget"]["composed_epsilon"]
    tb = t.info["total_budget"]
    smaller_mu = {**tb, "target": {**tb["target"], "mu": tb["target"]["mu"] * 0.99}}
    with pytest.raises(darrm.CertificationError, match="not the recorded target"):
        verify_total_budget(dataclasses.replace(t, info={**t.info, "total_budget": smaller_mu}))
    over = {**tb, "composed_epsilon": 2.5}
    with pytest.raises(darrm.CertificationError, match="exceeds the budget"):
        verify_total_budget(dataclasses.replace(t, info={**t.info, "total_budget": over}))
    wrong = {**tb, "composed_epsilon": tb["composed_epsilon"] * 0.9}
    with pytest.raises(darrm.CertificationError, match="differs"):
        darrm.verify_charged_total(dataclasses.replace(t, info={**t.info, "total_budget": wrong}))


def test_the_session_charges_a_designed_table_its_own_certified_total(design11):
    """The session accepts the record it re-certifies: the Q queries a disjoint-members table was
    designed for fit the budget, charged the recorded total (the GDP certificate here, smaller than
    the PLD of the pair), and a record the table does not meet refuses the session."""
    import dataclasses

    import darrm
    from darrm.accounting import LabellingSession

    budget, t = BUDGET11, design11.table
    tb = t.info["total_budget"]
    s = LabellingSession(t, budget_epsilon=budget.epsilon, delta=budget.delta, rng=0)  # fresh: settled by the model
    assert s.epsilon_for(budget.queries) == tb["composed_epsilon"] <= budget.epsilon
    assert s.epsilon_for(budget.queries) <= darrm.accounting.composed_epsilon(
        t, budget.queries, delta_total=budget.delta, member_randomness="fresh").epsilon
    assert s.remaining_queries() >= budget.queries
    s.label(np.ones((budget.queries, 11), dtype=int))
    assert s.epsilon_spent == tb["composed_epsilon"]
    # past the design's count (or below its δ) only the accountant's composition applies
    assert s.epsilon_for(budget.queries + 1) == darrm.accounting.composed_epsilon(
        t, budget.queries + 1, delta_total=budget.delta, member_randomness="fresh").epsilon
    forged = dataclasses.replace(t, info={**t.info, "total_budget": {**tb, "composed_epsilon": tb["composed_epsilon"]
                                                                      * 0.5}})
    with pytest.raises(darrm.CertificationError, match="differs"):
        LabellingSession(forged, budget_epsilon=budget.epsilon, delta=budget.delta)
