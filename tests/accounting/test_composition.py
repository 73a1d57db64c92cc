"""Composition theorems: exactness against brute force, library agreement, ordering, validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from darrm.accounting import composition as c
from darrm.errors import ParameterError


def _dominating_pair(eps: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Kairouz et al.'s four-outcome pair dominating every (ε, δ)-DP mechanism."""
    a, b = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    p = np.array([delta, (1 - delta) * a, (1 - delta) * b, 0.0])
    q = np.array([0.0, (1 - delta) * b, (1 - delta) * a, delta])
    return p, q


def _brute_force_delta(budgets: list[tuple[float, float]], eps_total: float) -> float:
    """Hockey-stick divergence of the product of dominating pairs, by enumerating outcomes."""
    pairs = [_dominating_pair(e, d) for e, d in budgets]
    total = 0.0
    for outcome in itertools.product(range(4), repeat=len(budgets)):
        p = math.prod(pr[0][o] for pr, o in zip(pairs, outcome, strict=True))
        q = math.prod(pr[1][o] for pr, o in zip(pairs, outcome, strict=True))
        total += max(0.0, p - math.exp(eps_total) * q)
    return total


def _brute_force_epsilon(budgets: list[tuple[float, float]], delta_total: float) -> float:
    lo, hi = 0.0, sum(e for e, _ in budgets)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _brute_force_delta(budgets, mid) <= delta_total else (mid, hi)
    return hi


eps_st = st.floats(0.01, 2.0)
delta_st = st.sampled_from([0.0, 1e-6, 1e-3, 0.02])


@settings(max_examples=40, deadline=None)
@given(eps=eps_st, delta=delta_st, k=st.integers(1, 6), frac=st.floats(0.0, 1.0))
def test_optimal_delta_equals_brute_force_hockey_stick(eps, delta, k, frac):
    eps_total = frac * k * eps
    exact = c.optimal_homogeneous_delta(eps, delta, k, eps_total)
    assert exact == pytest.approx(_brute_force_delta([(eps, delta)] * k, eps_total), rel=1e-9, abs=1e-14)


@settings(max_examples=30, deadline=None)
@given(eps=eps_st, delta=delta_st, k=st.integers(1, 200), dp=st.sampled_from([1e-6, 1e-4, 0.05]))
def test_ordering_optimal_le_grid_le_kairouz_le_simple(eps, delta, k, dp):
    e_k, d_k = c.kairouz_general(eps, delta, k, dp)
    e_grid = c.kairouz_optimal_discrete(eps, delta, k, d_k)
    e_opt = c.optimal_homogeneous_epsilon(eps, delta, k, d_k)
    assert e_opt <= e_grid + 1e-12
    assert e_grid <= e_k + 1e-12
    assert e_k <= c.simple(eps, delta, k)[0] + 1e-12
    # the exact profile certifies every one of them at δ_total
    assert c.optimal_homogeneous_delta(eps, delta, k, e_k) <= d_k + 1e-15


@settings(max_examples=30, deadline=None)
@given(eps=eps_st, delta=delta_st, k=st.integers(1, 300), target=st.floats(1e-6, 0.5))
def test_optimal_epsilon_is_certified_and_tight(eps, delta, k, target):
    floor = -math.expm1(k * math.log1p(-delta))
    if target < floor * (1 - 1e-9):
        with pytest.raises(ParameterError, match="delta_total"):
            c.optimal_homogeneous_epsilon(eps, delta, k, target)
        return
    if target <= floor * (1 + 1e-9):
        return  # at the floor itself the answer is kε up to rounding
    e = c.optimal_homogeneous_epsilon(eps, delta, k, target)
    assert c.optimal_homogeneous_delta(eps, delta, k, e) <= target
    if e > 1e-9:
        assert c.optimal_homogeneous_delta(eps, delta, k, max(0.0, e - 1e-9 - 1e-9 * e)) > target


def test_optimal_epsilon_matches_brute_force_small_k():
    for eps, delta, k, dt in [(0.3, 1e-3, 5, 0.01), (1.0, 0.0, 4, 1e-4), (0.1, 1e-4, 6, 0.002)]:
        assert c.optimal_homogeneous_epsilon(eps, delta, k, dt) == pytest.approx(
            _brute_force_epsilon([(eps, delta)] * k, dt), abs=1e-9)


@pytest.mark.parametrize("eps,delta,k,dt", [(0.2676, 3e-4, 50, 0.015), (0.1, 1e-5, 35, 0.1), (0.5, 0.0, 20, 1e-5),
                                            (0.0892, 1e-4, 100, 0.0101), (1.0, 1e-3, 7, 0.01)])
def test_grid_optimum_equals_dp_accounting_advanced_composition(eps, delta, k, dt):
    from dp_accounting.pld import accountant
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    ref = accountant.advanced_composition(DifferentialPrivacyParameters(eps, delta), k, dt)
    assert c.kairouz_optimal_discrete(eps, delta, k, dt) == pytest.approx(ref, rel=1e-12)


def test_optimal_composition_stable_for_large_k():
    # e^{kε} overflows float64 here; the log-space evaluation does not.
    e_k, d_k = c.kairouz_general(0.5, 1e-7, 5000, 1e-5)
    e_opt = c.optimal_homogeneous_epsilon(0.5, 1e-7, 5000, d_k)
    assert math.isfinite(e_opt) and 0 < e_opt <= e_k


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.05, 1.0), delta=st.sampled_from([0.0, 1e-5]), k=st.integers(1, 60))
def test_epsilon_monotone_in_k_and_delta_total(eps, delta, k):
    dt = 1e-3 + 2 * k * delta
    inv = c.optimal_homogeneous_epsilon
    assert inv(eps, delta, k, dt) <= inv(eps, delta, k + 1, dt) + 1e-12
    assert inv(eps, delta, k, 2 * dt) <= inv(eps, delta, k, dt) + 1e-12
    assert c.kairouz_general(eps, delta, k, 1e-4)[0] <= c.kairouz_general(eps, delta, k + 1, 1e-4)[0]
    assert c.kairouz_general(eps, delta, k, 1e-3)[0] <= c.kairouz_general(eps, delta, k, 1e-4)[0]


def test_kairouz_general_formula_and_delta_total():
    eps, delta, k, dp = 0.2676, 3e-4, 100, 1e-4
    e, d = c.kairouz_general(eps, delta, k, dp)
    drift = (math.exp(eps) - 1) * eps * k / (math.exp(eps) + 1)
    third = drift + eps * math.sqrt(2 * k * math.log(1 / dp))
    assert e == pytest.approx(third, rel=1e-14)
    assert d == pytest.approx(1 - (1 - delta) ** k * (1 - dp), rel=1e-12)
    assert c.kairouz_terms(eps, delta, 20, dp)[0] == min(c.kairouz_terms(eps, delta, 20, dp))


def test_dwork_roth_and_simple_values():
    assert c.simple(0.1, 1e-5, 10) == pytest.approx((1.0, 1e-4))
    e, d = c.advanced_dwork_roth(0.1, 1e-5, 10, 0.1)
    assert e == pytest.approx(0.1 * math.sqrt(20 * math.log(10)) + 10 * 0.1 * math.expm1(0.1))
    assert d == pytest.approx(0.1001)
    # the reference code's m for M = 10 (spec §3.4): √(2M log(1/δ′)) + M(e^ε−1) = 7.8378
    assert e / 0.1 == pytest.approx(7.8378, abs=5e-5)


def test_heterogeneous_pld_upper_bounds_brute_force():
    budgets = [(0.3, 1e-4), (0.7, 0.0), (0.1, 1e-3), (0.3, 1e-4)]
    exact = _brute_force_epsilon(budgets, 0.01)
    pld = c.heterogeneous_pld(budgets, 0.01, discretization=1e-4)
    assert exact - 1e-9 <= pld <= exact + len(budgets) * 1e-4


def test_heterogeneous_pld_matches_exact_homogeneous():
    e_k, d_k = c.kairouz_general(0.2676, 3e-4, 50, 1e-4)
    exact = c.optimal_homogeneous_epsilon(0.2676, 3e-4, 50, d_k)
    assert c.heterogeneous_pld([(0.2676, 3e-4)] * 50, d_k) == pytest.approx(exact, rel=1e-8)


def test_parallel_composition_takes_the_worst_member():
    assert c.parallel([(0.0892, 1e-4), (0.0852, 1e-4), (0.05, 0.0)]) == (0.0892, 1e-4)
    with pytest.raises(ParameterError, match="budgets"):
        c.parallel([])
    with pytest.raises(ParameterError, match=r"budgets\[1\].eps"):
        c.parallel([(0.1, 0.0), (-1.0, 0.0)])


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: c.kairouz_general(0.0, 1e-5, 3, 1e-4), "eps"),
        (lambda: c.kairouz_general(float("nan"), 1e-5, 3, 1e-4), "eps"),
        (lambda: c.kairouz_general(0.1, 1.0, 3, 1e-4), "delta"),
        (lambda: c.kairouz_general(0.1, -1e-5, 3, 1e-4), "delta"),
        (lambda: c.kairouz_general(0.1, 1e-5, 0, 1e-4), "k"),
        (lambda: c.kairouz_general(0.1, 1e-5, 2.5, 1e-4), "k"),
        (lambda: c.kairouz_general(0.1, 1e-5, 3, 0.0), "delta_prime"),
        (lambda: c.optimal_homogeneous_epsilon(0.1, 1e-3, 10, 1e-3), "delta_total"),
        (lambda: c.optimal_homogeneous_delta(0.1, 1e-3, 10, -1.0), "eps_total"),
        (lambda: c.heterogeneous_pld([], 1e-3), "budgets"),
        (lambda: c.simple(0.1, 0.5, -2), "k"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(call, name):
    with pytest.raises(ParameterError) as err:
        call()
    assert err.value.parameter == name


def _mpmath_exact_delta(eps: float, delta: float, k: int, eps_total: float):
    """1 − (1−δ)^k (1 − Σ_l C(k,l)(e^{(k−l)ε} − e^{ε_total+lε})⁺/(1+e^ε)^k) over every l, at 60 digits
    (Kairouz et al. Theorem 3.3 summed term by term, on the exact values of the floats)."""
    import mpmath

    with mpmath.workdps(60):
        e, et = mpmath.mpf(eps), mpmath.mpf(eps_total)
        pure = mpmath.fsum(mpmath.binomial(k, l) * (mpmath.exp((k - l) * e) - mpmath.exp(et + l * e))
                           for l in range(k + 1) if (k - 2 * l) * e > et) / (1 + mpmath.exp(e)) ** k
        return 1 - (1 - mpmath.mpf(delta)) ** k * (1 - pure)


@pytest.mark.parametrize(("eps", "delta", "k", "delta_total"),
                         [(0.1, 0.0, 100, 1e-5), (0.3, 1e-5, 41, 1e-3), (0.007, 0.0, 2000, 1e-6)])
def test_optimal_epsilon_is_never_below_the_exact_one(eps, delta, k, delta_total):
    """At the PATE 2017 anchor (0.1, 0, 100, 10⁻⁵) → 4.31 the float64 root has an exact δ 1.5e-21 above δ_total:
    the returned ε_total meets δ_total exactly (60-digit brute force) and is within 1e-12 of the true root."""
    import mpmath

    out = c.optimal_homogeneous_epsilon(eps, delta, k, delta_total)
    assert _mpmath_exact_delta(eps, delta, k, out) <= mpmath.mpf(delta_total)
    assert _mpmath_exact_delta(eps, delta, k, out * (1 - 1e-12)) > mpmath.mpf(delta_total)


def test_the_exact_decision_refuses_the_float_root_at_the_anchor():
    """The float64 inversion alone (the certified side checked in float64) returns a root whose exact δ is above
    δ_total; the exact decision says so, so the check is not vacuous."""
    from darrm.numerics.inversion import inverse_monotone

    root = inverse_monotone(lambda t: c.optimal_homogeneous_delta(0.1, 0.0, 100, t), 1e-5, 0.0, 10.0,
                            increasing=False, xtol=1e-13, rtol=1e-14, name="delta_total")
    assert c.optimal_homogeneous_delta(0.1, 0.0, 100, root) <= 1e-5
    assert not c._certified_delta(0.1, 0.0, 100, root, 1e-5)
    assert _mpmath_exact_delta(0.1, 0.0, 100, root) > 1e-5
