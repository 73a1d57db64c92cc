"""One composition path: the session, `darrm account queries` and `composed_epsilon` give the same
number for one table and count; absurd counts and intervals are refused up front, naming the option;
fixed members get their own bound and no per-query figure without a caveat."""

from __future__ import annotations

import json
import resource
import time

import numpy as np
import pytest

import darrm
from darrm.accounting import LabellingSession
from darrm.accounting.queries import UNBOUNDED, composed_epsilon
from darrm.accounting.session import PrivacyBudgetExceeded
from darrm.errors import ParameterError
from darrm.gamma_file import save
from darrm.models.disjoint import DisjointParams, NonPrivate

PARAMS = darrm.PrivacyParams(11, 3, 0.0892, 1e-4)  # Δ > 0


@pytest.fixture(scope="module")
def sub():
    return darrm.solve(PARAMS, family="sub")


@pytest.fixture(scope="module")
def sub_file(sub, tmp_path_factory):
    path = tmp_path_factory.mktemp("one") / "sub.json"
    save(sub, path)
    return path


def test_session_cli_and_api_give_one_number(cli, sub, sub_file):
    Q, dt = 137, 0.02
    api = composed_epsilon(sub, Q, delta_total=dt, member_randomness="fresh")
    rc, out, err = cli("account", "queries", str(sub_file), "--queries", str(Q), "--delta-total", str(dt),
                       "--member-randomness", "fresh", "--json")
    assert rc == 0, err
    s = LabellingSession(sub, budget_epsilon=50.0, delta=dt, member_randomness="fresh", rng=0)
    s.label_counts(np.full(Q, 6))
    assert json.loads(out)["epsilon_total"] == api.epsilon == s.epsilon_spent == s.epsilon_for(Q)


def test_the_session_allows_exactly_the_queries_its_total_allows(sub):
    """The budget set to the composed total of 300 queries: the session answers all 300, not 279."""
    dt = 0.05
    budget = composed_epsilon(sub, 300, delta_total=dt, member_randomness="fresh").epsilon
    s = LabellingSession(sub, budget_epsilon=budget, delta=dt, member_randomness="fresh", rng=0)
    assert s.remaining_queries() >= 300
    s.label_counts(np.full(300, 5))
    assert s.queries == 300


@pytest.mark.parametrize("q", [10**30, -5, 2.7, "3"])
def test_epsilon_for_refuses_what_is_not_a_count(sub, q):
    s = LabellingSession(sub, budget_epsilon=5.0, delta=1e-2, member_randomness="fresh")
    with pytest.raises(ParameterError, match="queries"):
        s.epsilon_for(q)


def test_fixed_members_have_unbounded_remaining_queries_and_no_dp_event(sub):
    s = LabellingSession(sub, budget_epsilon=5.0, delta=1e-2, member_randomness="fixed")
    assert s.remaining_queries() == UNBOUNDED == "unbounded"
    with pytest.raises(ParameterError, match="member_randomness"):
        s.dp_event()


def test_a_huge_batch_is_refused_quickly_in_little_memory(sub):
    s = LabellingSession(sub, budget_epsilon=5.0, delta=1e-2, member_randomness="fresh")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    from darrm.accounting.queries import exceeds_quickly

    assert exceeds_quickly([(sub, 10**12)], 5.0, 1e-2)
    assert not exceeds_quickly([(sub, 3)], 5.0, 1e-2)  # the lower bound does not refuse what fits
    with pytest.raises(PrivacyBudgetExceeded):
        s.label_counts(np.full(10**6, 5))
    assert time.perf_counter() - t0 < 10.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # kB
    assert s.queries == 0


def test_deterministic_members_on_disjoint_shards_default_to_fresh_and_refuse_fixed_saying_why():
    table = darrm.solve(DisjointParams(5, NonPrivate(), target_eps=1.0, target_delta=1e-4))
    s = LabellingSession(table, budget_epsilon=5.0, delta=1e-3)
    assert s.member_randomness == "fresh"
    with pytest.raises(ParameterError, match="DaRRM's own coins"):
        LabellingSession(table, budget_epsilon=5.0, delta=1e-3, member_randomness="fixed")


@pytest.mark.parametrize(("extra", "option"), [
    (["--interval", "1e-20"], "interval"),
    (["--queries", "1e12"], "queries"),
    (["--queries", "1e9", "--interval", "1e-4"], "interval"),
])
def test_absurd_inputs_are_refused_with_one_line(cli, sub_file, extra, option):
    argv = ["account", "queries", str(sub_file), "--delta-total", "0.5", "--member-randomness", "fresh"]
    if "--queries" not in extra:
        argv += ["--queries", "10"]
    t0 = time.perf_counter()
    rc, out, err = cli(*argv, *extra)
    assert rc == 2 and out == "" and option in err and len(err.strip().splitlines()) == 1, (rc, out, err)
    assert time.perf_counter() - t0 < 30.0


def test_fixed_members_total_comes_with_its_caveat_and_no_per_query_figure(cli, sub_file):
    rc, out, _ = cli("account", "queries", str(sub_file), "--queries", "2", "--delta-total", "1e-3",
                     "--member-randomness", "fixed")
    assert rc == 0 and "members-shared-composition" in out
    assert "kairouz-oh-viswanath-optimal" not in out and "no per-query composition applies" in out
    rc, out, _ = cli("account", "queries", str(sub_file), "--queries", "2", "--delta-total", "1e-3",
                     "--member-randomness", "fixed", "--json")
    doc = json.loads(out)
    assert "epsilon_total_generic" not in doc and "per-query" in doc["note"]


def test_a_ledger_edited_to_other_terms_is_refused_by_its_journal(sub, tmp_path):
    from darrm.accounting.ledger_file import journal_path
    from darrm.accounting.session import SessionFileError, _state_checksum

    path = tmp_path / "ledger.json"
    s = LabellingSession(sub, budget_epsilon=3.0, delta=1e-2, member_randomness="fresh", path=path, rng=0)
    s.label_counts([5, 6])
    s.close()
    line = json.loads(journal_path(path).read_text().splitlines()[-1])
    assert line["accountant"] == s.bound and line["budget_epsilon"] == 3.0 and line["delta"] == 1e-2
    for edit in ({"member_randomness": "fixed", "bound": "members-shared-composition"}, {"budget_epsilon": 30.0},
                 {"delta": 0.2}):
        state = json.loads(path.read_text())
        state.update(edit)
        state["checksum"] = _state_checksum(state)
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(state))
        journal_path(edited).write_text(journal_path(path).read_text())
        with pytest.raises(SessionFileError, match="journal"):
            LabellingSession.load(edited, sub)
    again = LabellingSession.load(path, sub)  # the unedited ledger resumes
    assert again.queries == 2
    again.close()
