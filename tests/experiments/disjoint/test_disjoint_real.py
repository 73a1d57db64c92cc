"""Real-data part of the disjoint experiment: mechanisms, privacy rows, and the cached teachers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from darrm.accounting import ShuffledBinaryRR, gnmax_epsilon
from darrm.experiments.disjoint.real import METHODS, build_mechanisms, cached_votes, markdown, run_real
from darrm.experiments.pate.study import METHODS as PATE_METHODS
from darrm.experiments.pate.study import query_indices
from darrm.experiments.releases import release, shuffled_rr_release

EPS_T, DELTA = 0.0892, 1e-4


def _votes(n: int, K: int, p: float, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each member votes the true label w.p. p, else the other class or (1 in 4) an unrelated label 3."""
    wrong = np.where(labels == 5, 8, 5)[:, None]
    v = np.where(rng.random((n, K)) < p, labels[:, None], wrong)
    return np.where(rng.random((n, K)) < 0.05, 3, v).astype(np.int64)


@pytest.fixture(scope="module")
def mech():
    return build_mechanisms(11, 3, EPS_T, DELTA)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(7)
    labels = rng.choice([5, 8], size=80)
    vp, vn = _votes(80, 11, 0.7, labels, rng), _votes(80, 11, 0.95, labels, rng)
    return run_real("toy", vp, vn, labels, EPS_T, ms=(3,), queries=(10, 40), draws=3)


def test_every_method_and_query_count_has_a_row_with_its_privacy(rows):
    assert {(r["method"], r["Q"]) for r in rows} == {(m, q) for m in METHODS for q in (10, 40)}
    dq = 1 - (1 - DELTA) ** 3
    for r in rows:
        assert 0.0 <= r["accuracy_mean"] <= 1.0 and r["draws"] == 3
        if r["method"] == "nonprivate-majority":
            assert r["eps_total"] is None
        elif r["method"] == "private-majority":  # parallel composition: once for all queries
            assert (r["eps_query"], r["eps_total"], r["delta_total"]) == (EPS_T, EPS_T, DELTA)
        else:
            assert r["eps_query"] == pytest.approx(3 * EPS_T) and r["delta_query"] == pytest.approx(dq)
            assert r["eps_query"] < r["eps_total"] and r["delta_total"] > r["delta_query"]
    by = {(r["method"], r["Q"]): r for r in rows}
    g = by[("gnmax", 40)]
    assert g["eps_total"] == pytest.approx(gnmax_epsilon(g["sigma"], g["delta_total"], 40, "pld"))
    # the shuffled count composes tighter than the DaRRM rows' generic composition
    assert by[("shuffled-majority", 40)]["eps_total"] < by[("darrm-partition", 40)]["eps_total"]
    assert "| gnmax" in markdown(rows, 3)


def test_shuffled_majority_matches_exact_per_query_privacy(mech):
    m = ShuffledBinaryRR(11, mech["eps0"])
    assert m.epsilon(mech["delta"]) <= mech["eps"] + 1e-12
    assert mech["eps0_darrm"] >= mech["eps0"]


def test_shuffled_rr_release_has_the_binomial_error_rate(mech):
    """Unanimous correct votes: the shuffled majority is wrong iff ≥ 6 of 11 RR reports flip."""
    n = 40000
    votes = np.full((n, 11), 8, dtype=np.int64)
    lab = shuffled_rr_release(votes, mech["eps0"], None, np.random.default_rng(1), (5, 8))
    p_err = stats.binom.sf(5, 11, 1 / (1 + math.exp(mech["eps0"])))
    err = np.mean(lab != 8)
    assert abs(err - p_err) < 5 * math.sqrt(p_err * (1 - p_err) / n)


def test_shuffled_rr_release_takes_a_seed_or_no_generator():
    votes = np.full((50, 11), 8, dtype=np.int64)  # rng=None used to fail on None.random
    assert set(shuffled_rr_release(votes, 1.0)) <= {5, 8}
    np.testing.assert_array_equal(shuffled_rr_release(votes, 1.0, rng=3),
                                  shuffled_rr_release(votes, 1.0, rng=np.random.default_rng(3)))


def test_darrm_partition_release_follows_gamma(mech):
    n = 40000
    votes = np.full((n, 11), 5, dtype=np.int64)  # L = 0: majority is class 5
    lab = release(METHODS, "darrm-partition", votes, votes, mech, np.random.default_rng(2), (5, 8))
    p_ok = mech["gamma_partition"][0] + (1 - mech["gamma_partition"][0]) / 2
    assert abs(np.mean(lab == 5) - p_ok) < 5 * math.sqrt(p_ok * (1 - p_ok) / n)


@pytest.mark.parametrize("dataset", ["mnist", "fashion-mnist"])
def test_cached_real_teachers_reproduce_the_pate_study_majority(dataset):
    got = cached_votes(dataset)
    if got is None:
        pytest.skip("PATE teachers' votes not cached (data/cache): run darrm-experiments pate first")
    vp, vn, labels, eps_t = got
    rows = run_real(dataset, vp, vn, labels, eps_t, ms=(3,), queries=(20,), draws=2)
    by = {r["method"]: r for r in rows}
    want = [np.mean(release(PATE_METHODS, "majority-private-parallel", vp[i], vn[i], {}, None, (5, 8)) == labels[i])
            for i in (query_indices(0, len(labels), 20, r) for r in range(2))]
    assert by["private-majority"]["accuracy_mean"] == pytest.approx(np.mean(want))
    assert by["nonprivate-majority"]["accuracy_mean"] >= 0.9
    assert 0.08 < eps_t < 0.1


def test_equal_total_rows_meet_their_total_and_the_designed_gamma_is_charged_within_it():
    from darrm.experiments.disjoint.real import EQUAL_TOTAL_METHODS, run_equal_total

    rng = np.random.default_rng(4)
    labels = rng.choice([5, 8], size=300)
    votes = np.where(rng.random((300, 11)) < 0.85, labels[:, None], 13 - labels[:, None])
    rows = run_equal_total("synthetic", votes, labels, total_eps=(2.0,), queries=(20,), draws=2)
    assert [r["method"] for r in rows] == list(EQUAL_TOTAL_METHODS)
    for r in rows:
        assert r["delta_total"] == 1e-5 and 0.0 <= r["accuracy_mean"] <= 1.0
    design, gnmax, confident = rows
    assert design["epsilon_charged"] <= 2.0  # the certified composition of the designed table
    # GNMax's calibrated σ re-composed by PLD: the calibration's own round trip (bisection precision)
    assert gnmax["epsilon_charged"] == pytest.approx(2.0, rel=1e-9)
    assert confident["epsilon_charged"] == pytest.approx(2.0, rel=1e-9)
    assert design["family"] and gnmax["answered_mean"] == 20 and confident["answered_mean"] <= 20
