"""Release mechanisms: they see only votes, and they implement DaRRM / GNMax faithfully."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from darrm import ParameterError, gamma_sub
from darrm.experiments import releases
from darrm.experiments.releases import (
    RELEASES,
    Method,
    darrm_release,
    gnmax_release,
    majority_release,
    release,
    shuffled_rr_release,
)

K = 11


def _votes(rng, Q, p8):
    """Q×K labels in {5, 8} (plus a few 'other' labels), teacher i votes 8 w.p. p8[q]."""
    v = np.where(rng.random((Q, K)) < p8[:, None], 8, 5)
    v[rng.random((Q, K)) < 0.05] = 3
    return v.astype(np.int64)


def test_release_functions_take_no_true_labels():
    for fn in (darrm_release, gnmax_release, majority_release, shuffled_rr_release, releases.binary_votes,
               *RELEASES.values()):
        params = set(inspect.signature(fn).parameters)
        assert params <= {"votes", "gamma", "sigma", "eps0", "rng", "classes"}, (fn.__name__, params)


def test_the_registry_dispatches_on_the_method_rows_votes_and_arguments():
    rng = np.random.default_rng(3)
    vp, vn = _votes(rng, 300, rng.random(300)), _votes(rng, 300, rng.random(300))
    methods = {"maj-p": Method("majority", "private", 1), "maj-n": Method("majority", "nonprivate", 2),
               "g": Method("gnmax", "nonprivate", 3, (("sigma", "s"),)),
               "d": Method("darrm", "private", 4, (("gamma", "g1"),))}
    mech = {"s": 1e-6, "g1": np.ones(K + 1)}
    np.testing.assert_array_equal(release(methods, "maj-p", vp, vn, mech, None, (5, 8)), majority_release(vp))
    np.testing.assert_array_equal(release(methods, "maj-n", vp, vn, mech, None, (5, 8)), majority_release(vn))
    np.testing.assert_array_equal(release(methods, "d", vp, vn, mech, rng, (5, 8)), majority_release(vp))
    a = release(methods, "g", vp, vn, mech, np.random.default_rng(9), (5, 8))
    np.testing.assert_array_equal(a, gnmax_release(vn, 1e-6, np.random.default_rng(9)))
    with pytest.raises(KeyError):
        release(methods, "nope", vp, vn, mech, rng, (5, 8))
    with pytest.raises(ParameterError, match="kind"):
        Method("laplace", "private", 5)
    with pytest.raises(ParameterError, match="ensemble"):
        Method("gnmax", "public", 5)


def test_darrm_release_frequency_matches_gamma_formula():
    """Pr[release = majority label] = γ(L) + (1 − γ(L))/2 per vote count L (Algorithm 1)."""
    rng = np.random.default_rng(0)
    gamma = gamma_sub(K, 3)
    for L in (0, 3, 5, 6, 8, 11):
        row = np.array([8] * L + [5] * (K - L))
        votes = np.tile(row, (40000, 1))
        out = darrm_release(votes, gamma, rng)
        maj = 8 if L >= 6 else 5
        expected = gamma[L] + (1 - gamma[L]) / 2
        assert abs(np.mean(out == maj) - expected) < 4 * np.sqrt(0.25 / 40000)
        assert set(np.unique(out)) <= {5, 8}


def test_gamma_one_is_the_majority_and_other_labels_count_as_not_5():
    rng = np.random.default_rng(1)
    votes = _votes(rng, 500, rng.random(500))
    np.testing.assert_array_equal(darrm_release(votes, np.ones(K + 1), rng), majority_release(votes))
    expected = np.where((votes != 5).sum(axis=1) >= 6, 8, 5)  # reference binary reduction (spec §5)
    np.testing.assert_array_equal(majority_release(votes), expected)


def test_gnmax_small_noise_is_plurality_of_5_and_8_and_large_noise_is_a_coin():
    rng = np.random.default_rng(2)
    votes = _votes(rng, 2000, rng.random(2000))
    n5, n8 = (votes == 5).sum(1), (votes == 8).sum(1)
    out = gnmax_release(votes, 1e-6, rng)
    clear = n5 != n8
    np.testing.assert_array_equal(out[clear], np.where(n8 > n5, 8, 5)[clear])
    far = gnmax_release(np.tile([8] * K, (20000, 1)), 1e4, rng)
    assert abs(np.mean(far == 8) - 0.5) < 0.02


def test_mechanisms_reject_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="sigma"):
        gnmax_release(np.full((2, K), 5), 0.0, rng)
    with pytest.raises(ParameterError, match="votes"):
        majority_release(np.full(K, 5))
    with pytest.raises(ParameterError, match="classes"):
        majority_release(np.full((2, K), 5), (5, 5))
