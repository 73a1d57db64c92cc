"""The plurality aggregator's privacy, checked by brute force: exact hockey-stick divergence over
every histogram and every one-vote move (both directions), and, independently, the definition's
supremum over every output set S ⊆ [C] — small K and C."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from references.plurality_reference import (
    histograms,
    max_hockey_stick,
    output_distribution,
    plurality_agreement,
    solve_plurality,
    top_two,
)

from darrm.errors import ParameterError


def _definition_delta(gamma, K, C, eps):
    """max over neighbours (n, n′) and output sets S of P_n(S) − e^ε P_n′(S), enumerating S ⊆ [C]."""
    worst = 0.0
    for n in histograms(K, C):
        p = output_distribution(n, gamma)
        for a, b in itertools.permutations(range(C), 2):
            if n[a] == 0:
                continue
            m = list(n)
            m[a] -= 1
            m[b] += 1
            q = output_distribution(tuple(m), gamma)
            for r in range(1, C + 1):
                for S in itertools.combinations(range(C), r):
                    worst = max(worst, sum(p[c] for c in S) - math.exp(eps) * sum(q[c] for c in S))
    return worst


def _random_gamma(K, C, seed):
    rng = np.random.default_rng(seed)
    return {top_two(n): float(rng.random()) for n in histograms(K, C) if top_two(n)[0] > top_two(n)[1]}


@pytest.mark.parametrize("K,C", [(3, 2), (5, 3), (6, 4), (7, 3)])
def test_histograms_are_every_composition(K, C):
    hs = histograms(K, C)
    assert len(hs) == len(set(hs)) == math.comb(K + C - 1, C - 1)
    assert all(sum(n) == K and min(n) >= 0 and len(n) == C for n in hs)


@pytest.mark.parametrize("K,C,eps,seed", [(4, 3, 0.5, 0), (5, 3, 1.0, 1), (5, 4, 0.2, 2), (6, 3, 0.0, 3)])
def test_divergence_equals_the_definitions_supremum_over_output_sets(K, C, eps, seed):
    gamma = _random_gamma(K, C, seed)
    assert max_hockey_stick(gamma, K, C, eps) == pytest.approx(_definition_delta(gamma, K, C, eps), abs=1e-12)


def test_a_deterministic_plurality_is_flagged_not_private():
    gamma = {k: 1.0 for k in _random_gamma(5, 3, 0)}
    assert max_hockey_stick(gamma, 5, 3, 1.0) > 0.5  # a move that flips the plurality flips the output


@pytest.mark.parametrize("K,C,eps,delta", [(5, 3, 0.5, 1e-5), (7, 3, 1.0, 1e-5), (3, 4, 1.0, 1e-3)])
def test_solved_table_is_private_by_brute_force_and_beats_every_constant_gamma(K, C, eps, delta):
    table = solve_plurality(K, C, eps, delta)
    assert 0.0 <= min(table.gamma.values()) and max(table.gamma.values()) <= 1.0
    assert table.max_divergence <= delta
    assert _definition_delta(table.gamma, K, C, eps) <= delta + 1e-15
    # the best constant γ (randomized response on the plurality), by bisection on the brute-force check
    lo, hi = 0.0, 1.0
    for _ in range(20):  # γ to 1e-6
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if max_hockey_stick({k: mid for k in table.gamma}, K, C, eps) <= delta else (lo, mid)
    constant = {k: lo for k in table.gamma}
    assert table.objective >= plurality_agreement(constant, K, C) - 1e-9
    assert table.objective == pytest.approx(plurality_agreement(table.gamma, K, C), rel=1e-12)


def test_tightening_the_budget_never_raises_the_objective():
    loose = solve_plurality(5, 3, 1.0, 1e-5)
    tight = solve_plurality(5, 3, 0.5, 1e-5)
    assert tight.objective <= loose.objective + 1e-9


@pytest.mark.parametrize("kw,name", [({"K": 0}, "K"), ({"C": 1}, "C"), ({"eps": -1.0}, "eps"),
                                     ({"delta": 0.0}, "delta"), ({"p_correct": 1.0}, "p_correct")])
def test_bad_input_names_the_parameter(kw, name):
    args = dict(K=5, C=3, eps=1.0, delta=1e-5)
    args.update(kw)
    with pytest.raises(ParameterError, match=name):
        solve_plurality(**args)
