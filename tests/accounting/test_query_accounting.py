"""Tight total budgets of DaRRM queries (darrm.accounting.queries), each claim against an independent
reference: the exact hockey-stick divergence of the product of the finite pairs (every tuple of
atoms, in mpmath), the profile itself, and Kairouz–Oh–Viswanath's optimal homogeneous bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

import darrm
from darrm import PrivacyParams
from darrm.accounting.composition import optimal_homogeneous_epsilon
from darrm.accounting.queries import (
    BOUND_CLOSED_FORM,
    BOUND_FIXED_DISJOINT,
    BOUND_FIXED_SHARED,
    BOUND_FRESH,
    QueryAccountant,
    composed_delta,
    composed_epsilon,
    fixed_members_bound,
    generic_epsilon,
    query_pld,
    table_profile,
)
from darrm.errors import ParameterError
from darrm.models.disjoint import ApproxDP, DisjointParams, LocalRR
from darrm.prior import IIDPrior
from darrm.table import GammaTable

PRIOR = IIDPrior(0.75)


@pytest.fixture(scope="module")
def small_tables():
    params = PrivacyParams(5, 2, 0.4, 1e-3)
    return {fam: darrm.solve(params, family=fam) for fam in ("opt", "sub", "const")}


def test_one_query_reproduces_the_profile(small_tables):
    for table in small_tables.values():
        prof = table_profile(table)
        for e in (0.0, 0.1, 0.4, 0.8, 1.5, 3.0):
            b = composed_delta(table, 1, epsilon_total=e, member_randomness="fresh",
                               value_discretization_interval=1e-4)
            assert b.lower <= prof.delta(e) * (1 + 1e-9) + 1e-15
            assert prof.delta(e) <= b.delta * (1 + 1e-9) + 1e-15
            if e > 0:  # each loss moved by at most one interval h: δ(ε + h) ≤ lower, upper ≤ δ(ε − h)
                assert b.delta <= prof.delta(e - 1e-4) * (1 + 1e-9) + 1e-15
                assert prof.delta(e + 1e-4) <= b.lower * (1 + 1e-9) + 1e-15


@pytest.mark.parametrize("Q", [2, 3])
def test_composing_queries_matches_the_exact_product_of_the_pairs(small_tables, Q, exact_product_delta):
    table = small_tables["opt"]
    pair = table_profile(table).pair()
    for e in (0.2, 0.8, 1.6):
        exact = exact_product_delta([pair] * Q, e)
        b = composed_delta(table, Q, epsilon_total=e, member_randomness="fresh", value_discretization_interval=1e-4)
        assert b.lower <= exact * (1 + 1e-9) + 1e-14 and exact <= b.delta * (1 + 1e-9) + 1e-14, (e, b, exact)


def test_heterogeneous_sequence_matches_the_exact_product(small_tables, exact_product_delta):
    opt, sub = small_tables["opt"], small_tables["sub"]
    p_opt, p_sub = table_profile(opt).pair(), table_profile(sub).pair()
    acc = QueryAccountant("fresh", value_discretization_interval=1e-4)
    acc.step(opt, 1)
    acc.step(sub, 1)
    acc.step(opt, 1)
    for e in (0.3, 1.0):
        exact = exact_product_delta([p_opt, p_sub, p_opt], e)
        lo = float(acc.pld(pessimistic=False).get_delta_for_epsilon(e))
        hi = acc.get_delta(e)
        assert lo <= exact * (1 + 1e-9) + 1e-14 <= hi * (1 + 1e-9) + 2e-14
    assert acc.queries == 3 and [n for _, n in acc.ledger] == [1, 1, 1]


def test_composed_epsilon_never_exceeds_the_generic_bound(small_tables, paper_params):
    tables = [*small_tables.values(), *(darrm.solve(paper_params(3), family=f) for f in ("opt", "sub"))]
    for table in tables:
        for Q in (1, 10, 50):
            dt = 1 - (1 - per_delta(table)) ** Q * (1 - 1e-4)
            # exact ∈ [lower, epsilon]; the exact value is ≤ the generic one (the (ε_q, δ_q)-RR pair
            # dominates every (ε_q, δ_q)-DP query), so lower ≤ generic; the generic point is one of the
            # closed forms the reported value is the minimum with, so it is never above it
            h = 1e-3
            tight = composed_epsilon(table, Q, delta_total=dt, member_randomness="fresh",
                                     value_discretization_interval=h)
            generic = generic_epsilon(table, Q, dt)
            assert tight.bound in (BOUND_FRESH, BOUND_CLOSED_FORM)
            assert tight.lower <= generic * (1 + 1e-9)
            assert tight.epsilon <= generic


def per_delta(table: GammaTable) -> float:
    return float(table.params.delta)


def test_rr_like_table_composes_exactly_to_the_generic_bound():
    """K = 1, γ ≡ 1 releases the member's own (ε, Δ)-DP bit: its envelope is the (ε, Δ)-RR pair,
    the worst (ε, Δ)-DP mechanism, so tight composition equals Kairouz–Oh–Viswanath's exact one."""
    params = PrivacyParams(1, 1, 0.5, 1e-4)
    table = GammaTable(params, np.ones(2), "custom", violation=-1.0)
    P, Q = table_profile(table).pair()
    e = math.exp(0.5)
    np.testing.assert_allclose(sorted(P[P > 0]), sorted([1e-4, e * (1 - 1e-4) / (e + 1), (1 - 1e-4) / (e + 1)]),
                               rtol=1e-12)
    for Qn in (5, 40):
        dt = 1 - (1 - 1e-4) ** Qn * (1 - 1e-3)
        b = composed_epsilon(table, Qn, delta_total=dt, member_randomness="fresh", bracket=1e-3)
        kov = optimal_homogeneous_epsilon(0.5, 1e-4, Qn, dt)
        assert b.lower <= kov * (1 + 1e-9) and kov <= b.epsilon * (1 + 1e-9)
        assert b.epsilon <= kov * 1.01


def test_infinite_loss_mass_sets_the_composed_delta_floor():
    """γ ≡ 1 at K = 3, Δ = 0.01 has infinite-loss mass y₀ = 1 − (1 − Δ)² per query: Q queries cannot
    reach any δ below 1 − (1 − y₀)^Q, whatever ε."""
    params = PrivacyParams(3, 3, 0.5, 0.01)
    table = GammaTable(params, np.ones(4), "custom", violation=0.0)
    y0 = 1 - 0.99**2
    for Q in (1, 4):
        floor = 1 - (1 - y0) ** Q
        b = composed_delta(table, Q, epsilon_total=40.0, member_randomness="fresh")
        assert b.lower >= floor * (1 - 1e-9)
        assert b.delta <= floor * (1 + 1e-6) + 1e-12
        with pytest.raises(ParameterError):
            composed_epsilon(table, Q, delta_total=floor * 0.5, member_randomness="fresh", bracket=-1)
        assert composed_epsilon(table, Q, delta_total=floor * 0.5, member_randomness="fresh").epsilon == math.inf


def test_paper_pate_setting_total_epsilon():
    """K = 11, m = 3, ε = 0.0892, Δ = 1e-4, Q = 100, δ_total = 1 − (1 − δ_q)^Q (1 − 1e-4) ≈ 0.0297:
    γ_opt (prior i.i.d. 0.75) ≤ 6.3 and γ_Sub ≤ 3.01, each within 1 % of the exact composition of its
    pair (the exact value lies in the [optimistic, pessimistic] bracket)."""
    params = PrivacyParams(11, 3, 0.0892, 1e-4)
    dt = 1 - (1 - params.delta) ** 100 * (1 - 1e-4)
    assert dt == pytest.approx(0.0297, abs=1e-4)
    opt = darrm.solve(params, PRIOR)
    sub = darrm.solve(params, family="sub")
    b_opt = composed_epsilon(opt, 100, delta_total=dt, member_randomness="fresh")
    b_sub = composed_epsilon(sub, 100, delta_total=dt, member_randomness="fresh")
    assert b_opt.epsilon <= 6.3 and b_sub.epsilon <= 3.01
    assert b_opt.bracket <= 0.01 and b_sub.bracket <= 0.01
    assert generic_epsilon(opt, 100, dt) == pytest.approx(12.597, abs=2e-3)


def test_fixed_members_report_only_post_processing_of_their_guarantees(small_tables):
    table = small_tables["opt"]
    p = table.params
    for Q in (1, 1000):
        b = composed_epsilon(table, Q, delta_total=0.05, member_randomness="fixed")
        assert b.bound == BOUND_FIXED_SHARED and b.member_randomness == "fixed"
        assert b.epsilon == optimal_homogeneous_epsilon(p.eps, p.member_delta, p.K, 0.05)
    acc = QueryAccountant("fixed")
    acc.step(table, 10)
    with pytest.raises(ParameterError, match="member_randomness"):
        acc.pld()
    dparams = DisjointParams(5, ApproxDP(0.7, 1e-5), target_eps=1.0, target_delta=1e-4)
    dtable = darrm.solve(dparams)
    b = fixed_members_bound(dtable, delta_total=1e-5)
    assert b.bound == BOUND_FIXED_DISJOINT and b.epsilon == pytest.approx(0.7)
    with pytest.raises(ParameterError, match="table"):
        acc.step(dtable, 1)
    rr_table = darrm.solve(DisjointParams(5, LocalRR(1.0), target_eps=1.0, target_delta=1e-4))
    with pytest.raises(ParameterError, match="member_randomness"):  # reports are randomised afresh
        QueryAccountant("fixed").step(rr_table, 1)


def test_member_randomness_must_be_said(small_tables):
    table = small_tables["sub"]
    with pytest.raises(ParameterError, match="member_randomness"):
        composed_epsilon(table, 3, delta_total=1e-5, member_randomness=None)
    with pytest.raises(ParameterError, match="member_randomness"):
        QueryAccountant("sometimes")
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        query_pld(table, value_discretization_interval=0.0)


def test_exported_pld_composes_with_other_mechanisms(small_tables):
    from dp_accounting.pld import privacy_loss_distribution as pld

    table = small_tables["opt"]
    acc = QueryAccountant("fresh")
    acc.step(table, 5)
    ours = acc.pld()
    gauss = pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4)
    both = ours.compose(gauss)
    assert both.get_epsilon_for_delta(1e-5) > max(ours.get_epsilon_for_delta(1e-5), gauss.get_epsilon_for_delta(1e-5))


@pytest.mark.parametrize(("Q", "delta"), [(137, 0.02), (1000, 0.5)])
def test_the_epsilon_solve_is_on_the_safe_side_of_each_pld_and_tight(Q, delta):
    """epsilon_for_delta (the segment root, checked and moved outward): the pessimistic side's ε has
    rigorous δ(ε) ≤ δ and δ(ε·(1 − 10⁻⁹)) > δ; the optimistic side's ε has δ(ε) > δ, and dp_accounting's
    own ε of that PLD (its Python walk over the losses) lies in [ε·(1 − 10⁻⁹), ε·(1 + 10⁻⁷)]."""
    from darrm.accounting import queries as q

    sub = darrm.solve(PrivacyParams(11, 3, 0.0892, 1e-4), family="sub")
    steps = [(sub, Q)]
    h = q.choose_interval(steps, None, None, q.DEFAULT_BRACKET)
    grid, optimistic = q._grid_composed(steps, h, None), q._composed(steps, h, False, None)
    e = q.epsilon_for_delta(grid, delta)
    assert grid.get_delta_for_epsilon(e) <= delta < grid.get_delta_for_epsilon(e * (1 - 1e-9))
    lo = q.epsilon_for_delta(optimistic, delta, upper=False)
    assert optimistic.get_delta_for_epsilon(lo) > delta
    # both read δ(ε) in float64 (dp_accounting by its own loop): they agree to 10⁻⁹, ours at most 10⁻⁷ lower
    assert lo * (1 - 1e-9) <= optimistic.get_epsilon_for_delta(delta) <= lo * (1 + 1e-7)
