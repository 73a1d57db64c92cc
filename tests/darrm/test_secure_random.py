"""Secure mode: DaRRM's coins from the OS CSPRNG, exact Bernoulli draws."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import darrm
from darrm import secure_random
from darrm.errors import ParameterError
from darrm.mechanism import aggregate

N = 200_000


def _within_6_sigma(hits: int, n: int, p: float) -> bool:
    sd = math.sqrt(n * p * (1.0 - p))
    return abs(hits - n * p) <= 6.0 * sd + 1e-9  # at 6σ a false alarm has probability ~2e-9


@pytest.mark.parametrize("p", [0.0, 1e-300, 0.001, 1 / 3, 0.5, 0.9, 1.0 - 2.0**-53, 1.0])
def test_bernoulli_frequencies(p):
    hits = int(secure_random.bernoulli(np.full(N, p)).sum())
    assert _within_6_sigma(hits, N, p), (p, hits)
    if p == 0.0:
        assert hits == 0
    if p == 1.0:
        assert hits == N


def test_bernoulli_per_entry_probabilities_and_shape():
    p = np.array([[0.1, 0.7], [0.25, 0.95]])
    draws = np.stack([secure_random.bernoulli(p) for _ in range(N // 4)])
    assert draws.shape == (N // 4, 2, 2) and draws.dtype == bool
    for (i, j), q in np.ndenumerate(p):
        assert _within_6_sigma(int(draws[:, i, j].sum()), N // 4, q)


def test_fair_coins_frequency():
    c = secure_random.fair_coins(N)
    assert c.shape == (N,) and set(np.unique(c)) <= {0, 1}
    assert _within_6_sigma(int(c.sum()), N, 0.5)
    assert secure_random.fair_coins(0).shape == (0,)


def _fixed_urandom(monkeypatch, words):
    data = b"".join(int(w).to_bytes(8, "little") for w in words)
    monkeypatch.setattr(secure_random.os, "urandom", lambda n: data[:n])


def test_the_comparison_is_exact_on_the_64_bit_words(monkeypatch):
    # p = 1/2: A = 2**63; U64 < A releases 1, U64 > A releases 0, a tie looks at the remainder f = 0
    _fixed_urandom(monkeypatch, [2**63 - 1, 2**63, 2**63 + 1, 0, 2**64 - 1])
    assert secure_random.bernoulli(np.full(5, 0.5)).tolist() == [True, False, False, True, False]


def test_a_tie_is_decided_by_the_exact_remainder(monkeypatch):
    p = 2.0**-70 * 3  # p·2**64 = 3/64: A = 0, f = 3/64
    _fixed_urandom(monkeypatch, [0, 0])
    monkeypatch.setattr(secure_random.secrets, "randbits", lambda k: 2 if k == 6 else pytest.fail(f"k={k}"))
    assert secure_random.bernoulli([p, p]).tolist() == [True, True]
    monkeypatch.setattr(secure_random.secrets, "randbits", lambda k: 3)
    assert secure_random.bernoulli([p]).tolist() == [False]


def test_bad_probabilities_are_refused():
    for bad in ([-0.1], [1.5], [np.nan]):
        with pytest.raises(ParameterError, match="^p:"):
            secure_random.bernoulli(bad)


def test_secure_aggregate_ignores_rng_and_uses_the_os():
    gamma = np.array([1.0, 0.3, 0.3, 1.0])
    votes = np.random.default_rng(0).integers(0, 2, size=(2000, 3))
    rng = np.random.default_rng(7)
    before = rng.bit_generator.state
    a = aggregate(votes, gamma, rng=rng, secure=True)
    assert rng.bit_generator.state == before  # nothing drawn from rng
    b = aggregate(votes, gamma, rng=7, secure=True)
    assert a.shape == b.shape == (2000,) and not np.array_equal(a, b)  # same seed, fresh OS randomness
    L = votes.sum(axis=1)
    assert np.array_equal(a[(L == 0) | (L == 3)], (L[(L == 0) | (L == 3)] >= 2).astype(int))  # γ = 1 keeps


def test_secure_aggregate_through_the_facade(monkeypatch):
    table = darrm.solve(darrm.PrivacyParams(K=3, m=1, eps=0.5, member_delta=0.0), family="const")
    calls = []
    real = os.urandom
    monkeypatch.setattr(secure_random.os, "urandom", lambda n: calls.append(n) or real(n))
    labels = darrm.aggregate_counts(np.array([0, 1, 2, 3] * 50), table, rng=0, secure=True)
    assert labels.shape == (200,) and calls  # the coins came from os.urandom


def test_cli_aggregate_secure_labels_and_refuses_a_seed_with_it(tmp_path, capsys):
    import darrm
    from darrm import cli

    t = darrm.solve(darrm.PrivacyParams(11, 3, 0.1, 1e-5))
    darrm.save(t, tmp_path / "g.json")
    np.save(tmp_path / "v.npy", np.ones((5, 11), dtype=int))
    assert cli.main(["aggregate", str(tmp_path / "g.json"), "--votes", str(tmp_path / "v.npy"), "--secure"]) == 0
    out = capsys.readouterr().out.split()
    assert len(out) == 5 and set(out) <= {"0", "1"}
    argv = ["aggregate", str(tmp_path / "g.json"), "--votes", str(tmp_path / "v.npy"), "--secure", "--seed", "1"]
    rc = cli.main(argv)
    assert rc == 2 and "seed" in capsys.readouterr().err
