"""One accountant for tables that record a total: every door gives the same number, bit for bit.

For a designed table of members on disjoint shards, one of members on shared data with Δ > 0 and one
of grouped members, each saved and loaded: the labelling session, ``darrm account queries --json``,
:func:`darrm.accounting.composed_epsilon` and :func:`darrm.verify_charged_total` agree (``==``) at the
recorded count, and the first three at another count and δ.  The certified Gaussian-DP dominance a
design charges is a closed form *of the accountant* (read from the table, never from its record): it is
checked point by point in 40-digit mpmath, never below dp_accounting's optimistic composition of the
enumerated pairs, and a deliberately halved μ is caught by that check.  An edited record never lowers
a total: a smaller μ or total is refused, a larger μ is ignored, a larger total (an earlier accountant's
charge) is accepted and the doors charge the recomputed one.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

import darrm
from darrm.accounting import LabellingSession
from darrm.accounting import queries as q
from darrm.accounting.budget import groups, parts, shard_groups, weighted_shards
from darrm.accounting.budget.disjoint import design_disjoint
from darrm.accounting.budget.shared import design_shared
from darrm.accounting.cli import number
from darrm.budget.group_clouds import record_group_clouds
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.mechanism import output_weights
from darrm.models.disjoint import NonPrivate
from darrm.models.groups import GroupParams
from darrm.models.shard_groups import ShardGroupParams
from darrm.models.weighted_shards import WeightedShardParams
from darrm.prior import IIDPrior

DISJOINT_BUDGET = TotalBudget(2.0, 1e-5, 100)


def _design(kind: str) -> darrm.GammaTable:
    """A designed table, each by its model's designer, restricted to one cheap shape (seconds)."""
    if kind == "disjoint":
        return design_disjoint(11, NonPrivate(), DISJOINT_BUDGET, IIDPrior(0.85), shapes=("threshold",)).table
    if kind == "shared":
        return design_shared(darrm.PrivacyParams(5, 1, 0.3, 1e-4), TotalBudget(1.5, 1e-3, 3), IIDPrior(0.75),
                             families=("rr",)).table
    return groups.design(GroupParams([(2, 0.2, 0.0), (3, 0.5, 0.0)], 1.0, 0.0), TotalBudget(2.0, 1e-5, 20),
                         IIDPrior(0.75), shapes=("const",)).table


@pytest.fixture(scope="module")
def designed(tmp_path_factory):
    """kind → (the table loaded from its file, the file, its recorded (Q, δ, ε))."""
    out = {}
    for kind in ("disjoint", "shared", "groups"):
        t = _design(kind)
        path = tmp_path_factory.mktemp("doors") / f"{kind}.json"
        darrm.save(t, path)
        rec = t.info.get("total_budget") or t.info["group_budgets"]["groups"][0]
        out[kind] = (darrm.load(path), path, (int(rec["queries"]), float(rec["delta"]), rec["composed_epsilon"]))
    return out


def _doors(cli, table, path, queries: int, delta: float) -> tuple[float, float, float]:
    api = q.composed_epsilon(table, queries, delta_total=delta, member_randomness="fresh").epsilon
    rc, out, err = cli("account", "queries", str(path), "--queries", str(queries), "--delta-total", str(delta),
                       "--member-randomness", "fresh", "--json")
    assert rc == 0, err
    session = LabellingSession(table, budget_epsilon=1e3, delta=delta, member_randomness="fresh", rng=0)
    return json.loads(out)["epsilon_total"], api, session.epsilon_for(queries)


@pytest.mark.parametrize("kind", ["disjoint", "shared", "groups"])
def test_session_cli_api_and_verify_agree_at_the_recorded_count_and_another(designed, cli, kind):
    table, path, (Q, dt, recorded) = designed[kind]
    cli_eps, api, session = _doors(cli, table, path, Q, dt)
    assert cli_eps == api == session == darrm.verify_charged_total(table) == recorded
    other = _doors(cli, table, path, 2 * Q + 1, dt / 10)
    assert other[0] == other[1] == other[2] > recorded
    # the queries the table was designed for fit its budget in a session, exactly as recorded
    s = LabellingSession(table, budget_epsilon=recorded, delta=dt, member_randomness="fresh", rng=0)
    s.label(np.ones((Q, table.K), dtype=int))
    assert s.epsilon_spent == recorded


def enumerated_points(gamma: np.ndarray) -> np.ndarray:
    """Non-private members on disjoint shards: (x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) for every pair of vote
    counts (L, L + 1), both outputs and both directions (written here from Algorithm 1's weights)."""
    w = output_weights(gamma)
    pts = []
    for n in range(len(gamma) - 1):
        for a, b in ((w[n], w[n + 1]), (1 - w[n], 1 - w[n + 1])):
            pts += [(a, b), (b, a)]
    return np.array(pts)


def test_the_gdp_closed_form_is_the_accountants_and_independently_valid(designed, budget_check):
    table, _, _ = designed["disjoint"]
    Q, dt = 400, 1e-6
    mu = q.table_gdp(table)
    assert math.isfinite(mu)
    eps = q.gdp_bound([(table, Q)], dt, True)
    pts = enumerated_points(table.gamma)
    # 40-digit mpmath: every point under the μ-Gaussian curve, and μ√Q-GDP meets (eps, δ)
    budget_check.check_gdp_total(pts, mu, TotalBudget(eps, dt, Q))
    # never below dp_accounting's rounded-down composition of the enumerated pairs (a lower bound on the exact)
    assert budget_check.composed_pair(pts, Q, dt, pessimistic=False) <= eps
    # δ at that ε: rounded up, within the δ asked for
    assert q.gdp_bound([(table, Q)], eps, False) <= dt * (1 + 1e-9)
    # on the coarsest grid the PLD is loose and the GDP certificate is what every door reports
    coarse = q.composed_epsilon(table, Q, delta_total=dt, member_randomness="fresh", value_discretization_interval=0.1)
    assert coarse.epsilon <= eps
    fine = q.composed_epsilon(table, Q, delta_total=dt, member_randomness="fresh")
    assert fine.epsilon <= eps and fine.epsilon <= coarse.epsilon * (1 + 1e-12)


def test_a_halved_gdp_parameter_is_caught_by_the_independent_check(designed, budget_check, monkeypatch):
    """The check above is not vacuous: a certificate claiming μ/2 fails it."""
    table, _, _ = designed["disjoint"]
    Q, dt = 400, 1e-6
    mu = q.table_gdp(table)
    monkeypatch.setattr(q, "table_gdp", lambda t: mu / 2)
    broken = q.gdp_bound([(table, Q)], dt, True)
    with pytest.raises(AssertionError):
        budget_check.check_gdp_total(enumerated_points(table.gamma), mu / 2, TotalBudget(broken, dt, Q))


def _edited(table: darrm.GammaTable, **change) -> darrm.GammaTable:
    return dataclasses.replace(table, info={**table.info, "total_budget": {**table.info["total_budget"], **change}})


def test_an_edited_record_never_lowers_a_total(designed, cli, tmp_path):
    table, _, (Q, dt, recorded) = designed["disjoint"]
    tb = table.info["total_budget"]
    # a smaller μ or total than the table's own is refused, by the verifier and by the session
    for forged in (_edited(table, target={**tb["target"], "mu": tb["target"]["mu"] * 0.5}),
                   _edited(table, composed_epsilon=recorded * 0.5)):
        with pytest.raises(darrm.CertificationError):
            darrm.verify_charged_total(forged)
        with pytest.raises(darrm.CertificationError):
            LabellingSession(forged, budget_epsilon=DISJOINT_BUDGET.epsilon, delta=dt, rng=0)
    with pytest.raises(darrm.CertificationError, match="re-design the table with this version"):
        darrm.verify_charged_total(_edited(table, composed_epsilon=recorded * 0.5))
    # a larger μ is not read; a larger total (an earlier accountant's charge) is accepted, and every door
    # charges the recomputed total, saved, loaded and checked the same way
    for edit in ({"target": {**tb["target"], "mu": tb["target"]["mu"] * 2}},
                 {"composed_epsilon": min(DISJOINT_BUDGET.epsilon, recorded * 1.1)}):
        path = tmp_path / "edited.json"
        darrm.save(_edited(table, **edit), path)
        loaded = darrm.load(path)
        assert darrm.verify_charged_total(loaded) == recorded
        assert _doors(cli, loaded, path, Q, dt) == (recorded, recorded, recorded)


def test_a_recorded_per_query_pair_enters_the_accountant_only_where_the_profile_confirms_it(designed):
    """A groups design's generic charge records (ε_q, δ_q); the accountant uses it as a closed-form point
    only when δ_γ(ε_q) ≤ δ_q on the table's own (outward-rounded) profile: a pair below the profile, or a
    malformed one, is never used, so an edited pair cannot lower a total."""
    table, _, _ = designed["groups"]
    prof = q.table_profile(table)
    eq = 0.5 * prof.epsilon(1e-6)
    dq = float(prof.delta(eq))
    assert dq > 0

    def with_pair(pair):
        gb = table.info["group_budgets"]
        return dataclasses.replace(table, info={**table.info, "group_budgets": {
            **gb, "groups": [{**gb["groups"][0], "per_query": pair}]}})

    assert q.confirmed_pairs(with_pair([eq, dq])) == [(eq, dq)]
    assert q.confirmed_pairs(with_pair([eq, dq * 0.5])) == []
    assert q.confirmed_pairs(with_pair(["x", 1])) == q.confirmed_pairs(with_pair(None)) == []


# -- record groups: each group's total, and the largest, at every door ------------------------------------

RECORD_GROUP_BUDGETS = GroupBudgets((TotalBudget(1.0, 1e-5, 20), TotalBudget(2.0, 1e-5, 20)))


def _design_groups(kind: str) -> darrm.GammaTable:
    """A designed record-groups table (K = 11 or 5, Q = 20), restricted to the ``gdp`` shape (seconds)."""
    if kind == "shard-groups":
        return shard_groups.design(ShardGroupParams(11, NonPrivate(), [(1, 1.0, 0.0), (2, 1.0, 0.0)]),
                                   RECORD_GROUP_BUDGETS, IIDPrior(0.8), shapes=("gdp",)).table
    return weighted_shards.design(WeightedShardParams(NonPrivate(), [(2, 1.0, 0.0), (3, 1.0, 0.0)]),
                                  RECORD_GROUP_BUDGETS, IIDPrior(0.8), shapes=("gdp",)).table


@pytest.fixture(scope="module")
def designed_groups(tmp_path_factory):
    """kind → (the table loaded from its file, the file)."""
    out = {}
    for kind in ("shard-groups", "weighted-shards"):
        path = tmp_path_factory.mktemp("groups") / f"{kind}.json"
        darrm.save(_design_groups(kind), path)
        out[kind] = (darrm.load(path), path)
    return out


def _group_doors(cli, table, path, queries: int, delta: float):
    """(per-group totals of account queries --json, of the session; the largest by --json, by the text's
    'every record' row, by composed_epsilon and by the session)."""
    argv = ("account", "queries", str(path), "--queries", str(queries), "--delta-total", str(delta),
            "--member-randomness", "fresh")
    rc, out, err = cli(*argv, "--json")
    assert rc == 0, err
    rec = json.loads(out)
    rc, text, err = cli(*argv)
    assert rc == 0, err
    row = next(line for line in text.splitlines() if line.startswith("every record")).split()
    session = LabellingSession(table, budget_epsilon=1e3, delta=delta, member_randomness="fresh", rng=0)
    api = q.composed_epsilon(table, queries, delta_total=delta, member_randomness="fresh").epsilon
    per_cli = tuple(g["epsilon_total"] for g in rec["record_group_totals"])
    assert row[3] == number(rec["epsilon_total"]) == number(api)  # the text prints the same float
    return per_cli, session.group_epsilons_for(queries, delta), (rec["epsilon_total"], api,
                                                                 session.epsilon_for(queries))


def _verifier_groups(table) -> list[float]:
    groups = record_group_clouds(table.gamma, table.params)
    assert groups is not None
    return parts.verified_part_totals(table, *groups)


@pytest.mark.parametrize("kind", ["shard-groups", "weighted-shards"])
def test_record_group_doors_agree_per_group_and_on_the_largest_at_the_recorded_count_and_another(
        designed_groups, cli, kind):
    """Per group: ``account queries --json`` = the session = the verifier's recomputation (at the recorded
    count and δ); the largest group total (every record's total: a record's loss is its own group's) is the
    same at composed_epsilon, ``account queries`` (text and --json), the session and verify_charged_total."""
    table, path = designed_groups[kind]
    Q, dt = 20, 1e-5
    per_cli, per_session, largest = _group_doors(cli, table, path, Q, dt)
    verified = _verifier_groups(table)
    assert list(per_cli) == list(per_session) == verified
    assert largest[0] == largest[1] == largest[2] == max(per_cli) == darrm.verify_charged_total(table)
    # each within its own group's recorded charge and budget (the verifier refuses a total above either)
    for e, rec, b in zip(per_cli, table.info["group_budgets"]["groups"], RECORD_GROUP_BUDGETS.budgets, strict=True):
        assert e <= rec["composed_epsilon"] * (1 + 1e-6) and e <= b.epsilon
    # another count and δ: the doors still agree, group by group and on the largest
    per_cli2, per_session2, largest2 = _group_doors(cli, table, path, 7, 1e-6)
    assert per_cli2 == per_session2
    assert largest2[0] == largest2[1] == largest2[2] == max(per_cli2)
    # the groups' totals are the composition of each group's own pair: the union pair is never below them
    union = q.fresh_bound([(q.table_profile(table), Q)], dt, True).epsilon
    assert union >= max(per_cli) * (1 - 1e-9)


def _with_pair(table: darrm.GammaTable, group: int, pair) -> darrm.GammaTable:
    gb = table.info["group_budgets"]
    recs = [{**r, "per_query": pair} if i == group else r for i, r in enumerate(gb["groups"])]
    return dataclasses.replace(table, info={**table.info, "group_budgets": {**gb, "groups": recs}})


@pytest.mark.parametrize("kind", ["shard-groups", "weighted-shards"])
def test_a_forged_record_never_lowers_a_record_group_total(designed_groups, cli, tmp_path, kind):
    """A per-query pair the group's profile and the model's certificate do not confirm is never composed (the
    doors' numbers do not move, and a generic charge resting on it is refused); a recorded total below the
    recomputed one is refused by the verifier and the session."""
    table, path = designed_groups[kind]
    Q, dt = 20, 1e-5
    honest = _group_doors(cli, table, path, Q, dt)
    prof = q.group_parts(table)[0].profile
    eq = 0.5 * prof.epsilon(1e-6)
    forged_pair = [eq, float(prof.delta(eq)) * 0.5]  # below group 0's own profile: not DP per query at it
    forged = _with_pair(table, 0, forged_pair)
    assert q.group_parts(forged)[0].pair is None
    fpath = tmp_path / "forged.json"
    darrm.save(forged, fpath)
    assert _group_doors(cli, darrm.load(fpath), fpath, Q, dt) == honest
    gb = table.info["group_budgets"]
    generic = dataclasses.replace(forged, info={**forged.info, "group_budgets": {**gb, "groups": [
        {**forged.info["group_budgets"]["groups"][0], "accountant": parts.GENERIC_ACCOUNTANT},
        *gb["groups"][1:]]}})
    with pytest.raises(darrm.CertificationError, match="per query as recorded"):
        darrm.verify_charged_total(generic)
    low = dataclasses.replace(table, info={**table.info, "group_budgets": {**gb, "groups": [
        {**gb["groups"][0], "composed_epsilon": honest[0][0] * 0.5}, *gb["groups"][1:]]}})
    for check in (darrm.verify_charged_total,
                  lambda t: LabellingSession(t, budget_epsilon=10.0, delta=dt, member_randomness="fresh", rng=0)):
        with pytest.raises(darrm.CertificationError):
            check(low)


@pytest.mark.parametrize("kind", ["shard-groups", "weighted-shards"])
def test_a_confirmed_recorded_pair_enters_every_door_alike(designed_groups, cli, tmp_path, kind):
    """A pair the group's profile or the model's certificate confirms (here: the table's own certified
    per-query target of group 0) is composed by every door and by the verifier alike: the doors still agree
    group by group, and no number rises."""
    table, path = designed_groups[kind]
    Q, dt = 20, 1e-5
    honest = _group_doors(cli, table, path, Q, dt)
    grp = table.params.groups[0]
    paired = _with_pair(table, 0, [grp.target_eps, grp.target_delta])
    assert q.group_parts(paired)[0].pair == (grp.target_eps, grp.target_delta)
    ppath = tmp_path / "paired.json"
    darrm.save(paired, ppath)
    loaded = darrm.load(ppath)
    per_cli, per_session, largest = _group_doors(cli, loaded, ppath, Q, dt)
    assert list(per_cli) == list(per_session) == _verifier_groups(loaded)
    assert largest[0] == largest[1] == largest[2] == max(per_cli) == darrm.verify_charged_total(loaded)
    assert all(a <= b for a, b in zip(per_cli, honest[0], strict=True))


def test_a_groups_pair_the_certificate_confirms_enters_every_door_and_the_verifier_alike(designed, cli, tmp_path):
    """A grouped-members design recording the table's own certified per-query target as its pair: the doors
    (which accept a pair the profile or the model's certificate confirms, as the verifier does) and
    verify_charged_total give one number, at most the honest one, at the recorded count."""
    table, _, (Q, dt, recorded) = designed["groups"]
    pair = [table.params.target_eps, table.params.target_delta]
    gb = table.info["group_budgets"]
    paired = dataclasses.replace(table, info={**table.info, "group_budgets": {
        **gb, "groups": [{**gb["groups"][0], "per_query": pair}]}})
    assert q.confirmed_pairs(paired) == [tuple(pair)]
    path = tmp_path / "paired.json"
    darrm.save(paired, path)
    loaded = darrm.load(path)
    cli_eps, api, session = _doors(cli, loaded, path, Q, dt)
    assert cli_eps == api == session == darrm.verify_charged_total(loaded) <= recorded
