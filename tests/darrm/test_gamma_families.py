import itertools
import math

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.gamma import (
    gamma_const,
    gamma_dsub,
    gamma_sub,
    p_const,
    symmetric_from_upper,
    upper_half,
    validate_gamma,
)
from darrm.numerics.poisson_binomial import pmf
from darrm.params import PrivacyParams


def submaj_output_one_given_L(K, l, m):
    """Pr[SubMaj = 1 | L = l] by enumerating every m-subset (Algorithm 3, fair coin on ties)."""
    votes = [1] * l + [0] * (K - l)
    tot = 0.0
    subsets = list(itertools.combinations(range(K), m))
    for sub in subsets:
        ones = sum(votes[i] for i in sub)
        tot += 1.0 if 2 * ones > m else 0.5 if 2 * ones == m else 0.0
    return tot / len(subsets)


@pytest.mark.parametrize("K,m", [(5, 1), (5, 2), (5, 3), (7, 4), (7, 5), (9, 6)])
def test_gamma_sub_has_the_law_of_subsampled_majority(K, m):
    """Lemma 3.1: Pr[DaRRM_γSub = 1 | L=l] = γ(l)1{l≥mid} + ½(1−γ(l)) equals SubMaj's."""
    g = gamma_sub(K, m)
    mid = (K + 1) // 2
    for l in range(K + 1):
        darrm = g[l] * (l >= mid) + 0.5 * (1 - g[l])
        assert darrm == pytest.approx(submaj_output_one_given_L(K, l, m), abs=1e-12)


def test_gamma_sub_special_cases():
    K = 11
    np.testing.assert_allclose(gamma_sub(K, 1), np.abs(K - 2 * np.arange(K + 1)) / K, atol=1e-15)
    np.testing.assert_allclose(gamma_sub(K, K), np.ones(K + 1))


@pytest.mark.parametrize("K", [5, 11, 21])
def test_gamma_families_are_symmetric_monotone_and_in_unit_interval(K):
    for m in range(1, K + 1):
        for g in (gamma_sub(K, m), gamma_dsub(K, m)):
            validate_gamma(g, K)
            up = upper_half(g)
            assert np.all(np.diff(up) >= -1e-12)  # γ(l) ≤ γ(l+1) for l ≥ mid


def test_gamma_dsub_is_subsampling_with_2m_minus_1_and_dominates_gamma_sub():
    K = 11
    for m in range(1, 6):
        np.testing.assert_allclose(gamma_dsub(K, m), gamma_sub(K, 2 * m - 1))
        assert np.all(gamma_dsub(K, m) >= gamma_sub(K, m) - 1e-15)
    for m in range(6, 12):
        np.testing.assert_array_equal(gamma_dsub(K, m), np.ones(K + 1))


def test_p_const_pure_dp_closed_form():
    # tanh(mε/2)/tanh(Kε/2) (spec §1.2)
    for m in (1, 3, 5, 7, 9):
        p = p_const(PrivacyParams(11, m, 0.1, 0.0))
        assert p == pytest.approx(math.tanh(m * 0.05) / math.tanh(0.55), rel=1e-12)


def test_p_const_reference_values_and_clipping():
    got = [p_const(PrivacyParams(11, m, 0.1, 1e-5)) for m in (1, 3, 5, 7)]
    np.testing.assert_allclose(got, [0.0998, 0.2975, 0.4893, 0.6721], atol=5e-5)
    # τ = m and λ = δ: Eq. 16 gives exactly 1 (clipped, never above 1)
    P = PrivacyParams(11, 3, 0.1, 1e-5)
    assert p_const(P, tau=3, lam=P.delta) == pytest.approx(1.0, abs=1e-12)
    assert p_const(P, tau=1, lam=0.0) == 1.0
    assert np.all(gamma_const(P) == p_const(P))


def test_gamma_validation_errors_name_parameter():
    with pytest.raises(ParameterError, match="m"):
        gamma_sub(11, 0)
    with pytest.raises(ParameterError, match="m"):
        gamma_sub(11, 2.5)
    with pytest.raises(ParameterError, match="K"):
        gamma_sub(10, 3)
    with pytest.raises(ParameterError, match="gamma"):
        validate_gamma([0.1, 0.2, 0.3, 0.4])  # not symmetric
    with pytest.raises(ParameterError, match="gamma"):
        validate_gamma([1.0, np.nan, np.nan, 1.0])
    with pytest.raises(ParameterError, match="gamma"):
        validate_gamma([1.0, 1.0, 1.0])  # even K
    with pytest.raises(ParameterError, match="gamma"):
        symmetric_from_upper([0.5, 0.5], 11)


def test_lemma_b9_identity(rng):
    # (1/C(K,m)) E_{X~Bin(K,p)}[C(X,i) C(K−X,m−i)] = C(m,i) p^i (1−p)^{m−i}
    K, m, p = 11, 4, 0.37
    a = pmf(np.full(K, p))
    for i in range(m + 1):
        lhs = sum(a[x] * math.comb(x, i) * math.comb(K - x, m - i) for x in range(K + 1)) / math.comb(K, m)
        assert lhs == pytest.approx(math.comb(m, i) * p**i * (1 - p) ** (m - i), rel=1e-12)
