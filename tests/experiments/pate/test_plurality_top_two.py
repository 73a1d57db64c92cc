"""The top-two reduction of the C-class plurality aggregator: every real move is a listed pair, the
solved tables are (ε, δ)-DP by the 40-digit brute force over every histogram and move, and a broken
table is caught by both the reduction's certificate and the brute force."""

from __future__ import annotations

import numpy as np
import pytest
from references import plurality_reference as brute

from darrm import ParameterError
from darrm.experiments.pate.plurality_top_two import (
    max_divergence,
    prior_weights,
    release_plurality,
    solve_top_two,
    state_pairs,
    states,
)

SMALL = [(3, 2), (5, 2), (4, 3), (6, 3), (7, 3), (5, 4), (8, 4), (6, 5)]


def _as_dict(gamma: np.ndarray, K: int, C: int) -> dict[tuple[int, int], float]:
    return {ts: float(g) for ts, g in zip(states(K, C), gamma, strict=True)}


@pytest.mark.parametrize(("K", "C"), SMALL)
def test_states_are_exactly_the_top_two_pairs_of_real_histograms(K, C):
    real = {brute.top_two(n) for n in brute.histograms(K, C) if brute.top_two(n)[0] > brute.top_two(n)[1]}
    assert set(states(K, C)) == real


@pytest.mark.parametrize(("K", "C"), SMALL)
def test_every_move_of_every_histogram_is_a_listed_pair(K, C):
    """Claims 2 and 3: a move keeps the plurality class (a 'same' pair), reaches or leaves a tie (a
    'tie' state), or swaps the plurality class at s = t − 1 (a 'swap' state)."""
    index = {ts: i for i, ts in enumerate(states(K, C))}
    pairs = state_pairs(K, C)
    same = {tuple(p) for p in pairs.same.tolist()}
    tie, swap = set(pairs.tie.tolist()), set(pairs.swap.tolist())
    for n in brute.histograms(K, C):
        for m in brute.moves(n):  # every one-vote move a → b with n_a ≥ 1
            (t, s), (t2, s2) = brute.top_two(n), brute.top_two(m)
            if t == s and t2 == s2:
                continue  # tie to tie: both release the uniform label
            if t == s or t2 == s2:
                assert index[(t, s) if t > s else (t2, s2)] in tie
            elif n.index(t) == m.index(t2):
                i, j = index[(t, s)], index[(t2, s2)]
                assert (min(i, j), max(i, j)) in same
            else:
                assert (t, s) == (t2, s2) and s == t - 1 and index[(t, s)] in swap


@pytest.mark.parametrize(("K", "C"), [(5, 3), (6, 3), (5, 4)])
def test_reduced_divergence_equals_the_brute_force_on_random_tables(K, C):
    """Over random γ the listed pairs' maximum equals the maximum over every histogram and move (≥ is
    Claims 2–4; = shows that no listed pair is vacuous at these sizes)."""
    rng = np.random.default_rng(1)
    for eps in (0.0, 0.3, 1.0):
        for _ in range(4):
            g = rng.random(len(states(K, C)))
            ref = brute.max_hockey_stick(_as_dict(g, K, C), K, C, eps)
            assert max_divergence(g, K, C, eps) == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("K", "C", "eps", "delta"), [(5, 3, 0.5, 1e-3), (7, 3, 0.2, 1e-2), (6, 4, 1.0, 1e-4),
                                                       (8, 4, 0.1, 1e-3), (9, 2, 0.3, 1e-5)])
def test_solved_tables_are_private_by_the_brute_force(K, C, eps, delta):
    table = solve_top_two(K, C, eps, delta, p_correct=0.7)
    assert brute.max_hockey_stick(_as_dict(table.gamma, K, C), K, C, eps) <= delta
    assert table.max_divergence <= delta


def test_a_broken_table_is_caught_by_both_checks():
    K, C, eps, delta = 6, 3, 0.2, 1e-3
    table = solve_top_two(K, C, eps, delta)
    broken = table.gamma.copy()
    broken[np.argmin(broken)] = 1.0  # one state released deterministically next to low-γ neighbours
    assert brute.max_hockey_stick(_as_dict(broken, K, C), K, C, eps) > delta
    assert max_divergence(broken, K, C, eps) > delta


def test_the_lp_is_no_worse_than_the_best_constant_gamma():
    """A constant γ ≡ c is a feasible point when its divergence is ≤ δ; the LP's objective is at least
    that point's (same prior)."""
    K, C, eps, delta = 9, 3, 0.3, 1e-3
    table = solve_top_two(K, C, eps, delta, p_correct=0.7)
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if max_divergence(np.full(len(table.gamma), mid), K, C, eps) <= delta:
            lo = mid
        else:
            hi = mid
    const = prior_weights(K, C, 0.7) @ np.full(len(table.gamma), lo) + 1 / C
    assert table.expected_agreement >= const - 1e-9


def test_release_follows_gamma():
    K, C = 7, 3
    table = solve_top_two(K, C, 5.0, 0.5)
    votes = np.array([[0] * 7, [1] * 6 + [2], [0, 0, 1, 1, 2, 2, 2]])
    rng = np.random.default_rng(0)
    g = table.lookup(np.array([7, 6, 3]), np.array([0, 1, 2]))
    labels = np.stack([release_plurality(votes, table, rng) for _ in range(4000)])
    for q, top in enumerate((0, 1, 2)):
        assert np.mean(labels[:, q] == top) == pytest.approx(g[q] + (1 - g[q]) / C, abs=0.03)
    with pytest.raises(ParameterError, match="votes"):
        release_plurality(np.zeros((2, 5), dtype=int), table, rng)


def test_the_recorded_gap_bounds_the_distance_to_the_lp_optimum():
    table = solve_top_two(8, 4, 0.1, 1e-3)
    w = prior_weights(8, 4, 0.9)
    assert table.info["gap_to_lp_optimum"] >= 0
    assert w @ table.gamma + table.info["gap_to_lp_optimum"] == pytest.approx(table.info["lp_objective"], abs=1e-9)


@pytest.mark.parametrize(("votes", "why"), [
    ([[3, 0, 0, 1, 2, 0, 1]], "class label"),  # C = 3: no class 3
    ([[7, 7, 7, 7, 7, 7, 7]], "class label"),
    ([[-1, 0, 0, 1, 2, 0, 1]], "class label"),
    ([[0.5, 0, 0, 1, 2, 0, 1]], "class label"),
    ([[np.nan, 0, 0, 1, 2, 0, 1]], "class label"),
    ([[0, 0, 0, 1, 2, 0, 1], [0, 1]], "rows of equal length"),
    (np.zeros((0, 7), dtype=int), "at least 1 row"),
    ([["a"] * 7], "numeric"),
    ([[0, 1, 2, 0, 1, 2]], "K=7 columns"),
])
def test_plurality_releases_only_existing_classes_and_refuses_bad_votes_naming_votes(votes, why):
    """A vote that is no class 0..C−1 would be released as one (outside the C outputs the (ε, δ)
    claim covers); every malformed input is one ParameterError naming ``votes``, as in darrm.aggregate."""
    table = solve_top_two(7, 3, 1.0, 1e-3)
    with pytest.raises(ParameterError, match=rf"^votes: .*{why}"):
        release_plurality(votes, table, np.random.default_rng(0))


def test_plurality_rng_is_a_generator_or_a_seed_and_nothing_else():
    table = solve_top_two(7, 3, 1.0, 1e-3)
    votes = np.array([[0] * 7, [1] * 7])
    assert np.array_equal(release_plurality(votes, table, 42), release_plurality(votes, table, 42))
    for bad in ("42", 1.5, object(), True):
        with pytest.raises(ParameterError, match=r"^rng: "):
            release_plurality(votes, table, bad)
    with pytest.raises(ParameterError, match=r"^table: "):
        release_plurality(votes, "table", 0)
