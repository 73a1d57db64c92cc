"""The common randomizers (asymmetric RR, RAPPOR, OUE, Hadamard response) and Poisson subsampling
against an exact small-n reference built from each mechanism's own definition: every user's output
law is written out here (bit flips, scipy's Hadamard matrix, a "sends nothing" outcome), the shuffled
view is the multiset of messages enumerated outcome by outcome, and δ(ε) is the largest hockey-stick
divergence over every dataset of the others, every ordered victim pair (so both directions).  The
bounds must bracket it: fft-lower <= exact <= optimal-decomposition and best_upper_bound."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from references import shuffle_exact as exact
from scipy.linalg import hadamard

from darrm.accounting import RandomizedResponse, all_bounds, best_upper_bound
from darrm.accounting.shuffle import decomposition
from darrm.accounting.shuffle.common_randomizers import (
    asymmetric_rr,
    hadamard_response,
    oue,
    poisson_subsampled,
    rappor,
)
from darrm.errors import ParameterError

# --- each mechanism's definition: input -> {message: probability}; None = no message ----------


def _unary_law(k: int, p1: float, q1: float):
    def law(x: int) -> dict:
        out = {}
        for bits in itertools.product((0, 1), repeat=k):
            pr = 1.0
            for j, b in enumerate(bits):
                on = p1 if j == x else q1
                pr *= on if b else 1.0 - on
            out[bits] = pr
        return out

    return law


def rappor_law(k: int, eps0: float):
    flip = 1.0 / (math.exp(eps0 / 2) + 1.0)  # every bit of the one-hot vector flipped w.p. flip
    return _unary_law(k, 1.0 - flip, flip)


def oue_law(k: int, eps0: float):
    return _unary_law(k, 0.5, 1.0 / (math.exp(eps0) + 1.0))


def hadamard_law(k: int, eps0: float):
    K = 1
    while K <= k:
        K *= 2
    H = hadamard(K)
    e = math.exp(eps0)

    def law(x: int) -> dict:
        own = H[x + 1] == 1  # C_x: the K/2 outputs where row x+1 is +1
        return {y: (e / (e + 1) if own[y] else 1 / (e + 1)) / (K / 2) for y in range(K)}

    return law


def asymmetric_law(q0: float, q1: float):
    return lambda x: {0: q0, 1: 1 - q0} if x == 0 else {0: 1 - q1, 1: q1}


def subsampled_law(law, rate: float):
    def sub(x: int) -> dict:
        out = {y: rate * p for y, p in law(x).items()}
        out[None] = 1.0 - rate  # takes no part: sends nothing
        return out

    return sub


def rr_law(k: int, eps0: float):
    e = math.exp(eps0)
    return lambda x: {y: (e if y == x else 1.0) / (e + k - 1) for y in range(k)}


# --- the exact shuffled divergence, by enumeration -------------------------------------------


def _shuffled(law, inputs) -> dict:
    """Law of the multiset of messages (sorted tuple; absent messages dropped)."""
    dist: dict = {(): 1.0}
    for x in inputs:
        nxt: dict = defaultdict(float)
        for ms, p in dist.items():
            for y, q in law(x).items():
                key = ms if y is None else tuple(sorted(ms + (y,), key=repr))
                nxt[key] += p * q
        dist = nxt
    return dist


def brute_delta(law, k: int, n: int, eps: float) -> float:
    """max over the others' multisets and ordered victim pairs of D_{e^ε}(P0 || P1)."""
    best = 0.0
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for a, b in itertools.permutations(range(k), 2):
            p0, p1 = _shuffled(law, (a, *others)), _shuffled(law, (b, *others))
            keys = set(p0) | set(p1)
            hs = sum(max(0.0, p0.get(s, 0.0) - math.exp(eps) * p1.get(s, 0.0)) for s in keys)
            best = max(best, hs)
    return best


CASES = {
    "asymmetric-rr": (lambda: asymmetric_rr(0.85, 0.6), lambda: asymmetric_law(0.85, 0.6), 2, 10),
    "rappor": (lambda: rappor(2, 2.0), lambda: rappor_law(2, 2.0), 2, 6),
    "oue": (lambda: oue(2, 1.5), lambda: oue_law(2, 1.5), 2, 6),
    "hadamard": (lambda: hadamard_response(3, 1.5), lambda: hadamard_law(3, 1.5), 3, 5),
    "subsampled-rr": (lambda: poisson_subsampled(RandomizedResponse(2.0, 2), 0.4),
                      lambda: subsampled_law(rr_law(2, 2.0), 0.4), 2, 9),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_randomizer_matrix_is_the_mechanisms_definition(name):
    """The shuffled divergence of the matrix (exact.worst_case_delta) equals the enumeration of
    the mechanism's own definition: same mechanism, up to relabelling the outputs."""
    make, law, k, n = CASES[name]
    r = make()
    n = min(n, 5)
    for eps in (0.1, 0.5):
        assert float(exact.worst_case_delta(r, n, eps).delta[0]) == pytest.approx(
            brute_delta(law(), k, n, eps), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bounds_bracket_the_exact_shuffled_divergence(name):
    """fft-lower <= exact δ(ε) <= optimal-decomposition, best_upper_bound, at several ε; the
    lower bound is not vacuous."""
    make, law, k, n = CASES[name]
    r = make()
    positive = 0
    for eps in (0.05, 0.3, 0.8):
        truth = brute_delta(law(), k, n, eps)
        up = decomposition.delta_bound(r, n, eps).delta
        best = best_upper_bound(r, n, eps=eps).delta
        lo = decomposition.lower_delta_bound(r, n, eps).delta
        assert lo <= truth * (1 + 1e-9) + 1e-15
        assert truth <= up * (1 + 1e-12) and truth <= best * (1 + 1e-12)
        positive += lo > 0
    assert positive >= 2


@pytest.mark.parametrize("name", ["asymmetric-rr", "subsampled-rr", "hadamard"])
def test_epsilon_bounds_are_on_the_right_side_of_the_exact_curve(name):
    """ε(δ): the exact δ at the upper ε is <= δ, at the lower ε it is > δ (the true ε lies between)."""
    make, law, k, n = CASES[name]
    r, delta = make(), 1e-2
    eu = decomposition.eps_bound(r, n, delta).eps
    el = decomposition.lower_eps_bound(r, n, delta).eps
    assert 0 < el <= eu
    assert brute_delta(law(), k, n, eu) <= delta * (1 + 1e-9)
    assert brute_delta(law(), k, n, el) > delta


def test_a_bound_for_a_weaker_randomizer_fails_the_exact_check():
    """The check can fail: RAPPOR's bound computed at ε0/2, or subsampling's at half the rate,
    lies below the exact divergence of the real mechanism."""
    assert decomposition.delta_bound(rappor(2, 1.0), 6, 0.3).delta < brute_delta(rappor_law(2, 2.0), 2, 6, 0.3)
    sub = poisson_subsampled(RandomizedResponse(2.0, 2), 0.2)
    assert decomposition.delta_bound(sub, 9, 0.3).delta < brute_delta(subsampled_law(rr_law(2, 2.0), 0.4), 2, 9, 0.3)


def test_subsampling_amplifies_and_keeps_the_local_epsilon():
    rr = RandomizedResponse(2.0, 2)
    sub = poisson_subsampled(rr, 0.25)
    assert sub.eps0 == pytest.approx(2.0) and sub.array.shape == (2, 3)
    sub_eps = best_upper_bound(sub, 10_000, delta=1e-6).eps
    # same method on both: the decomposition bound shrinks by more than 40 %
    same = all_bounds(rr, 10_000, delta=1e-6, methods=["optimal-decomposition"])[0].eps
    assert sub_eps < 0.6 * same
    # and the subsampled guarantee is below the full protocol's exact (attained) ε
    exact_full = all_bounds(rr, 10_000, delta=1e-6, methods=["binary-rr-exact-lower"])[0].eps
    assert sub_eps < exact_full


def test_the_declared_local_epsilon_is_the_matrix_s():
    for r, e in [(rappor(4, 1.3), 1.3), (oue(5, 0.7), 0.7), (hadamard_response(6, 2.5), 2.5),
                 (hadamard_response(7, 1.0), 1.0)]:
        assert r.eps0 == pytest.approx(e, rel=1e-12)
    assert asymmetric_rr(0.9, 0.6).eps0 == pytest.approx(max(math.log(0.9 / 0.4), math.log(0.6 / 0.1)))
    assert hadamard_response(7, 1.0).array.shape == (7, 8) and hadamard_response(8, 1.0).array.shape == (8, 16)


@pytest.mark.parametrize("call,name", [
    (lambda: asymmetric_rr(0.7, 0.3), "q1"),
    (lambda: asymmetric_rr(1.0, 0.5), "q0"),
    (lambda: rappor(1, 1.0), "k"),
    (lambda: rappor(17, 1.0), "k"),
    (lambda: oue(3, 0.0), "eps0"),
    (lambda: hadamard_response(3, -1.0), "eps0"),
    (lambda: poisson_subsampled(RandomizedResponse(1.0, 2), 0.0), "rate"),
    (lambda: poisson_subsampled(RandomizedResponse(1.0, 2), 1.5), "rate"),
    (lambda: poisson_subsampled("rr", 0.5), "randomizer"),
])
def test_bad_parameters_are_refused_by_name(call, name):
    with pytest.raises(ParameterError, match=rf"^{name}\b"):
        call()


def test_a_generic_randomizer_cannot_be_subsampled():
    from darrm.accounting import GenericLDP

    with pytest.raises(ParameterError, match="specific randomizer"):
        poisson_subsampled(GenericLDP(1.0), 0.5)


def test_matrix_rows_are_probability_vectors():
    for r in (rappor(6, 1.0), oue(6, 2.0), hadamard_response(12, 1.0)):
        assert np.allclose(r.array.sum(axis=1), 1.0, atol=1e-12)
