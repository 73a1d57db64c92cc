"""Composition of shuffled rounds (accounting/shuffle/composition.py) against brute force:
the exact T-fold product of the shuffled binary RR's output laws, worst dataset."""

import math

import numpy as np
import pytest
from references import shuffle_exact as exact

from darrm.accounting import RandomizedResponse
from darrm.accounting.shuffle.composition import ShuffleRound, dominating_pair, round_profile, rounds_epsilon
from darrm.errors import ParameterError


def _pairs(eps0: float, n: int):
    """Exact output laws (count histogram) of every dataset pair of the shuffled binary RR, both directions."""
    m = RandomizedResponse(eps0, 2).to_finite().array
    out = []
    for c in range(n):
        h = exact.histogram_pmf(m, [0] * c + [1] * (n - 1 - c), n)
        p0, p1 = exact._add_user(h, m[0]).ravel(), exact._add_user(h, m[1]).ravel()
        out.append(((p0, p1), (p1, p0)))
    return out


def _brute_eps(eps0s: list[float], n: int, delta: float) -> float:
    """max over datasets (fixed across rounds) and directions of the product's ε(δ), by bisection."""
    per_round = [_pairs(e, n) for e in eps0s]
    laws = []
    for c in range(n):
        for d in range(2):
            p = np.ones(1)
            loss = np.zeros(1)
            for r in per_round:
                a, b = r[c][d]
                p = np.outer(p, a).ravel()
                loss = np.add.outer(loss, np.log(a) - np.log(b)).ravel()
            laws.append((p, loss))

    def delta_of(e: float) -> float:
        return max(float(np.sum(p * np.maximum(0.0, 1 - np.exp(e - loss)))) for p, loss in laws)

    lo, hi = 0.0, sum(eps0s)
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("eps0,n,T,delta,slack", [(1.0, 6, 3, 1e-2, 1.07), (2.0, 8, 2, 1e-3, 1.001)])
def test_composition_over_rounds_agrees_with_brute_force(eps0, n, T, delta, slack):
    brute = _brute_eps([eps0] * T, n, delta)
    got = rounds_epsilon([ShuffleRound(RandomizedResponse(eps0, 2), n, T)], delta)
    assert brute <= got <= slack * brute


def test_heterogeneous_rounds_agree_with_brute_force():
    brute = _brute_eps([1.0, 2.0, 1.5], 7, 1e-2)
    rounds = [ShuffleRound(RandomizedResponse(e, 2), 7) for e in (1.0, 2.0, 1.5)]
    got = rounds_epsilon(rounds, 1e-2)
    assert brute <= got <= 1.07 * brute


def test_dominating_pair_dominates_the_exact_profile_in_both_directions():
    rr, n = RandomizedResponse(1.5, 3), 7
    losses, (p, q) = dominating_pair(round_profile(rr, n), rr.eps0, points=24)
    assert abs(q.sum() - 1) < 1e-9 and p.sum() <= 1 + 1e-9 and np.all(np.abs(losses) <= rr.eps0 + 1e-12)
    es = np.linspace(0.0, 1.5, 16)
    truth = exact.worst_case_delta(rr, n, es).delta  # max of both directions
    for e, t in zip(es, truth, strict=True):
        hs = float(np.sum(np.maximum(0.0, p - math.exp(e) * q))) + max(0.0, 1 - float(p.sum()))
        assert hs >= t - 1e-12


def test_a_pair_built_from_a_too_small_profile_fails_the_brute_force_check():
    """Mutation: halving the profile gives a 'composition' below the brute-force truth."""
    from darrm.accounting.shuffle import composition as C

    n, eps0 = 8, 2.0
    brute = _brute_eps([eps0] * 2, n, 1e-3)
    orig = C.round_profile

    def halved(r, m):
        f = orig(r, m)
        return lambda e: f(e) / 2

    try:
        C.round_profile = halved
        assert rounds_epsilon([ShuffleRound(RandomizedResponse(eps0, 2), n, 2)], 1e-3) < brute
    finally:
        C.round_profile = orig


def test_bad_rounds_are_refused():
    with pytest.raises(ParameterError, match="rounds"):
        rounds_epsilon([], 1e-6)
    with pytest.raises(ParameterError, match="count"):
        ShuffleRound(RandomizedResponse(1.0, 2), 10, 0)
    with pytest.raises(ParameterError, match="delta"):
        rounds_epsilon([ShuffleRound(RandomizedResponse(1.0, 2), 10)], 0.0)
