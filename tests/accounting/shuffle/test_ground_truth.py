"""Every upper bound >= the exact worst-case divergence, every lower bound <= it (to 1e-12).

Ground truth: :func:`references.shuffle_exact.worst_case_delta` enumerates the output
histograms of k-RR for *every* dataset of the other n-1 users (as a multiset; the
victim's pair is (0, 1) by symmetry) and both hockey-stick directions; the maximum
is the exact δ(ε) of the shuffled k-RR protocol.  Upper bounds for a generic
ε0-LDP randomizer must dominate it too (k-RR is ε0-LDP).
"""

import numpy as np
import pytest
from references.shuffle_exact import dataset_delta, exact_eps, worst_case_delta

from darrm.accounting import (
    FiniteRandomizer,
    GenericLDP,
    RandomizedResponse,
    all_bounds,
)

# (k, n): n <= 40, k <= 4 — every dataset of the other n-1 users is enumerated.
CASES = [(2, 40), (3, 14), (4, 9)]
EPS0S = [0.5, 1.5]
EPS_GRID = [0.0, 0.05, 0.15, 0.3, 0.6, 1.0]


@pytest.fixture(scope="module")
def ground_truth():
    """{(k, n, eps0): (eps grid, worst-case exact δ over all datasets)}."""
    out = {}
    for k, n in CASES:
        for e0 in EPS0S:
            es = np.array([e for e in EPS_GRID if e < e0])
            out[(k, n, e0)] = (es, worst_case_delta(RandomizedResponse(e0, k), n, es).delta)
    return out

TOL = 1e-12


def test_exact_enumeration_matches_independent_reference_values():
    # spec-shuffle-krr §5.5.1 (hand-checkable fractions) and §2.8 (brute force n=5, k=4)
    r = RandomizedResponse(np.log(2), 3)
    got = dataset_delta(r, 0, 1, [0, 2], [0.0, np.log(1.1), np.log(1.2)])
    assert np.allclose(got, [5 / 32, 77 / 640, 29 / 320], rtol=0, atol=1e-15)
    got = dataset_delta(RandomizedResponse(0.7, 4), 0, 1, [2, 2, 2, 2], [0, 0.1, 0.3])
    assert np.allclose(got, [0.10979823, 0.07682833, 0.02272930], atol=5e-9)


@pytest.mark.parametrize("k,n", CASES)
@pytest.mark.parametrize("eps0", EPS0S)
def test_upper_bounds_dominate_and_lower_bounds_are_dominated_by_exact_divergence(ground_truth, k, n, eps0, capsys):
    es, exact = ground_truth[(k, n, eps0)]
    rr = RandomizedResponse(eps0, k)
    rows = []
    for e, ex in zip(es, exact, strict=True):
        for rand in (rr, GenericLDP(eps0)):
            for b in all_bounds(rand, n, eps=float(e)):
                if b.kind == "upper":
                    assert b.delta >= ex - TOL, (b, ex)
                elif isinstance(rand, RandomizedResponse):
                    assert b.delta <= ex + TOL, (b, ex)
                rows.append((type(rand).__name__, b.method, b.kind, e, b.delta - ex))
    with capsys.disabled():
        for r in rows:
            if r[0] == "RandomizedResponse" and r[3] in (es[1], es[-1]):
                print(f"k={k} n={n} eps0={eps0} {r[1]:<22} {r[2]:<5} eps={r[3]:<5} bound-exact={r[4]:+.3e}")


@pytest.mark.parametrize("k,n", CASES)
def test_eps_of_upper_bounds_is_private_for_exact_mechanism(k, n):
    rr = RandomizedResponse(1.0, k)
    delta = 1e-3
    f = lambda e: float(worst_case_delta(rr, n, [e]).delta[0])  # noqa: E731
    eps_true = exact_eps(f, delta, 1.0, tol=1e-6)
    for b in all_bounds(rr, n, delta=delta):
        if b.kind == "upper":
            assert f(b.eps) <= delta + TOL, b
            assert b.eps >= eps_true - 1e-6
        else:
            assert b.eps <= eps_true + 1e-6, b


def test_finite_randomizer_bounds_sandwich_exact():
    # an asymmetric 3-input, 4-output eps0-LDP randomizer; all datasets enumerated
    m = np.array([[0.4, 0.3, 0.2, 0.1], [0.2, 0.2, 0.3, 0.3], [0.25, 0.35, 0.15, 0.25]])
    r = FiniteRandomizer.from_array(m)
    n = 7
    es = [0.0, 0.1, 0.3]
    exact = worst_case_delta(r, n, es).delta
    for e, ex in zip(es, exact, strict=True):
        for b in all_bounds(r, n, eps=e):
            if b.kind == "upper":
                assert b.delta >= ex - TOL, (b, ex)
            else:
                assert b.delta <= ex + TOL, (b, ex)


def test_lower_bound_is_tight_where_attained():
    # Thm 14 is the exact divergence of the dataset (x0 | x*,...) for k-RR, k >= 3;
    # our FFT lower bound reproduces it up to its rounding step.
    r = RandomizedResponse(1.0, 3)
    n = 14
    exact = dataset_delta(r, 0, 1, [2] * (n - 1), [0.1])[0]
    low = [b for b in all_bounds(r, n, eps=0.1) if b.method == "fft-lower"][0]
    assert exact - 1e-4 <= low.delta <= exact + TOL
