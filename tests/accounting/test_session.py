"""LabellingSession: a budgeted ledger over a certified γ table."""

from __future__ import annotations

import json
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant

import darrm
from darrm.accounting import LabellingSession, PrivacyBudgetExceeded
from darrm.accounting.session import SessionFileError

PARAMS = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)  # per query (0.3, ≈3e-5)
PURE = darrm.PrivacyParams(K=11, m=3, eps=0.1)


@pytest.fixture(scope="module")
def table():
    return darrm.solve(PARAMS, family="sub")


@pytest.fixture(scope="module")
def pure_table():
    return darrm.solve(PURE, family="sub")


def _votes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 2, size=(n, 11))


def brute_epsilon(eps, delta, k, delta_total):
    """Kairouz et al. 2015 Thm 3.3 by its binomial formula, inverted by bisection (independent)."""
    def delta_of(t):
        pure = sum(math.comb(k, l) * max(0.0, math.exp((k - l) * eps) - math.exp(t + l * eps))
                   for l in range(k + 1)) / (1.0 + math.exp(eps)) ** k
        return 1.0 - (1.0 - delta) ** k * (1.0 - pure)

    lo, hi = 0.0, k * eps
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if delta_of(mid) <= delta_total else (mid, hi)
    return hi


@pytest.mark.parametrize("batches", [[1], [3, 2], [5, 5, 10]])
def test_epsilon_matches_an_independent_optimal_composition(table, batches):
    s = LabellingSession(table, budget_epsilon=50.0, delta=1e-3, rng=0)
    assert s.per_query == (pytest.approx(0.3), PARAMS.delta)
    assert s.epsilon_spent == 0.0
    for b in batches:
        assert s.label(_votes(b)).shape == (b,)
    Q = sum(batches)
    assert s.queries == Q
    ref = brute_epsilon(0.3, PARAMS.delta, Q, 1e-3)
    assert s.epsilon_spent == pytest.approx(ref, abs=1e-9)
    assert s.get_epsilon(1e-2) < s.epsilon_spent  # a larger δ buys a smaller ε
    assert s.epsilon_spent <= darrm.accounting.kairouz_general(0.3, PARAMS.delta, Q, 1e-3)[0] + 1e-12


def test_refusal_past_the_budget_releases_nothing(table, tmp_path):
    path = tmp_path / "ledger.json"
    rng = np.random.default_rng(5)
    s = LabellingSession(table, budget_epsilon=2.0, delta=1e-4, rng=rng, path=path)
    r = s.remaining_queries()
    assert r > 1 and s.epsilon_for(r) <= 2.0 < s.epsilon_for(r + 1)
    before_state, before_file = rng.bit_generator.state, path.read_bytes()
    with pytest.raises(PrivacyBudgetExceeded, match="nothing was released"):
        s.label(_votes(r + 1))
    assert isinstance(PrivacyBudgetExceeded("x"), darrm.DarrmError)
    assert s.queries == 0 and rng.bit_generator.state == before_state and path.read_bytes() == before_file
    assert s.label(_votes(r)).shape == (r,)
    assert s.remaining_queries() == 0 and s.epsilon_spent <= 2.0
    with pytest.raises(PrivacyBudgetExceeded):
        s.label(_votes(1))
    assert s.queries == r


def test_bad_votes_are_not_charged(table):
    s = LabellingSession(table, budget_epsilon=5.0, delta=1e-4, rng=0)
    with pytest.raises(darrm.ParameterError):
        s.label(np.full((2, 11), 2))
    assert s.queries == 0 and s.label(np.zeros((0, 11), dtype=int)).shape == (0,)


def test_a_delta_below_the_composed_floor_refuses(table):
    s = LabellingSession(table, budget_epsilon=100.0, delta=1e-4, rng=0)  # 1-(1-3e-5)^Q > 1e-4 for Q ≥ 4
    assert math.isinf(s.epsilon_for(4))
    with pytest.raises(PrivacyBudgetExceeded):
        s.label(_votes(4))


def test_save_load_round_trip_and_refusal_of_another_table(table, tmp_path):
    path = tmp_path / "ledger.json"
    s = LabellingSession(table, budget_epsilon=3.0, delta=1e-4, path=path, secure=True)
    s.label(_votes(2))
    state = json.loads(path.read_text())
    assert state["queries"] == 2 and state["table_fingerprint"] == s.fingerprint
    s.close()  # one live session per ledger (test_session_locking.py)
    t = LabellingSession.load(path, table)
    assert (t.queries, t.secure, t.budget_epsilon, t.delta) == (2, True, 3.0, 1e-4)
    assert t.epsilon_spent == s.epsilon_spent
    t.label(_votes(1))
    assert json.loads(path.read_text())["queries"] == 3  # resumed sessions keep recording
    t.close()
    other = darrm.solve(PARAMS, family="const")
    with pytest.raises(SessionFileError, match="another"):
        LabellingSession.load(path, other)
    with pytest.raises(SessionFileError, match="exists"):
        LabellingSession(table, budget_epsilon=3.0, delta=1e-4, path=path)  # would reset the ledger
    edited = json.loads(path.read_text())
    edited["queries"] = 0
    path.write_text(json.dumps(edited))
    with pytest.raises(SessionFileError, match="checksum"):
        LabellingSession.load(path, table)


def test_an_uncertified_table_is_refused():
    bad = darrm.GammaTable(PARAMS, np.ones(12), "custom", violation=0.0)
    with pytest.raises(darrm.CertificationError):
        LabellingSession(bad, budget_epsilon=1.0, delta=1e-4)


def test_secure_sessions_ignore_rng(table):
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    s = LabellingSession(table, budget_epsilon=5.0, delta=1e-4, rng=rng, secure=True)
    assert s.label(_votes(3)).shape == (3,) and rng.bit_generator.state == before


def test_dp_event_pure_dp_matches_dp_accounting(pure_table, table):
    s = LabellingSession(pure_table, budget_epsilon=20.0, delta=1e-5, rng=0)
    s.label(_votes(20))
    event = s.dp_event()
    assert isinstance(event, dp_accounting.SelfComposedDpEvent) and event.count == 20
    acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.ComposedDpEvent([event.event] * event.count))  # see dp_event's caveat
    pld = acc.get_epsilon(1e-5)
    assert s.epsilon_spent <= pld + 1e-9 and pld - s.epsilon_spent < 0.01  # PLD is a pessimistic upper bound
    assert s.epsilon_spent == pytest.approx(brute_epsilon(0.3, 0.0, 20, 1e-5), abs=1e-9)
    approximate = LabellingSession(table, budget_epsilon=1.0, delta=1e-4)
    assert isinstance(approximate.dp_event(), dp_accounting.UnsupportedDpEvent)
