import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from darrm.errors import ParameterError
from darrm.numerics.binomial import binomial_pmf
from darrm.numerics.poisson_binomial import pmf

probs = arrays(np.float64, st.integers(1, 25), elements=st.floats(0.0, 1.0))


def brute_force_pmf(ps):
    K = len(ps)
    out = np.zeros(K + 1)
    for s in itertools.product((0, 1), repeat=K):
        out[sum(s)] += np.prod([p if b else 1 - p for p, b in zip(ps, s, strict=True)])
    return out


@given(probs)
@settings(max_examples=200, deadline=None)
def test_pmf_is_a_nonnegative_distribution(ps):
    a = pmf(ps)
    assert a.shape == (len(ps) + 1,)
    assert np.all(a >= 0.0)
    assert abs(a.sum() - 1.0) < 1e-12


@given(probs, st.randoms())
@settings(max_examples=100, deadline=None)
def test_pmf_is_permutation_invariant(ps, r):
    perm = list(range(len(ps)))
    r.shuffle(perm)
    np.testing.assert_allclose(pmf(ps), pmf(ps[perm]), atol=1e-14)


@given(probs)
@settings(max_examples=100, deadline=None)
def test_pmf_reflection_identity(ps):
    # α(1−p)_l = α(p)_{K−l} (L571–573)
    np.testing.assert_allclose(pmf(1.0 - ps), pmf(ps)[::-1], atol=1e-14)


def test_pmf_matches_brute_force_enumeration(rng):
    for K in (1, 2, 5, 8):
        ps = rng.uniform(size=K)
        np.testing.assert_allclose(pmf(ps), brute_force_pmf(ps), atol=1e-15)


def test_pmf_reduces_to_binomial_with_relative_accuracy_in_tails():
    for K, p in ((11, 0.745), (101, 0.3), (1001, 0.999)):
        a = pmf(np.full(K, p))
        b = stats.binom.pmf(np.arange(K + 1), K, p)
        big = b > 1e-280
        np.testing.assert_allclose(a[big], b[big], rtol=1e-9)
        assert np.all(a >= 0)


def test_pmf_no_ringing_below_1e15():
    # FFT-based methods produce ~1e-17 noise (even negative values) in tiny tails; the DP
    # convolution keeps the exact tiny value
    ps = np.full(60, 1e-3)
    a = pmf(ps)
    exact = stats.binom.pmf(np.arange(61), 60, 1e-3)
    assert np.all(a >= 0)
    mask = exact > 1e-300
    np.testing.assert_allclose(a[mask], exact[mask], rtol=1e-9)


def test_pmf_batches_rows_independently(rng):
    ps = rng.uniform(size=(4, 3, 7))
    a = pmf(ps)
    assert a.shape == (4, 3, 8)
    np.testing.assert_allclose(a[2, 1], pmf(ps[2, 1]), atol=0)


def test_binomial_pmf_broadcasts():
    b = binomial_pmf(5, np.array([0.2, 0.7]))
    assert b.shape == (2, 6)


@given(st.one_of(st.just(np.nan), st.just(np.inf), st.floats(1.0000001, 1e6), st.floats(-1e6, -1e-9)))
def test_pmf_rejects_invalid_probabilities_naming_parameter(bad):
    try:
        pmf(np.array([0.5, bad]))
    except ParameterError as exc:
        assert "ps" in str(exc)
    else:
        raise AssertionError("invalid probability accepted")
