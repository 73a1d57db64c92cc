"""Exact privacy of shuffled binary RR votes: brute force, shuffle-bound sandwich, inverse, MC audit."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from references.shuffle_exact import worst_case_delta
from scipy import stats

from darrm.accounting import RandomizedResponse, all_bounds, composition
from darrm.accounting.cli.votes import register
from darrm.accounting.votes import (
    ShuffledBinaryRR,
    compose_queries,
    largest_eps0,
    per_query_epsilon,
    shuffled_votes_guarantee,
    tight_total_epsilon,
)
from darrm.errors import ParameterError
from darrm.mechanism import aggregate_counts
from darrm.models.disjoint import DisjointParams, LocalRR, solve_gamma_opt_disjoint
from darrm.numerics.poisson_binomial import pmf


def _brute_delta(K: int, eps0: float, eps: float) -> float:
    q = math.exp(eps0) / (1 + math.exp(eps0))
    best = 0.0
    for n1 in range(K):
        others = [q] * n1 + [1 - q] * (K - 1 - n1)
        P, Pp = pmf(np.array([q, *others])), pmf(np.array([1 - q, *others]))
        e = math.exp(eps)
        best = max(best, np.maximum(P - e * Pp, 0).sum(), np.maximum(Pp - e * P, 0).sum())
    return best


@pytest.mark.parametrize("K,eps0", [(1, 1.0), (4, 0.5), (9, 2.0), (30, 1.0)])
def test_delta_matches_brute_force_over_all_datasets(K, eps0):
    m = ShuffledBinaryRR(K, eps0)
    for eps in (0.0, 0.1, 0.5, 0.9 * eps0, eps0):
        assert m.delta(eps) == pytest.approx(_brute_delta(K, eps0, eps), abs=1e-14)


@pytest.mark.parametrize("K,eps0", [(5, 1.0), (12, 3.0)])
def test_delta_matches_accounting_shuffle_exact_enumeration(K, eps0):
    eps = np.array([0.0, 0.2, 0.7])
    ref = worst_case_delta(RandomizedResponse(eps0, 2), K, eps).delta
    assert np.allclose([ShuffledBinaryRR(K, eps0).delta(e) for e in eps], ref, atol=1e-13)


@pytest.mark.parametrize("K", [10, 50, 400])
@pytest.mark.parametrize("eps0", [0.5, 2.0, 4.0])
def test_shuffle_bounds_sandwich_the_exact_delta(K, eps0):
    """Every valid upper bound of darrm.accounting.shuffle ≥ exact δ(ε) ≥ every valid lower bound."""
    m = ShuffledBinaryRR(K, eps0)
    for eps in (0.25 * eps0, 0.6 * eps0):
        exact = m.delta(eps)
        for b in all_bounds(RandomizedResponse(eps0, 2), K, eps=eps):
            if b.kind == "upper":
                assert b.delta >= exact - 1e-12, (b.method, eps, b.delta, exact)
            else:
                assert b.delta <= exact + 1e-12, (b.method, eps, b.delta, exact)


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_shuffle_bounds_sandwich_the_exact_epsilon(delta):
    K, eps0 = 60, 2.0
    exact = ShuffledBinaryRR(K, eps0).epsilon(delta)
    methods = ["erlingsson", "blanket-hoeffding", "blanket-bennett", "clones", "variation-ratio", "krr-exact"]
    for b in all_bounds(RandomizedResponse(eps0, 2), K, delta=delta, methods=methods):
        if b.kind == "upper":
            assert b.eps >= exact - 1e-9, b.method
        else:
            assert b.eps <= exact + 1e-9, b.method


def test_epsilon_is_the_safe_end_of_the_exact_inverse():
    m = ShuffledBinaryRR(101, 2.0)
    for delta in (1e-2, 1e-6, 1e-10):
        e = m.epsilon(delta)
        assert m.delta(e) <= delta < m.delta(e - 1e-9)
    assert m.epsilon(0.5) == 0.0 or m.delta(0.0) > 0.5
    assert ShuffledBinaryRR(3, 1.0).epsilon(0.0) == pytest.approx(1.0)  # pure DP: only ε0 works


def test_amplification_grows_with_the_number_of_members():
    es = [ShuffledBinaryRR(K, 2.0).epsilon(1e-6) for K in (11, 101, 1001)]
    assert es[0] > es[1] > es[2] and es[0] <= 2.0


def test_guarantee_over_queries_composes_the_pld_below_the_per_query_composition():
    g = shuffled_votes_guarantee(101, 2.0, 1e-6, queries=20)
    dt = -math.expm1(20 * math.log1p(-1e-6) + math.log1p(-1e-6))
    assert g.delta_total == pytest.approx(dt)
    assert g.eps_total_generic == composition.optimal_homogeneous_epsilon(g.eps_query, 1e-6, 20, dt)
    assert g.eps_total == tight_total_epsilon(101, 2.0, 20, dt)
    assert g.eps_query < g.eps_total < g.eps_total_generic / 2
    assert compose_queries(0.3, 1e-6, 1, 1e-6) == (0.3, 1e-6)


@pytest.mark.parametrize("queries", [1, 10])
def test_largest_eps0_meets_the_target_and_is_maximal(queries):
    K, te, td = 51, 1.0, 1e-5
    e0 = largest_eps0(K, te, td, queries)

    def total(x):
        return tight_total_epsilon(K, x, queries, td)

    assert total(e0) <= te < total(e0 * (1 + 1e-6))
    if queries == 1:
        assert e0 > te  # amplification


def test_krr_uses_the_best_valid_shuffle_bound():
    eps, method = per_query_epsilon(30, 2.0, 1e-4, classes=3)
    assert method != "exact" and 0 < eps <= 2.0


@pytest.mark.parametrize("bad,name", [
    (dict(K=0, eps0=1.0), "K"), (dict(K=5, eps0=0.0), "eps0"), (dict(K=5, eps0=float("nan")), "eps0"),
])
def test_bad_parameters_name_the_parameter(bad, name):
    with pytest.raises(ParameterError) as exc:
        ShuffledBinaryRR(**bad)
    assert exc.value.parameter == name
    with pytest.raises(ParameterError, match="delta"):
        ShuffledBinaryRR(5, 1.0).epsilon(1.5)


# ----------------------------------------------------------------------------- Monte-Carlo audit
def _audit_epsilon(gamma, K, eps0_used, n=120_000, seed=0, alpha=1e-6) -> float:
    """Lower confidence bound on the privacy loss of DaRRM_γ over shuffled ε0-RR votes.

    Simulates each member's RR vote (victim input 1 vs 0, every split n1 of the others),
    shuffles (= counts) and applies γ; Clopper–Pearson intervals, Bonferroni over the tests.
    """
    rng = np.random.default_rng(seed)
    q = math.exp(eps0_used) / (1 + math.exp(eps0_used))
    tests = K * 2 * 2
    a = alpha / tests
    best = -np.inf
    for n1 in range(K):
        ones = {}
        for victim in (0, 1):
            bits = np.array([victim] + [1] * n1 + [0] * (K - 1 - n1))
            keep = rng.random((n, K)) < q
            votes = np.where(keep, bits, 1 - bits)
            L = votes.sum(axis=1)  # the shuffler reveals only the count
            ones[victim] = int(aggregate_counts(L, gamma, rng).sum())
        for o in (0, 1):
            c = {v: ones[v] if o == 1 else n - ones[v] for v in (0, 1)}
            for x, y in ((1, 0), (0, 1)):
                lo = stats.beta.ppf(a, c[x], n - c[x] + 1) if c[x] > 0 else 0.0
                hi = stats.beta.ppf(1 - a, c[y] + 1, n - c[y]) if c[y] < n else 1.0
                if lo > 0:
                    best = max(best, math.log(lo / hi))
    return best


@pytest.fixture(scope="module")
def audited_gamma():
    t = solve_gamma_opt_disjoint(DisjointParams(5, LocalRR(1.0), 0.3, 0.0))
    assert t.violation <= 1e-12
    return t.gamma


def test_audit_of_shuffled_votes_stays_within_reported_epsilon(audited_gamma):
    assert _audit_epsilon(audited_gamma, 5, 1.0) <= 0.3


def test_audit_detects_silently_raised_local_epsilon(audited_gamma):
    assert _audit_epsilon(audited_gamma, 5, 1.6, seed=1) > 0.3


def test_audit_of_the_count_itself_is_within_the_exact_epsilon():
    """Releasing L (γ ≡ 1 would lose information): empirical loss of {L = l} events ≤ exact ε(δ)."""
    K, eps0, delta, n = 4, 1.0, 1e-2, 200_000
    m = ShuffledBinaryRR(K, eps0)
    eps = m.epsilon(delta)
    rng = np.random.default_rng(5)
    q = m.q
    a = 1e-6 / (K * (K + 1) * 2)
    worst = -np.inf
    for n1 in range(K):
        hist = {}
        for victim in (0, 1):
            bits = np.array([victim] + [1] * n1 + [0] * (K - 1 - n1))
            L = np.where(rng.random((n, K)) < q, bits, 1 - bits).sum(axis=1)
            hist[victim] = np.bincount(L, minlength=K + 1)
        for x, y in ((1, 0), (0, 1)):
            for l in range(K + 1):
                lo = stats.beta.ppf(a, hist[x][l], n - hist[x][l] + 1) if hist[x][l] else 0.0
                hi = stats.beta.ppf(1 - a, hist[y][l] + 1, n - hist[y][l])
                if lo - delta > 0:
                    worst = max(worst, math.log((lo - delta) / hi))
    assert worst <= eps


# ----------------------------------------------------------------------------- CLI
def _run(argv):
    p = argparse.ArgumentParser()
    register(p.add_subparsers())
    args = p.parse_args(argv)
    return args.func(args)


def test_account_votes_cli_json(capsys):
    assert _run(["account-votes", "--K", "101", "--eps0", "2", "--Q", "5", "--delta", "1e-6",
                 "--target-eps", "1", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    m = ShuffledBinaryRR(101, 2.0)
    # the CLI's JSON names (darrm.json_vocabulary): eps → epsilon
    assert rec["method"] == "exact" and rec["epsilon_query"] == m.epsilon(1e-6) and rec["queries"] == 5
    assert rec["epsilon_query"] <= rec["epsilon_total"] < rec["epsilon_total_generic"] and rec["largest_epsilon0"] > 0
    assert rec["composition"] == "composed privacy-loss distribution"


def test_account_votes_cli_text_and_errors(capsys):
    assert _run(["account-votes", "--K", "11", "--eps0", "1"]) == 0
    assert "exact hockey-stick" in capsys.readouterr().out
    with pytest.raises(ParameterError, match="eps0"):
        _run(["account-votes", "--K", "11"])
