"""Totals stay tight at any number of queries, and cost little: each composed total against an
independent exact value (the k-fold ε-randomised-response profile summed with scipy's binomial
pmf, and a brute-force double sum for a sequence of two tables), never below it and ≤ 1 % above."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.stats import binom

from darrm import PrivacyParams
from darrm.accounting.queries import (
    BOUND_CLOSED_FORM,
    BOUND_FRESH,
    QueryAccountant,
    composed_epsilon,
    fresh_bound,
    table_profile,
)
from darrm.errors import ParameterError
from darrm.table import GammaTable

DELTA = 1e-6


def pure_table(eps: float) -> GammaTable:
    """K = 1, γ ≡ 1: the member's own ε-DP bit is released, so one query's profile is exactly the
    pure (ε, 0) randomised response (up to the profile's outward rounding, ~1e-149)."""
    return GammaTable(PrivacyParams(1, 1, eps, 0.0), np.ones(2), "custom", violation=-1.0)


def rr_delta(eps_list: list[tuple[float, int]], eps_total: float) -> float:
    """Exact δ(ε_total) of the composition of n_i ε_i-randomised responses, by direct summation over
    the count l_i of 'minus' outcomes of each kind (scipy's binomial pmf; no code of darrm)."""
    with np.errstate(over="ignore"):
        return _rr_delta(eps_list, eps_total)


def _rr_delta(eps_list: list[tuple[float, int]], eps_total: float) -> float:
    (e1, n1), *rest = eps_list
    l1 = np.arange(n1 + 1)
    w1 = binom.pmf(l1, n1, 1.0 / (1.0 + math.exp(e1)))
    loss1 = (n1 - 2.0 * l1) * e1
    if not rest:
        return float(np.sum(w1 * np.clip(-np.expm1(eps_total - loss1), 0.0, None)))
    (e2, n2), = rest
    l2 = np.arange(n2 + 1)
    w2 = binom.pmf(l2, n2, 1.0 / (1.0 + math.exp(e2)))
    loss = loss1[:, None] + ((n2 - 2.0 * l2) * e2)[None, :]
    return float(np.sum(w1[:, None] * w2[None, :] * np.clip(-np.expm1(eps_total - loss), 0.0, None)))


def assert_tight(eps: float, eps_list: list[tuple[float, int]]) -> None:
    assert rr_delta(eps_list, eps) <= DELTA * (1 + 1e-9), "below the exact composition"
    assert rr_delta(eps_list, eps / 1.01) > DELTA, "more than 1 % above the exact composition"


@pytest.mark.parametrize("Q", [10**3, 10**4, 10**5])
def test_pure_profile_total_is_within_one_percent_of_the_exact_composition_and_never_below(Q):
    t0 = time.perf_counter()
    b = composed_epsilon(pure_table(0.007), Q, delta_total=DELTA, member_randomness="fresh")
    assert time.perf_counter() - t0 < 60.0
    assert_tight(b.epsilon, [(0.007, Q)])
    assert b.lower <= b.epsilon


def test_pure_probe_at_twenty_thousand_queries_in_seconds():
    t = pure_table(0.007)
    table_profile(t)
    t0 = time.perf_counter()
    b = composed_epsilon(t, 20_000, delta_total=DELTA, member_randomness="fresh")
    took = time.perf_counter() - t0
    assert_tight(b.epsilon, [(0.007, 20_000)])
    assert b.epsilon == pytest.approx(4.83, abs=0.005)
    assert took < 20.0, took


@pytest.mark.parametrize("Q", [10**3, 10**4, 10**5])
def test_the_pld_alone_is_tight_at_any_q(Q):
    """Without the closed forms: the connect-the-dots PLD composition on its own interval."""
    from darrm.accounting.queries import _refined

    hi, lo, _ = _refined([(pure_table(0.007), Q)], DELTA, True, None, 0.0025, None)
    assert lo <= hi
    assert_tight(hi, [(0.007, Q)])


def test_a_sequence_of_two_tables_composes_tightly():
    """A session that changes tables: 1500 queries of one table, then 800 of another."""
    a, b = pure_table(0.007), pure_table(0.02)
    steps = [(a, 1500), (b, 800)]
    total = composed_epsilon(steps, delta_total=DELTA, member_randomness="fresh")
    assert total.bound in (BOUND_FRESH, BOUND_CLOSED_FORM)
    assert_tight(total.epsilon, [(0.007, 1500), (0.02, 800)])
    acc = QueryAccountant("fresh")
    acc.step(a, 1500)
    acc.step(b, 800)
    assert acc.get_epsilon(DELTA) == total.epsilon


def test_the_interval_is_refused_where_it_cannot_be_computed():
    t = pure_table(0.007)
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        composed_epsilon(t, 10, delta_total=DELTA, member_randomness="fresh", value_discretization_interval=1e-20)
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        composed_epsilon(t, 10**9, delta_total=DELTA, member_randomness="fresh", value_discretization_interval=1e-4)


def test_huge_counts_fall_back_on_the_closed_form_at_a_cost_that_does_not_grow_with_q():
    t0 = time.perf_counter()
    b = fresh_bound([(pure_table(0.007), 10**8)], DELTA, True)
    assert time.perf_counter() - t0 < 60.0
    assert b.bound in (BOUND_FRESH, BOUND_CLOSED_FORM) and math.isfinite(b.epsilon)
    # the composed mean loss alone: Q·ε·tanh(ε/2) ≤ ε_total + a few standard deviations
    assert 10**8 * 0.007 * math.tanh(0.0035) <= b.epsilon


def test_a_huge_count_of_a_pure_table_is_shown_over_budget_by_the_moments_alone():
    """No infinite-loss mass to lean on: the Berry–Esseen lower bound refuses 10¹² queries at ε = 10."""
    from darrm.accounting.queries import exceeds_quickly

    t = pure_table(0.007)
    assert exceeds_quickly([(t, 10**12)], 10.0, DELTA)
    assert not exceeds_quickly([(t, 20_000)], 4.9, DELTA)  # ε(20,000) = 4.83 fits 4.9
