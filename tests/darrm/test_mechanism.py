import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from darrm.errors import ParameterError
from darrm.gamma import gamma_dsub, gamma_sub
from darrm.mechanism import aggregate, aggregate_counts, vote_counts
from darrm.numerics.poisson_binomial import pmf
from darrm.privacy.certify import output_probability
from darrm.utility import error, error_curve, error_from_pmf


def test_aggregate_is_seeded_and_counts_equal_votes(rng):
    votes = (rng.random((500, 11)) < 0.7).astype(int)
    g = gamma_sub(11, 3)
    a = aggregate(votes, g, np.random.default_rng(1))
    b = aggregate_counts(votes.sum(axis=1), g, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0, 1}


def test_gamma_one_releases_majority_and_gamma_zero_a_fair_coin(rng):
    votes = (rng.random((20000, 5)) < 0.5).astype(int)
    maj = (votes.sum(1) >= 3).astype(int)
    np.testing.assert_array_equal(aggregate(votes, np.ones(6), rng), maj)
    out = aggregate(votes, np.zeros(6), rng)
    assert abs(out.mean() - 0.5) < 0.02
    assert abs((out == maj).mean() - 0.5) < 0.02


def test_output_frequency_matches_the_exact_output_probability(rng):
    K, n = 7, 200_000
    ps = rng.uniform(size=K)
    g = gamma_sub(K, 3)
    votes = (rng.random((n, K)) < ps).astype(int)
    freq = aggregate(votes, g, rng).mean()
    exact = output_probability(pmf(ps)[None], g)[0]
    assert abs(freq - exact) < 5 * np.sqrt(exact * (1 - exact) / n)


@pytest.mark.parametrize(
    "votes,msg",
    [
        (np.zeros((3, 4)), "K=5 columns"),
        (np.full((3, 5), 2), "0 or 1"),
        (np.array([1, 0, 1, 1, 0]), r"1-D.*\(1, K\) matrix for one query.*counts="),
        (np.zeros((2, 2, 2)), "shape"),
    ],
)
def test_aggregate_rejects_bad_votes_naming_parameter(votes, msg):
    with pytest.raises(ParameterError, match=msg) as exc:
        aggregate(votes, np.ones(6), 0)
    assert exc.value.parameter == "votes"


@pytest.mark.parametrize(
    "counts,msg",
    [
        (np.array([1, 6]), r"\[0, K=5\]"),
        (np.array([-1]), r"\[0, K=5\]"),
        (np.array([1.5]), "integers"),
        (np.array([True]), "integers"),
        (np.zeros((1, 5), dtype=int), "1-D"),
    ],
)
def test_aggregate_counts_rejects_bad_counts_naming_parameter(counts, msg):
    with pytest.raises(ParameterError, match=msg) as exc:
        aggregate_counts(counts, np.ones(6), 0)
    assert exc.value.parameter == "counts"


def test_one_query_as_a_1d_vector_is_not_read_as_counts():
    # the K votes of one query used to be read as K counts (K labels, all 0); now refused
    with pytest.raises(ParameterError, match="votes"):
        aggregate(np.array([0, 1, 1, 1, 1]), np.ones(6), 0)
    np.testing.assert_array_equal(aggregate(np.array([[0, 1, 1, 1, 1]]), np.ones(6), 0), [1])


def brute_force_error(gamma, ps):
    """|Pr[A=1] − Pr[g=1]| by enumerating every vote vector."""
    K = len(ps)
    pa = pg = 0.0
    for s in itertools.product((0, 1), repeat=K):
        pr = np.prod([p if b else 1 - p for p, b in zip(ps, s, strict=True)])
        L = sum(s)
        maj = L >= (K + 1) // 2
        pa += pr * (gamma[L] * maj + 0.5 * (1 - gamma[L]))
        pg += pr * maj
    return abs(pa - pg)


def test_error_formula_matches_brute_force(rng):
    for K in (3, 5, 7):
        for _ in range(5):
            ps = rng.uniform(size=K)
            g = gamma_sub(K, 2)
            assert error(g, ps) == pytest.approx(brute_force_error(g, ps), abs=1e-13)


def test_zero_error_cases(rng):
    ps = rng.uniform(size=(50, 11))
    np.testing.assert_allclose(error(np.ones(12), ps), 0.0, atol=1e-15)
    np.testing.assert_allclose(error(gamma_sub(11, 3), np.full(11, 0.5)), 0.0, atol=1e-15)


@given(st.floats(0.0, 1.0))
@settings(max_examples=50, deadline=None)
def test_lemma_b11_larger_gamma_has_smaller_error(p):
    # γ_DSub ≥ γ_Sub pointwise ⇒ E(γ_DSub) ≤ E(γ_Sub) for i.i.d. mechanisms
    for m in (1, 2, 3):
        assert error_curve(gamma_dsub(11, m), p) <= error_curve(gamma_sub(11, m), p) + 1e-15


def test_error_rejects_wrong_shapes():
    with pytest.raises(ParameterError, match="ps"):
        error(np.ones(12), np.full(10, 0.5))
    with pytest.raises(ParameterError, match="alpha"):
        error_from_pmf(np.ones(12), np.ones(5))
    with pytest.raises(ParameterError, match="p"):
        error_curve(np.ones(12), [1.5])


def test_vote_counts_accepts_booleans():
    np.testing.assert_array_equal(vote_counts(np.array([[True, False, True]]), 3), [2])


def test_ragged_vote_rows_are_one_parameter_error_naming_votes():
    """Rows of different lengths (numpy refuses to build the array) name ``votes``, not a bare ValueError."""
    with pytest.raises(ParameterError, match=r"^votes: .*rows of equal length"):
        vote_counts([[0, 1, 1], [1]], 3)
    with pytest.raises(ParameterError, match=r"^votes: .*numeric"):
        vote_counts(np.array([[1j, 0, 1]]), 3)
