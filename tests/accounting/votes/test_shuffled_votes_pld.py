"""Tight Q-fold composition of shuffled binary RR votes: brute force over Q-fold products."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_distribution import (
    from_two_probability_mass_functions,
)

from darrm.accounting.votes import ShuffledBinaryRR, compose_queries
from darrm.accounting.votes.pld import (
    dominating_pld,
    dominating_profile,
    rounds_delta,
    rounds_epsilon,
)
from darrm.errors import ParameterError
from darrm.numerics.poisson_binomial import pmf


def _pairs(K: int, eps0: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every ordered pair (L_D, L_D′): victim 1→0 and 0→1, n1 = 0..K−1 others at 1."""
    q = math.exp(eps0) / (1 + math.exp(eps0))
    out = []
    for n1 in range(K):
        others = [q] * n1 + [1 - q] * (K - 1 - n1)
        P, Pp = pmf(np.array([q, *others])), pmf(np.array([1 - q, *others]))
        out += [(P, Pp), (Pp, P)]
    return out


def _hs(P: np.ndarray, R: np.ndarray, eps: float) -> float:
    return float(np.maximum(P - math.exp(eps) * R, 0.0).sum())


def _brute_composed_delta(K: int, eps0: float, Q: int, eps: float) -> float:
    """Exact δ(ε) of Q non-adaptive rounds, max over every per-round choice of (n1, direction),
    by enumerating the Q-fold product distributions of L (order is irrelevant: multisets)."""
    S = _pairs(K, eps0)
    best = 0.0
    for seq in itertools.combinations_with_replacement(range(len(S)), Q):
        P, R = np.ones(1), np.ones(1)
        for j in seq:
            P, R = np.outer(P, S[j][0]).ravel(), np.outer(R, S[j][1]).ravel()
        best = max(best, _hs(P, R, eps))
    return best


@pytest.mark.parametrize("K,eps0", [(4, 1.0), (7, 2.5), (60, 1.5)])
def test_profile_is_the_max_over_pairs_for_every_real_eps(K, eps0):
    grid = np.array([-eps0 - 0.1, -eps0, -0.7 * eps0, -0.1, 0.0, 0.2, 0.5 * eps0, eps0, eps0 + 1])
    got = dominating_profile(K, eps0, grid)
    want = [max(_hs(P, R, e) for P, R in _pairs(K, eps0)) for e in grid]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.all(got >= np.asarray(want) * (1 - 1e-12) - 1e-15)  # float rounding of the sums only
    m = ShuffledBinaryRR(K, eps0)
    assert np.allclose(got[grid >= 0], [m.delta(e) for e in grid[grid >= 0]], atol=1e-15)


@pytest.mark.parametrize("K,eps0,Q", [(3, 1.0, 2), (4, 1.5, 3), (5, 0.5, 3), (6, 2.0, 2)])
def test_composed_pld_dominates_brute_force_product_distributions(K, eps0, Q):
    """Exact non-adaptive worst case ≤ composed dominating PLD ≤ composed per-query (ε, δ)."""
    m = ShuffledBinaryRR(K, eps0)
    for eps in (0.0, 0.3, 1.0, 0.9 * Q * eps0):
        exact = _brute_composed_delta(K, eps0, Q, eps)
        tight = rounds_delta(K, eps0, Q, eps)
        assert exact <= tight + 1e-13
        assert tight <= exact + 0.1  # the dominating pair is a convex hull of the pairs: close, not equal
    for dq in (1e-3, 1e-2):
        eg, dt = compose_queries(m.epsilon(dq), dq, Q, dq)
        assert rounds_epsilon(K, eps0, Q, dt) <= eg + 1e-9


def test_brute_force_catches_an_understated_local_budget():
    """The check above can fail: a PLD built for a smaller ε0 falls below the exact value."""
    K, eps0, Q = 6, 2.0, 2
    assert any(rounds_delta(K, 0.9 * eps0, Q, e) < _brute_composed_delta(K, eps0, Q, e) - 1e-3
               for e in (0.3, 1.0, 2.0))


def test_single_round_matches_the_exact_epsilon():
    for K, eps0 in ((11, 1.0), (301, 3.0)):
        exact = ShuffledBinaryRR(K, eps0).epsilon(1e-6)
        got = rounds_epsilon(K, eps0, 1, 1e-6)
        assert exact - 1e-9 <= got <= exact + 2e-3


@pytest.mark.parametrize("n1", [0, 50, 100])
def test_large_K_composition_sits_between_a_single_split_and_the_per_query_bound(n1):
    """K = 101, Q = 10: a fixed split n1 composed (optimistic discretisation: a lower bound on the
    exact value) ≤ our δ; our ε ≤ the optimal composition of the exact per-query (ε, δ)."""
    K, eps0, Q, eps = 101, 2.0, 10, 1.0
    m = ShuffledBinaryRR(K, eps0)
    _, x = m.others.pmf(n1)
    x0, x1 = np.concatenate(([0.0], x)), np.concatenate((x, [0.0]))
    P, R = m.q * x0 + m.r * x1, m.r * x0 + m.q * x1
    lp = {i: math.log(p) for i, p in enumerate(P)}
    lr = {i: math.log(p) for i, p in enumerate(R)}
    lower = max(from_two_probability_mass_functions(b, a, pessimistic_estimate=False,
                                                    value_discretization_interval=1e-3)
                .self_compose(Q).get_delta_for_epsilon(eps) for a, b in ((lp, lr), (lr, lp)))
    assert lower <= rounds_delta(K, eps0, Q, eps)
    eg, dt = compose_queries(m.epsilon(1e-6), 1e-6, Q, 1e-6)
    assert rounds_epsilon(K, eps0, Q, dt) < eg / 3


def test_composed_epsilon_never_exceeds_basic_composition_of_eps0():
    assert rounds_epsilon(3, 0.2, 5, 1e-12) <= 5 * 0.2


@pytest.mark.parametrize("call,name", [
    (lambda: dominating_pld(11, 1.0, discretization=0.0), "discretization"),
    (lambda: dominating_pld(11, 1.0, discretization=1.0), "discretization"),
    (lambda: rounds_delta(11, 1.0, 0, 0.5), "queries"),
    (lambda: rounds_delta(11, 1.0, 2, -0.5), "eps"),
    (lambda: rounds_epsilon(11, 1.0, 2, 0.0), "delta"),
    (lambda: rounds_epsilon(11, -1.0, 2, 1e-6), "eps0"),
    (lambda: dominating_profile(11, 1.0, np.array([np.nan])), "eps"),
])
def test_bad_parameters_name_the_parameter(call, name):
    with pytest.raises(ParameterError) as exc:
        call()
    assert exc.value.parameter == name
