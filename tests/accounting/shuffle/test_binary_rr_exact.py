"""The exact shuffled binary-RR curve (``binary_rr_exact``) against independent references.

References: :func:`references.shuffle_exact.worst_case_delta` (output histograms of every
multiset of the others, both victim directions, float64) and, at n = 7, every dataset of the
others as a bit vector in 40-digit mpmath arithmetic.  The module's own claims (one direction,
upper tails, closed-form ε) are not used by either reference.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from references.shuffle_exact import dataset_delta, exact_eps, worst_case_delta

from darrm.accounting import GenericLDP, RandomizedResponse, all_bounds, best_upper_bound
from darrm.accounting.shuffle import binary_rr_exact as bx
from darrm.accounting.shuffle.bound import NotApplicable
from darrm.errors import ParameterError


@pytest.mark.parametrize("n", [1, 2, 5, 12, 25])
@pytest.mark.parametrize("eps0", [0.4, 1.5, 4.0])
def test_upper_and_lower_bracket_the_enumerated_worst_case(n, eps0):
    eps = np.array([0.0, 0.1 * eps0, 0.4 * eps0, 0.8 * eps0])
    truth = worst_case_delta(RandomizedResponse(eps0, 2), n, eps).delta
    for e, t in zip(eps, truth, strict=True):
        up, lo = bx.exact_delta(eps0, n, e, "upper"), bx.exact_delta(eps0, n, e, "lower")
        assert lo <= t <= up
        assert up - lo <= 1e-10  # the stated error terms, not a modelling gap


def _mp_worst(n: int, eps0: float, eps: float) -> mpmath.mpf:
    """max over every bit vector of the others and both victim inputs, 40 digits."""
    mpmath.mp.dps = 40
    p = mpmath.e ** mpmath.mpf(eps0) / (1 + mpmath.e ** mpmath.mpf(eps0))
    ee = mpmath.e ** mpmath.mpf(eps)

    def count_pmf(bits):
        pmf = [mpmath.mpf(1)]
        for b in bits:
            q = p if b else 1 - p
            pmf = [(pmf[s] if s < len(pmf) else 0) * (1 - q) + (pmf[s - 1] * q if s >= 1 else 0)
                   for s in range(len(pmf) + 1)]
        return pmf

    best = mpmath.mpf(0)
    for others in itertools.product((0, 1), repeat=n - 1):
        a, b = count_pmf((1, *others)), count_pmf((0, *others))
        for P, Q in ((a, b), (b, a)):
            best = max(best, sum(max(x - ee * y, 0) for x, y in zip(P, Q, strict=True)))
    return best


@pytest.mark.parametrize("eps0,eps", [(0.7, 0.2), (2.0, 0.9), (5.0, 2.0)])
def test_equals_every_bit_vector_in_high_precision(eps0, eps):
    truth = float(_mp_worst(7, eps0, eps))
    assert bx.exact_delta(eps0, 7, eps, "lower") <= truth <= bx.exact_delta(eps0, 7, eps, "upper")


def test_eps_for_delta_brackets_the_bisected_exact_eps():
    n, eps0, delta = 20, 1.2, 1e-3
    rr = RandomizedResponse(eps0, 2)
    truth = exact_eps(lambda e: float(worst_case_delta(rr, n, e).delta[0]), delta, eps0, tol=1e-12)
    lo, up = bx.exact_eps(eps0, n, delta, "lower"), bx.exact_eps(eps0, n, delta, "upper")
    assert lo - 1e-9 <= truth <= up + 1e-9
    assert up - lo <= 1e-8


def test_the_worst_split_is_not_the_extreme_dataset():
    # at n = 50, eps0 = 1, eps = 0.3 the worst dataset has 48 of the 49 others on one input: the
    # extreme datasets (Su et al. Thm 14's fixed datasets) fall 4 % short, so every split is needed
    n, eps0, eps = 50, 1.0, 0.3
    rr = RandomizedResponse(eps0, 2)
    extreme = max(float(dataset_delta(rr, 0, 1, (1,) * (n - 1), eps)[0]),
                  float(dataset_delta(rr, 0, 1, (0,) * (n - 1), eps)[0]))
    assert bx.exact_delta(eps0, n, eps, "lower") > 1.03 * extreme


def test_is_the_best_upper_bound_and_meets_every_lower_bound():
    n, eps0, delta = 3000, 1.0, 1e-6
    rr = RandomizedResponse(eps0, 2)
    best = best_upper_bound(rr, n, delta=delta)
    assert best.method == bx.NAME
    lows = {b.method: b.eps for b in all_bounds(rr, n, delta=delta, kinds=("lower",))}
    assert max(lows.values()) <= best.eps  # every valid lower bound lies under the exact upper one
    assert lows[bx.LOWER_NAME] >= lows["fft-lower"]  # the worst split beats the fixed datasets
    assert best.eps / lows[bx.LOWER_NAME] <= 1.0005  # the bracket is the error terms' width
    others = [b.eps for b in all_bounds(rr, n, delta=delta, kinds=("upper",)) if b.method != bx.NAME]
    assert best.eps < min(others)


def test_is_a_lower_bound_for_a_generic_randomizer_only():
    low = all_bounds(GenericLDP(1.0), 500, delta=1e-5, methods=[bx.LOWER_NAME, bx.NAME])
    byname = {b.method: b for b in low}
    assert byname[bx.LOWER_NAME].valid and byname[bx.LOWER_NAME].kind == "lower"
    assert not byname[bx.NAME].valid and "binary" in byname[bx.NAME].note


def test_refuses_what_it_does_not_compute():
    with pytest.raises(NotApplicable, match="n <= "):
        bx.exact_eps(1.0, bx.MAX_N_BLOCKS + 1, 1e-6)
    with pytest.raises(NotApplicable, match="randomizer"):
        bx.eps_bound(RandomizedResponse(1.0, 3), 100, 1e-6)
    with pytest.raises(ParameterError, match="kind"):
        bx.exact_delta(1.0, 10, 0.1, "both")
    with pytest.raises(ParameterError, match="delta"):
        bx.exact_eps(1.0, 10, 0.0)


def test_no_amplification_past_eps0_and_none_needed_at_eps0():
    assert bx.exact_delta(1.0, 40, 1.0) == 0.0
    assert bx.exact_eps(2.0, 5, 1e-300, "upper") <= 2.0
    assert math.isclose(bx.exact_delta(1.0, 1, 0.0, "lower"), math.tanh(0.5), rel_tol=1e-12)


def _forward(n: int, j: int, eps0: float, eps: float) -> float:
    """H_{e^ε}(Y_j + B_p || Y_j + B_{1-p}) by direct convolution of the binomial pmfs."""
    from scipy.stats import binom

    p = 1 / (1 + math.exp(-eps0))
    y = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(n - j), n - 1 - j, 1 - p))
    P = np.convolve(y, [1 - p, p])
    Q = np.convolve(y, [p, 1 - p])
    return float(np.maximum(P - math.exp(eps) * Q, 0.0).sum())


@pytest.mark.parametrize("eps0,eps", [(0.5, 0.1), (1.0, 0.3), (3.0, 1.0)])
def test_taking_one_other_out_never_lowers_the_divergence(eps0, eps):
    # the blocks' lemma: H_j(n) <= H_{j-1}(n-1) and H_j(n) <= H_j(n-1)
    for n in (6, 17, 40):
        for j in range(n):
            h = _forward(n, j, eps0, eps)
            if j >= 1:
                assert h <= _forward(n - 1, j - 1, eps0, eps) * (1 + 1e-12) + 1e-16
            if j <= n - 2:
                assert h <= _forward(n - 1, j, eps0, eps) * (1 + 1e-12) + 1e-16


def test_block_starts_alone_miss_the_worst_split():
    # why blocks need their anchors with fewer users (binary_rr_split): at n = 50 the first
    # splits of 5 blocks of 10, each with all n users, stay below the worst case over every dataset
    n, eps0 = 50, 1.0
    truth = worst_case_delta(RandomizedResponse(eps0, 2), n, np.array([0.3])).delta[0]
    assert max(_forward(n, j, eps0, 0.3) for j in (0, 10, 20, 30, 40)) < 0.99 * truth
    assert max(_forward(n - 9, j, eps0, 0.3) for j in (0, 10, 20, 30, 40)) >= truth  # H_j0(n - g + 1)


def test_above_max_n_the_bracket_stays_tight_and_beats_the_blanket():
    from darrm.accounting.shuffle import decomposition

    n, eps0, delta = 25_000, 2.0, 1e-7
    up, lo = bx.exact_eps(eps0, n, delta, "upper"), bx.exact_eps(eps0, n, delta, "lower")
    assert lo <= up <= lo * 1.001
    rr = RandomizedResponse(eps0, 2)
    assert up < decomposition.eps_bound(rr, n, delta).eps  # the blanket (optimal decomposition)
    assert lo >= decomposition.lower_eps_bound(rr, n, delta).eps * (1 - 1e-4)  # j = 0 is a split
