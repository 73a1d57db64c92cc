"""The plurality aggregator's per-query profile and its Q-fold composition: the profile equals the
40-digit brute force over every histogram and move (both directions), its pair's hockey-stick curve
is the profile for every s ≥ 0, the PLD composition brackets the exact product of the pair computed in
mpmath, and it is never above the generic composition of the table's (ε_q, δ_q)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from references import plurality_reference as brute

from darrm import ParameterError
from darrm.accounting import optimal_homogeneous_epsilon
from darrm.experiments.pate.multiclass_aggregators import plurality_budget
from darrm.experiments.pate.plurality_profile import (
    composed_plurality_epsilon,
    plurality_profile,
    plurality_tight_budget,
)
from darrm.experiments.pate.plurality_top_two import TopTwoTable, solve_top_two, states

EPS_GRID = (0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0)


def _as_dict(gamma: np.ndarray, K: int, C: int) -> dict[tuple[int, int], float]:
    return {ts: float(g) for ts, g in zip(states(K, C), gamma, strict=True)}


def _random_table(K: int, C: int, seed: int) -> TopTwoTable:
    """A γ that is not an LP solution, with some γ = 1 (an infinite-loss atom) and some γ = 0."""
    rng = np.random.default_rng(seed)
    g = rng.random(len(states(K, C)))
    g[rng.random(len(g)) < 0.2] = 1.0
    g[rng.random(len(g)) < 0.2] = 0.0
    return TopTwoTable(K, C, 0.0, 0.5, g, 0.0, 0.0, {})


def _brute_hs(gamma: dict, K: int, C: int, s: mpmath.mpf) -> mpmath.mpf:
    """max over every histogram and every move (the move list holds both directions) of
    Σ_c (P_n(c) − s·P_n′(c))₊ in 40 digits, for any s ≥ 0 (also s < 1)."""
    with mpmath.workdps(40):
        worst = mpmath.mpf(0)
        for n in brute.histograms(K, C):
            p = [mpmath.mpf(v) for v in brute.output_distribution(n, gamma)]
            for m in brute.moves(n):
                q = [mpmath.mpf(v) for v in brute.output_distribution(m, gamma)]
                worst = max(worst, mpmath.fsum(max(mpmath.mpf(0), a - s * b) for a, b in zip(p, q, strict=True)))
        return worst


def _pair_hs(P: np.ndarray, Q: np.ndarray, s: mpmath.mpf) -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.fsum(max(mpmath.mpf(0), mpmath.mpf(p) - s * mpmath.mpf(q))
                           for p, q in zip(P.tolist(), Q.tolist(), strict=True))


@pytest.mark.parametrize(("K", "C", "seed"), [(5, 3, 0), (6, 3, 1), (5, 4, 2), (7, 3, 3), (6, 4, 4)])
def test_profile_equals_the_40_digit_brute_force_over_every_move(K, C, seed):
    for table in (_random_table(K, C, seed), solve_top_two(K, C, 0.3, 1e-3, p_correct=0.7)):
        gd = _as_dict(table.gamma, K, C)
        profile = plurality_profile(table)
        for e in EPS_GRID:
            ref = brute.max_hockey_stick(gd, K, C, e)  # independent: every histogram and move, 40 digits
            got = profile.delta(e)
            assert got >= ref  # an upper bound (outward rounding) ...
            assert got <= ref + 1e-13  # ... and tight: no listed pair is vacuous at these sizes


@pytest.mark.parametrize(("K", "C", "seed"), [(5, 3, 5), (6, 4, 6)])
def test_the_pair_dominates_every_move_for_every_s_including_below_one(K, C, seed):
    """Zhu, Dong & Wang 2022, Definition 7 needs H_s(P‖Q) ≥ the mechanism's for every s ≥ 0."""
    table = _random_table(K, C, seed)
    P, Q = plurality_profile(table).pair()
    assert P.sum() == pytest.approx(1.0, abs=1e-12) and Q.sum() == pytest.approx(1.0, abs=1e-12)
    gd = _as_dict(table.gamma, K, C)
    for s in ("0", "0.3", "0.9", "1", "1.7", "6"):
        s_mp = mpmath.mpf(s)
        ref, got = _brute_hs(gd, K, C, s_mp), _pair_hs(P, Q, s_mp)
        assert got >= ref - mpmath.mpf(1e-15)
        assert got <= ref + mpmath.mpf(1e-13)


def test_a_profile_that_misses_the_swap_moves_is_caught_by_the_brute_force():
    """The check can fail: dropping the swap pairs from the cloud (plurality class changes) gives a
    curve below the brute force."""
    from darrm.experiments.pate import plurality_profile as mod
    from darrm.experiments.pate.plurality_top_two import StatePairs, state_pairs

    K, C = 6, 3
    table = _random_table(K, C, 7)
    real = state_pairs(K, C)
    orig = mod.state_pairs
    try:
        mod.state_pairs = lambda K, C: StatePairs(real.same, real.tie, np.zeros(0, dtype=np.int64))
        broken = plurality_profile(table)
    finally:
        mod.state_pairs = orig
    gd = _as_dict(table.gamma, K, C)
    assert any(broken.delta(e) < brute.max_hockey_stick(gd, K, C, e) - 1e-9 for e in EPS_GRID)


def _exact_product_epsilon(P: np.ndarray, Q: np.ndarray, k: int, delta: float) -> float:
    """ε of the k-fold product (P^k, Q^k) at δ, in 40 digits: every tuple of atoms, bisection in ε."""
    with mpmath.workdps(40):
        Pm, Qm = [mpmath.mpf(v) for v in P.tolist()], [mpmath.mpf(v) for v in Q.tolist()]
        tuples = [(mpmath.fprod(Pm[i] for i in t), mpmath.fprod(Qm[i] for i in t))
                  for t in itertools.product(range(len(Pm)), repeat=k)]

        def d(e: mpmath.mpf) -> mpmath.mpf:
            s = mpmath.exp(e)
            return mpmath.fsum(max(mpmath.mpf(0), p - s * q) for p, q in tuples)

        lo, hi = mpmath.mpf(0), mpmath.mpf(50)
        if d(lo) <= delta:
            return 0.0
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if d(mid) <= delta else (mid, hi)
        return float(hi)


@pytest.mark.parametrize(("K", "C", "eps", "delta", "k"), [(7, 3, 0.3, 1e-3, 2), (6, 4, 0.5, 1e-3, 3),
                                                           (9, 3, 0.2, 1e-4, 2)])
def test_pld_composition_brackets_the_exact_product(K, C, eps, delta, k):
    """composed ε (pessimistic PLD, interval d) lies in [exact, exact + k·d] (each of k losses is
    rounded up by < d); the exact product is computed in 40 digits."""
    table = solve_top_two(K, C, eps, delta, p_correct=0.7)
    P, Q = plurality_profile(table).pair()
    d_tot, d = 1e-4, 1e-4
    exact = _exact_product_epsilon(P, Q, k, d_tot)
    got = composed_plurality_epsilon(table, k, d_tot, discretization=d).epsilon
    assert exact - 1e-9 <= got <= exact + k * d + 1e-9


@pytest.mark.parametrize(("K", "C", "eps", "delta", "Q"), [(9, 3, 0.2, 1e-4, 10), (12, 4, 0.1, 1e-5, 50),
                                                           (25, 10, 0.3, 1e-6, 20)])
def test_tight_composition_is_never_above_the_generic_one(K, C, eps, delta, Q):
    table = solve_top_two(K, C, eps, delta, p_correct=0.75)
    d_tot = 1e-5 if Q * delta < 1e-5 else 10 * Q * delta
    tight = composed_plurality_epsilon(table, Q, d_tot).epsilon
    assert tight <= optimal_homogeneous_epsilon(eps, delta, Q, d_tot)


def test_tight_budget_meets_the_total_and_is_no_smaller_than_the_generic_per_query_epsilon():
    K, C, e_tot, d_tot, Q = 15, 4, 1.0, 1e-5, 20
    generic = plurality_budget(e_tot, d_tot, Q)
    got = plurality_tight_budget(K, C, e_tot, d_tot, Q, start=generic.eps_query, steps=4)
    assert got.composition.epsilon <= e_tot
    assert got.eps_query >= generic.eps_query
    assert composed_plurality_epsilon(got.table, Q, d_tot).epsilon == got.composition.epsilon  # recomputable
    assert got.table.max_divergence <= got.delta_query
    assert math.isclose(got.delta_query, d_tot / (2 * Q))


def test_profile_rejects_a_non_table():
    with pytest.raises(ParameterError, match="table"):
        plurality_profile(np.zeros(3))  # type: ignore[arg-type]
