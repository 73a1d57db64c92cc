"""The synthetic disjoint study's accuracies are probabilities: in [0, 1] even where the
log-space binomial pmf's rounding makes a row's mass exceed 1 (K = 10001, issue 23)."""

from __future__ import annotations

import numpy as np

from darrm.experiments.disjoint.synthetic import agreement_grid, mean_accuracy, vote_pmfs


def test_accuracy_of_a_certain_release_is_exactly_one_at_large_K():
    alpha = vote_pmfs(10001, agreement_grid())
    assert abs(alpha.sum(axis=1) - 1.0).max() > 0.0  # the rounding this guards against is real
    assert mean_accuracy(alpha, np.ones(10002)) == 1.0


def test_accuracies_are_probabilities_for_every_weight_vector():
    rng = np.random.default_rng(0)
    for K in (11, 1001, 10001):
        alpha = vote_pmfs(K, agreement_grid())
        for w in (np.zeros(K + 1), np.ones(K + 1), rng.uniform(size=K + 1),
                  (np.arange(K + 1) >= (K + 1) // 2).astype(float)):
            acc = mean_accuracy(alpha, w)
            assert 0.0 <= acc <= 1.0
    # a majority of votes that agree with probability a ≥ 0.55 at K = 10001 is right almost surely
    K = 10001
    assert mean_accuracy(vote_pmfs(K, agreement_grid()), (np.arange(K + 1) >= (K + 1) // 2).astype(float)) <= 1.0
