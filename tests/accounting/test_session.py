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
from darrm.accounting.composition import optimal_homogeneous_epsilon
from darrm.accounting.queries import BOUND_FIXED_SHARED, BOUND_FRESH, composed_epsilon
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
def test_epsilon_is_the_tight_composition_and_the_generic_bound_matches_an_independent_one(table, batches):
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=50.0, delta=1e-3, rng=0)
    assert s.per_query == (pytest.approx(0.3), PARAMS.delta)
    assert s.epsilon_spent == 0.0 and s.bound == BOUND_FRESH
    for b in batches:
        assert s.label(_votes(b)).shape == (b,)
    Q = sum(batches)
    assert s.queries == Q and s.state()["batches"] == [[s.fingerprint, b] for b in batches]
    generic = s.generic_epsilon_for(Q)
    assert generic == pytest.approx(brute_epsilon(0.3, PARAMS.delta, Q, 1e-3), abs=1e-9)
    # the session's ε is composed_epsilon's, to the bit (one composition path), and never above the
    # generic bound (one of the closed forms it takes the minimum with)
    ref = composed_epsilon(table, Q, delta_total=1e-3, member_randomness="fresh")
    assert s.epsilon_spent == ref.epsilon
    assert ref.lower <= generic and s.epsilon_spent <= generic
    assert s.get_epsilon(1e-2) < s.epsilon_spent  # a larger δ buys a smaller ε
    assert s.epsilon_spent <= darrm.accounting.kairouz_general(0.3, PARAMS.delta, Q, 1e-3)[0] + 1e-12


def test_tight_accountant_refuses_a_batch_before_release_where_the_generic_one_would_refuse_earlier(table):
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=3.0, delta=1e-3, rng=np.random.default_rng(1))
    r = s.remaining_queries()
    generic_fit = max(q for q in range(1, 400) if s.generic_epsilon_for(q) <= 3.0)
    assert r > generic_fit  # the table's own pair buys more queries than the generic bound
    assert s.epsilon_for(r) <= 3.0 < s.epsilon_for(r + 1)
    with pytest.raises(PrivacyBudgetExceeded, match="nothing was released"):
        s.label(_votes(r + 1))
    assert s.queries == 0 and s.state()["batches"] == []
    assert s.label(_votes(r)).shape == (r,) and s.remaining_queries() == 0


def test_fixed_members_report_the_members_post_processing_bound_for_any_count(table):
    s = LabellingSession(table, member_randomness="fixed", budget_epsilon=5.0, delta=1e-3, rng=0)
    assert s.bound == BOUND_FIXED_SHARED
    member = optimal_homogeneous_epsilon(PARAMS.eps, PARAMS.member_delta, PARAMS.K, 1e-3)
    assert s.epsilon_for(1) == s.epsilon_for(10_000) == member
    s.label(_votes(50))
    assert s.epsilon_spent == member and s.state()["member_randomness"] == "fixed"
    with pytest.raises(darrm.ParameterError, match="member_randomness"):
        s.pld()


def test_member_randomness_is_required(table):
    with pytest.raises(darrm.ParameterError, match="member_randomness"):
        LabellingSession(table, budget_epsilon=1.0, delta=1e-4)
    with pytest.raises(darrm.ParameterError, match="member_randomness"):
        LabellingSession(table, budget_epsilon=1.0, delta=1e-4, member_randomness="sometimes")


def test_refusal_past_the_budget_releases_nothing(table, tmp_path):
    path = tmp_path / "ledger.json"
    rng = np.random.default_rng(5)
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=2.0, delta=1e-4, rng=rng, path=path)
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
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=5.0, delta=1e-4, rng=0)
    with pytest.raises(darrm.ParameterError):
        s.label(np.full((2, 11), 2))
    assert s.queries == 0 and s.label(np.zeros((0, 11), dtype=int)).shape == (0,)


def test_a_delta_below_the_composed_floor_refuses(table):
    """Each query has the table's infinite-loss mass y₀ > 0 (Δ > 0): 4 queries cannot reach
    δ_total = 2.5·y₀ < 1 − (1 − y₀)⁴ at any ε."""
    from darrm.accounting.queries import table_profile

    y0 = table_profile(table).infinite_loss_mass
    assert y0 > 0
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=100.0, delta=2.5 * y0, rng=0)
    assert math.isinf(s.epsilon_for(4)) and math.isfinite(s.epsilon_for(2))
    with pytest.raises(PrivacyBudgetExceeded):
        s.label(_votes(4))


def test_save_load_round_trip_and_refusal_of_another_table(table, tmp_path):
    path = tmp_path / "ledger.json"
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=3.0, delta=1e-4, path=path, secure=True)
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
        # would reset the ledger
        LabellingSession(table, member_randomness="fresh", budget_epsilon=3.0, delta=1e-4, path=path)
    edited = json.loads(path.read_text())
    edited["queries"] = 0
    path.write_text(json.dumps(edited))
    with pytest.raises(SessionFileError, match="checksum"):
        LabellingSession.load(path, table)


def test_an_uncertified_table_is_refused():
    bad = darrm.GammaTable(PARAMS, np.ones(12), "custom", violation=0.0)
    with pytest.raises(darrm.CertificationError):
        LabellingSession(bad, member_randomness="fresh", budget_epsilon=1.0, delta=1e-4)


def test_secure_sessions_ignore_rng(table):
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=5.0, delta=1e-4, rng=rng, secure=True)
    assert s.label(_votes(3)).shape == (3,) and rng.bit_generator.state == before


def test_dp_event_composes_q_times_in_every_dp_accounting_accountant(pure_table, table):
    from dp_accounting.rdp import rdp_privacy_accountant

    s = LabellingSession(pure_table, member_randomness="fresh", budget_epsilon=20.0, delta=1e-5, rng=0)
    s.label(_votes(20))
    event = s.dp_event()
    reference = brute_epsilon(0.3, 0.0, 20, 1e-5)  # 20 pure 0.3-DP queries, exact (≈ 4.9, not 0.3)
    replace_one = dp_accounting.NeighboringRelation.REPLACE_ONE
    pld_acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=replace_one)
    rdp_acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=replace_one)
    for acc in (pld_acc, rdp_acc):
        assert acc.supports(event)
        acc.compose(event)
    assert reference <= pld_acc.get_epsilon(1e-5) < reference + 0.01  # PLD: pessimistic, tight
    assert reference <= rdp_acc.get_epsilon(1e-5) <= 20 * 0.3  # RDP: looser, still 20 queries
    assert s.epsilon_spent <= reference * (1 + 1e-9)  # the tight accountant is never worse
    for acc in (pld_acc, rdp_acc):  # the export, in every accountant that accepts it: never below darrm's figure
        assert acc.get_epsilon(1e-5) >= s.epsilon_spent * (1 - 1e-9)
    approximate = LabellingSession(table, member_randomness="fresh", budget_epsilon=1.0, delta=1e-4)
    unsupported = approximate.dp_event()
    assert isinstance(unsupported, dp_accounting.UnsupportedDpEvent)
    for acc in (pld_privacy_accountant.PLDAccountant(), rdp_privacy_accountant.RdpAccountant()):
        assert not acc.supports(unsupported)


def test_pld_export_is_the_sessions_composition_and_composes_at_dp_accountings_default(table):
    """The export is the same connect-the-dots composition, by dp_accounting's FFT instead of darrm's
    (which also allows 1e-12 for the FFT's rounding): equal to 1e-8 relative.  Built at
    dp_accounting's default interval, it composes with a PLD built at its default."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=20.0, delta=1e-4, rng=0)
    s.label(_votes(7))
    pld = s.pld()
    assert pld.get_epsilon_for_delta(1e-4) == pytest.approx(s.epsilon_spent, rel=1e-8)
    gauss = pldm.from_gaussian_mechanism(3.0, neighboring_relation=s.neighboring_relation.dp_accounting
                                         if s.neighboring_relation.name in ("ADD_OR_REMOVE_ONE", "REPLACE_ONE")
                                         else dp_accounting.NeighboringRelation.REPLACE_ONE)
    both = pld.compose(gauss)
    assert both.get_epsilon_for_delta(1e-4) >= s.epsilon_spent * (1 - 1e-8)


def test_a_version_1_ledger_resumes_only_when_member_randomness_is_given(table, tmp_path):
    from darrm.accounting.session import _state_checksum

    path = tmp_path / "old.json"
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=3.0, delta=1e-4, path=path, rng=0)
    s.label(_votes(2))
    s.close()
    state = json.loads(path.read_text())
    for key in ("member_randomness", "batches", "bound"):
        del state[key]
    state["format"] = "darrm-labelling-session/1"
    state["checksum"] = _state_checksum(state)
    path.write_text(json.dumps(state))
    with pytest.raises(SessionFileError, match="member_randomness"):
        LabellingSession.load(path, table)
    # its journal charged the queries to fresh members: resuming them as fixed is refused
    with pytest.raises(SessionFileError, match="journal"):
        LabellingSession.load(path, table, member_randomness="fixed")
    # a journal of that era recorded no terms: then the member randomness given is taken
    from darrm.accounting.ledger_file import journal_path

    j = journal_path(path)
    lines = [json.loads(x) for x in j.read_text().splitlines()]
    j.write_text("".join(json.dumps({k: r[k] for k in ("fingerprint", "n", "total")}) + "\n" for r in lines))
    t = LabellingSession.load(path, table, member_randomness="fixed")
    assert t.queries == 2 and t.member_randomness == "fixed" and t.state()["batches"] == [[t.fingerprint, 2]]
    t.close()


@pytest.mark.parametrize("form", ["votes", "counts"])
def test_a_batch_of_millions_far_past_the_budget_is_refused_at_once(table, tmp_path, form):
    """ε(δ_total) is non-decreasing in the count, so a batch whose first queries already spend more
    than the budget is refused from them: a 3-million-query batch takes seconds, not the minute and
    gigabytes of composing its PLD 3·10⁶ times; nothing is charged or released."""
    import time

    path = tmp_path / "ledger.json"
    rng = np.random.default_rng(5)
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=2.0, delta=1e-4, rng=rng, path=path)
    before_state, before_file = rng.bit_generator.state, path.read_bytes()
    n = 3_000_000
    batch = np.ones((n, 11), dtype=np.int8) if form == "votes" else np.full(n, 11)
    t0 = time.monotonic()
    with pytest.raises(PrivacyBudgetExceeded, match=r"^budget_epsilon: 3000000 more queries .*already do.*nothing "
                                                    r"was released"):
        s.label(batch) if form == "votes" else s.label_counts(batch)
    assert time.monotonic() - t0 < 5
    assert s.epsilon_for(1000) > 2.0  # a prefix really is past the budget (ε grows with the count)
    assert s.queries == 0 and rng.bit_generator.state == before_state and path.read_bytes() == before_file
