"""Fuzz every public callable of ``darrm`` and ``darrm.accounting`` with invalid arguments (issue 15).

Each target is a valid call; a property replaces ONE argument by a drawn invalid value (the
strategies of this folder's conftest) and asserts that the call raises a
:class:`darrm.errors.DarrmError` at once, whose message is one line naming the argument, and that
nothing was written.  The result records (:class:`~darrm.Certificate`, :class:`~darrm.SolveReport`,
:class:`~darrm.accounting.Bound`), the exceptions and the enums take no user input and are not
fuzzed; :func:`test_every_public_callable_is_fuzzed` keeps the list of targets complete.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import darrm
import darrm.accounting as acc
from darrm.backends.executors import ProcessExecutor
from darrm.errors import DarrmError

EXAMPLES = 30
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)


@dataclass
class Ctx:
    """What valid calls need: a certified table, its parameters, a scratch folder."""

    table: darrm.GammaTable
    params: darrm.PrivacyParams
    dir: Path
    gfile: Path


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    params = darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5)
    table = darrm.solve(params, progress=False)
    d = tmp_path_factory.mktemp("fuzz_api")
    g = d / "g.json"
    darrm.save(table, g)
    return Ctx(table, params, d, g)


@dataclass
class Target:
    name: str
    call: Callable[..., Any]
    base: Callable[[Ctx], dict]
    bad: dict[str, Callable[[Any], st.SearchStrategy]]
    extra: list = field(default_factory=list)  # (kwargs overrides) cases that must also be refused


def votes_bad(b):
    return st.sampled_from([None, "abc", [], np.ones(5), np.ones((2, 4)), np.full((2, 5), 2),
                            np.full((2, 5), np.nan), np.array([["a"] * 5]), np.ones((1, 5, 1)), -np.ones((1, 5)),
                            np.full((1, 5), 0.5), [[1, 0, 1, 0, "x"]], 3.0, {"v": 1}])


def counts_bad(b):
    return st.one_of(st.sampled_from([None, "abc", np.ones((2, 5)), [np.nan], [np.inf], [0.5], ["a"], [True],
                                      np.array([True, False]), 3, {"c": 1}]),
                     st.lists(st.integers(), min_size=1, max_size=4).filter(lambda c: any(x < 0 or x > 5 for x in c)))


def rng_bad(b):
    return st.sampled_from(["abc", -1, 1.5, math.nan, [1.5], object(), "0", -(2**70)])


def bool_bad(b):
    return st.sampled_from([None, 0, 1, "yes", "", 1.0, np.array([True, True]), [True]])


def table_bad(b):
    return st.sampled_from([None, "g.json", 1, np.full(6, 0.5), {"gamma": [0.5] * 6}, darrm.IIDPrior()])


def params_bad(b):
    return st.sampled_from([None, "K=5", 5, {"K": 5}, (5, 3, 0.1), darrm.IIDPrior(), np.zeros(3)])


def prior_bad(b):
    return st.sampled_from([None, "iid:0.75", 0.75, {"kind": "iid"}, darrm.PrivacyParams(5, 3, 0.1), [0.75] * 5])


def path_bad(b):
    return st.sampled_from([None, 3, 1.5, b"", "", ["g.json"], object()])


def randomizer_bad(b):
    return st.sampled_from([None, 1.0, "rr", {"eps0": 1}, darrm.IIDPrior()])


def budgets_bad(b):
    return st.one_of(st.sampled_from([None, [], "abc", 1.0, [(1.0,)], [(1.0, 0.0, 3)], [("a", 0.0)], [1.0, 0.0],
                                      {"eps": 1}]),
                     b.epsilon().map(lambda e: [(1.0, 1e-6), (e, 1e-6)]),
                     b.half_unit().map(lambda d: [(1.0, d)]))


def member_bad(b):
    return st.sampled_from([None, "nonprivate", 1.0, (1.0, 0.0), darrm.IIDPrior(), {"kind": "rr"}])


def gamma_bad(K: int):
    return lambda b: b.vector(K + 1)


def matrix_bad(b):
    return st.sampled_from([None, (), ((),), ((0.5, 0.5),), ((1.0, 0.0), (0.5,)), ((1.5, -0.5), (0.5, 0.5)),
                            ((math.nan, 1.0), (0.5, 0.5)), ((0.3, 0.3), (0.5, 0.5)), (("a", "b"), (0.5, 0.5)),
                            "abc", 1.0, ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5, 0.0))])


def tau_bad(b):
    """τ > 0 with τε ≤ 700 (ε = 0.1 here): e^(τε) must be representable."""
    return st.one_of(b.positive(), st.sampled_from([7001.0, 1e300]))


def ms_bad(b):
    return st.one_of(st.sampled_from([None, (), "3", 3, (3.0,), (0,), (-1,), (True,), ("a",)]),
                     b.count(1, 11).map(lambda m: (m,)))  # the paper's K = 11 teachers


K5 = 5
DISJOINT5 = darrm.DisjointParams(5, darrm.LocalRR(1.0), 1.0)


@functools.cache
def shard_table() -> darrm.GammaTable:
    """A certified table of record groups on shards (the per-group profile and totals need one)."""
    return darrm.solve(darrm.ShardGroupParams(5, darrm.ApproxDP(0.3, 1e-5), [(1, 0.5, 1e-4), (2, 1.0, 1e-4)]),
                       darrm.IIDPrior(0.75))


TARGETS: list[Target] = [
    # -- darrm ---------------------------------------------------------------------------------
    Target("PrivacyParams", darrm.PrivacyParams, lambda c: dict(K=5, m=3, eps=0.1, member_delta=1e-5, delta=None),
           {"K": lambda b: b.odd(), "m": lambda b: b.real(1.0, 5.0), "eps": lambda b: b.epsilon(),
            "member_delta": lambda b: b.half_unit(), "delta": lambda b: b.half_unit()},
           [dict(m=7), dict(delta=1e-6), dict(eps=300.0), dict(K=3, m=5)]),
    Target("IIDPrior", darrm.IIDPrior, lambda c: dict(mean=0.75), {"mean": lambda b: b.unit()}),
    Target("IndependentPrior", darrm.IndependentPrior, lambda c: dict(means=(0.7, 0.8)),
           {"means": lambda b: b.vector()}),
    Target("BetaPrior", darrm.BetaPrior, lambda c: dict(a=3.0, b=1.0),
           {"a": lambda b: b.positive(), "b": lambda b: b.positive()}),
    Target("DensityPrior", darrm.DensityPrior, lambda c: dict(density=lambda p: 1.0, name="flat", tol=1e-12),
           {"density": lambda b: st.sampled_from([None, 1.0, "x", [1.0]]), "name": lambda b: st.sampled_from(
               [None, 1, b"x", ["n"]]), "tol": lambda b: b.positive()}),
    Target("PaperMCPrior", darrm.PaperMCPrior, lambda c: dict(p_lower=0.5, tau=50, T=10, seed=0),
           {"p_lower": lambda b: b.half_unit(), "tau": lambda b: b.count(1, 10**6), "T": lambda b: b.count(1, 10**6),
            "seed": lambda b: b.count(0)}),
    Target("ApproxDP", darrm.ApproxDP, lambda c: dict(eps=1.0, delta=1e-6),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit()}),
    Target("LocalRR", darrm.LocalRR, lambda c: dict(eps0=1.0), {"eps0": lambda b: b.epsilon()}),
    Target("NonPrivate", darrm.NonPrivate, lambda c: {}, {}),
    Target("DisjointParams", darrm.DisjointParams,
           lambda c: dict(K=5, member=darrm.LocalRR(1.0), target_eps=1.0, target_delta=0.0),
           {"K": lambda b: b.odd(), "member": member_bad, "target_eps": lambda b: b.epsilon(),
            "target_delta": lambda b: b.half_unit()}),
    Target("SolveOptions", darrm.SolveOptions,
           lambda c: dict(method="auto", max_rounds=None, gap_tol=1e-9, accept_gap=False, cuts_per_round=256,
                          stabilize="auto", lp_backend="highs"),
           {"method": lambda b: b.choice(("auto", "full", "cutting-planes")), "max_rounds": lambda b: b.count(),
            "gap_tol": lambda b: b.positive(), "accept_gap": bool_bad, "cuts_per_round": lambda b: b.count(),
            "stabilize": lambda b: b.real(0.0, 1.0, lo_closed=False).filter(lambda s: s != "auto"),
            "lp_backend": lambda b: b.choice(("highs", "cvxpy")), "screen": bool_bad,
            "max_memory": lambda b: b.positive(),
            "warm_start": lambda b: st.sampled_from(["c.npz", 3, True, np.ones((1, 8), dtype=int), object()])}),
    Target("WarmStart", darrm.WarmStart, lambda c: dict(multisets=np.array([[1, 1, 0, 0, 0, 0, 2, 1]]), source="x"),
           {"multisets": lambda b: st.sampled_from(
               [None, 3, "c.npz", [[1, 0, 0, 0]], np.ones((1, 8)), np.ones((1, 5), dtype=int), np.ones(8, dtype=int),
                np.zeros((0, 8), dtype=int), np.zeros((1, 8), dtype=int), np.array([[-1, 2, 0, 0]]),
                np.array([[1, 0, 0, 0], [2, 0, 0, 0]])]),
            "source": lambda b: st.sampled_from([None, 3, b"x", ["x"]])}),
    Target("GammaTable", darrm.GammaTable,
           lambda c: dict(params=c.params, gamma=c.table.gamma, family="opt", violation=c.table.violation),
           {"params": params_bad, "gamma": gamma_bad(K5),
            "family": lambda b: b.choice(("opt", "sub", "dsub", "const", "custom")),
            "violation": lambda b: st.sampled_from([math.nan, "x", None, True, [0.0]])}),
    Target("aggregate", darrm.aggregate, lambda c: dict(votes=np.ones((2, 5), int), table=c.table, rng=0),
           {"votes": votes_bad, "table": table_bad, "rng": rng_bad, "secure": bool_bad}),
    Target("aggregate_counts", darrm.aggregate_counts, lambda c: dict(counts=[0, 3, 5], table=c.table, rng=0),
           {"counts": counts_bad, "table": table_bad, "rng": rng_bad, "secure": bool_bad}),
    Target("certify", darrm.certify, lambda c: dict(gamma=c.table.gamma, params=c.params),
           {"gamma": gamma_bad(K5), "params": params_bad, "tol": lambda b: b.real(None, 0.0),
            "progress": bool_bad, "max_memory": lambda b: b.positive()},
           # a certificate that does not fit its memory budget: refused before any work
           [dict(gamma=np.full(202, 0.5), params=darrm.PrivacyParams(201, 3, 0.1, 1e-5), max_memory=2**30),
            dict(gamma=np.full(100002, 0.5), params=darrm.DisjointParams(100001, darrm.LocalRR(1.0), 1.0),
                 max_memory=2**30)]),
    Target("certify_tight", darrm.certify_tight, lambda c: dict(gamma=c.table.gamma, params=c.params),
           {"gamma": gamma_bad(K5), "params": params_bad, "progress": bool_bad,
            "executor": lambda b: st.sampled_from(["nonsense", 3, "local:0", "local:x", object()]),
            "max_memory": lambda b: b.positive()},
           [dict(gamma=np.full(202, 0.5), params=darrm.PrivacyParams(201, 3, 0.1, 1e-5), max_memory=2**30)]),
    Target("error_curve", darrm.error_curve, lambda c: dict(gamma=c.table.gamma, p=np.array([0.3, 0.7])),
           {"gamma": lambda b: st.one_of(b.vector(), st.integers(1, 6).map(lambda k: np.full(2 * k + 1, 0.5))),
            "p": lambda b: st.sampled_from([None, "abc", [math.nan], [-0.1], [1.5], [math.inf], {"a": 1}, [["a"]],
                                            [[0.5], [0.5, 0.5]], [1 + 2j], [None]])}),
    Target("expected_signed_error", darrm.expected_signed_error,
           lambda c: dict(gamma=c.table.gamma, prior=darrm.IIDPrior()),
           {"gamma": lambda b: st.one_of(b.vector(), st.integers(1, 6).map(lambda k: np.full(2 * k + 1, 0.5))),
            "prior": prior_bad}),
    Target("family_gamma", darrm.family_gamma, lambda c: dict(family="sub", params=c.params),
           {"family": lambda b: b.choice(("sub", "dsub", "const")), "params": params_bad,
            "size": lambda b: b.count(1, 5), "tau": tau_bad,
            "lam": lambda b: b.real(0.0, 1.0)}),
    Target("gamma_const", darrm.gamma_const, lambda c: dict(params=c.params),
           {"params": params_bad, "tau": tau_bad, "lam": lambda b: b.real(0.0, 1.0)}),
    # m is a real in PrivacyParams: an integral float m = 3.0 is a valid subsample size
    Target("gamma_sub", darrm.gamma_sub, lambda c: dict(K=5, m=3),
           {"K": lambda b: b.odd(), "m": lambda b: b.count(1, 5, integral_floats_ok=True)}),
    Target("gamma_dsub", darrm.gamma_dsub, lambda c: dict(K=5, m=3),
           {"K": lambda b: b.odd(), "m": lambda b: b.count(1, 5, integral_floats_ok=True)}),
    Target("load", darrm.load, lambda c: dict(path=c.gfile),
           {"path": path_bad, "tol": lambda b: b.real(None, 0.0), "recertify": bool_bad,
            "max_memory": lambda b: b.positive()}),
    Target("save", darrm.save, lambda c: dict(table=c.table, path=c.dir / "out" / "new.json"),
           {"table": table_bad, "path": path_bad, "tol": lambda b: b.real(None, 0.0)}),
    Target("TotalBudget", darrm.TotalBudget, lambda c: dict(epsilon=1.0, delta=1e-3, queries=2),
           {"epsilon": lambda b: b.epsilon(), "delta": lambda b: b.open_unit(), "queries": lambda b: b.count(),
            "member_randomness": lambda b: b.choice(("fresh",))}),
    # per-group totals: a sequence of TotalBudgets counting the same queries
    Target("GroupBudgets", darrm.GroupBudgets,
           lambda c: dict(budgets=(darrm.TotalBudget(1.0, 1e-3, 2), darrm.TotalBudget(2.0, 1e-3, 2))),
           {"budgets": lambda b: st.sampled_from([(), None, 3, "ab", {"a": 1}, (1.0, 1e-3, 2),
                                                  (darrm.TotalBudget(1.0, 1e-3, 2), darrm.TotalBudget(1.0, 1e-3, 3)),
                                                  [darrm.TotalBudget(1.0, 1e-3, 2), object()]])}),
    # one query: the whole design (every family's search, the certificate, the record) without a
    # Q-fold composition's exact spectrum, which the total-budget tests check
    Target("design_for_budget", darrm.design_for_budget,
           lambda c: dict(params=darrm.PrivacyParams(3, 1, 0.3, 1e-4), budget=darrm.TotalBudget(1.0, 1e-3, 1)),
           {"params": params_bad, "budget": lambda b: st.sampled_from([(1.0, 1e-3, 2), 3, "budget", object()]),
            "prior": prior_bad}),
    Target("verify_charged_total", darrm.verify_charged_total, lambda c: dict(table=c.table),
           {"table": table_bad}),
    Target("privacy_profile", darrm.privacy_profile, lambda c: dict(table=c.table),
           {"table": table_bad, "params": params_bad, "method": lambda b: b.choice(("auto", "direct", "sweep")),
            "executor": lambda b: st.sampled_from(["nonsense", 3, "local:0", "local:x", object()]),
            "max_memory": lambda b: b.positive()}),
    Target("MemberGroup", darrm.MemberGroup, lambda c: dict(size=3, eps=0.1, Delta=1e-5),
           {"size": lambda b: b.count(), "eps": lambda b: b.epsilon(), "Delta": lambda b: b.half_unit()}),
    Target("GroupParams", darrm.GroupParams,
           lambda c: dict(groups=(darrm.MemberGroup(2, 0.1, 1e-5), darrm.MemberGroup(3, 0.3, 1e-5)),
                          target_eps=1.0, target_delta=1e-4),
           {"groups": lambda b: st.sampled_from([None, (), 3, "g", (3,), ((2, 0.1),), [object()]]),
            "target_eps": lambda b: b.epsilon(), "target_delta": lambda b: b.half_unit()}),
    Target("RecordGroup", darrm.RecordGroup, lambda c: dict(copies=2, target_eps=1.0, target_delta=1e-5),
           {"copies": lambda b: b.count(), "target_eps": lambda b: b.epsilon(),
            "target_delta": lambda b: b.half_unit()}),
    Target("ShardGroupParams", darrm.ShardGroupParams,
           lambda c: dict(K=5, member=darrm.NonPrivate(), groups=(darrm.RecordGroup(1, 0.5, 1e-5),)),
           {"K": lambda b: b.odd(), "member": member_bad,
            "groups": lambda b: st.sampled_from([None, (), 3, "g", (3,), ((9, 0.1, 0.0),), ((1, -1.0),),
                                                 [object()]])}),
    Target("BudgetGroup", darrm.BudgetGroup, lambda c: dict(size=2, target_eps=1.0, target_delta=1e-5),
           {"size": lambda b: b.count(), "target_eps": lambda b: b.epsilon(),
            "target_delta": lambda b: b.half_unit()}),
    Target("WeightedShardParams", darrm.WeightedShardParams,
           lambda c: dict(member=darrm.NonPrivate(), groups=(darrm.BudgetGroup(2, 0.5, 1e-5), (3, 1.0, 1e-5)),
                          weights=(1.0, 2.0)),
           {"member": member_bad,
            "groups": lambda b: st.sampled_from([None, (), 3, "g", (3,), ((2, 0.1, 0.0),), ((1, -1.0),),
                                                 [object()]]),
            "weights": lambda b: st.sampled_from([(), (1.0,), (1.0, 0.0), (1.0, -2.0), (1.0, math.nan),
                                                  (1.0, math.inf), (True, 1.0), ("1", 2.0), 3, "12"])}),
    Target("record_group_profiles", darrm.record_group_profiles, lambda c: dict(table=shard_table()),
           {"table": table_bad, "params": params_bad, "max_memory": lambda b: b.positive()},
           [dict(table=None), dict(table=np.full(4, 0.5), params=shard_table().params.record_group_params(0)),
            dict(table=shard_table().gamma, params=DISJOINT5)]),
    Target("solve", darrm.solve, lambda c: dict(params=c.params, prior=darrm.IIDPrior(), progress=False),
           {"params": params_bad, "prior": prior_bad, "family": lambda b: b.choice(darrm.FAMILIES),
            "options": lambda b: st.sampled_from([{"method": "full"}, "full", 1, darrm.IIDPrior()]),
            "executor": lambda b: st.sampled_from(["nonsense", 3, "local:0", "local:x", object()]),
            "checkpoint": lambda b: st.sampled_from([3, 1.5, b"", ["c.npz"], object()]),
            "progress": bool_bad, "log": lambda b: st.sampled_from([1, "stderr", [print]])},
           # arguments the solve would ignore, and a prior for another K (issue 15): refused, not dropped
           [dict(checkpoint="c.npz"),  # "auto" picks the full LP at K = 5
            dict(prior=darrm.IndependentPrior((0.6, 0.7))),
            dict(family="sub", checkpoint="c.npz"),
            dict(family="sub", options=darrm.SolveOptions(cuts_per_round=8)),
            dict(options=darrm.SolveOptions(method="full", screen=False)),
            dict(params=DISJOINT5, checkpoint="c.npz"),
            dict(params=DISJOINT5, executor=ProcessExecutor(2)),
            dict(params=DISJOINT5, options=darrm.SolveOptions(stabilize=0.5)),
            dict(params=DISJOINT5, prior=darrm.IndependentPrior((0.6,) * 7)),
            dict(params=DISJOINT5, options=darrm.SolveOptions(max_memory=1.0))]),
    # -- darrm.accounting ----------------------------------------------------------------------
    Target("DPSGDRun", acc.DPSGDRun, lambda c: dict(noise_multiplier=1.0, sample_rate=0.01, steps=100, delta=1e-5),
           {"noise_multiplier": lambda b: b.positive(), "sample_rate": lambda b: b.real(0.0, 1.0, lo_closed=False),
            "steps": lambda b: b.count(), "delta": lambda b: b.open_unit()}),
    Target("FiniteRandomizer", acc.FiniteRandomizer, lambda c: dict(matrix=((0.75, 0.25), (0.25, 0.75))),
           {"matrix": matrix_bad}),
    Target("GenericLDP", acc.GenericLDP, lambda c: dict(eps0=1.0), {"eps0": lambda b: b.epsilon()}),
    Target("RandomizedResponse", acc.RandomizedResponse, lambda c: dict(eps0=1.0, k=2),
           {"eps0": lambda b: b.epsilon(), "k": lambda b: b.count(2)}),
    Target("ShuffledBinaryRR", acc.ShuffledBinaryRR, lambda c: dict(K=11, eps0=1.0),
           {"K": lambda b: b.count(), "eps0": lambda b: b.epsilon()}),
    Target("LabellingSession", acc.LabellingSession,
           lambda c: dict(table=c.table, budget_epsilon=1.0, delta=1e-4, member_randomness="fresh",
                          path=c.dir / "out" / "ledger.json"),
           {"table": table_bad, "budget_epsilon": lambda b: b.positive(), "delta": lambda b: b.open_unit(),
            "member_randomness": lambda b: b.choice(("fresh", "fixed")),
            "secure": bool_bad, "rng": rng_bad, "path": path_bad}),
    Target("QueryAccountant", acc.QueryAccountant, lambda c: dict(member_randomness="fresh"),
           {"member_randomness": lambda b: b.choice(("fresh", "fixed")),
            "value_discretization_interval": lambda b: b.positive(), "loss_cap": lambda b: b.positive()}),
    Target("query_pld", acc.query_pld, lambda c: dict(profile=c.table),
           {"profile": table_bad, "value_discretization_interval": lambda b: b.positive(),
            "pessimistic": bool_bad, "loss_cap": lambda b: b.positive()}),
    Target("composed_epsilon", acc.composed_epsilon,
           lambda c: dict(table=c.table, queries=3, delta_total=1e-3, member_randomness="fresh"),
           {"table": table_bad, "queries": lambda b: b.count(), "delta_total": lambda b: b.open_unit(),
            "member_randomness": lambda b: b.choice(("fresh", "fixed")),
            "value_discretization_interval": lambda b: b.positive(), "bracket": lambda b: b.positive(),
            "loss_cap": lambda b: b.positive()}),
    Target("composed_delta", acc.composed_delta,
           lambda c: dict(table=c.table, queries=3, epsilon_total=1.0, member_randomness="fresh"),
           {"table": table_bad, "queries": lambda b: b.count(), "epsilon_total": lambda b: b.real(0.0, 700.0),
            "member_randomness": lambda b: b.choice(("fresh", "fixed")),
            "value_discretization_interval": lambda b: b.positive(), "bracket": lambda b: b.positive(),
            "loss_cap": lambda b: b.positive()}),
    Target("record_group_bounds", acc.record_group_bounds,
           lambda c: dict(table=shard_table(), queries=3, delta_total=1e-3, member_randomness="fresh"),
           {"table": table_bad, "queries": lambda b: b.count(), "delta_total": lambda b: b.open_unit(),
            "member_randomness": lambda b: b.choice(("fresh", "fixed")),
            "value_discretization_interval": lambda b: b.positive(), "bracket": lambda b: b.positive(),
            "loss_cap": lambda b: b.positive()},
           [dict(epsilon_total=1.0), dict(table=None)]),
    Target("confident_gnmax_epsilon", acc.confident_gnmax_epsilon,
           lambda c: dict(histograms=[[8, 2, 1], [5, 5, 1]], answered=[True, False], threshold=5.0, sigma1=10.0,
                          sigma2=5.0, delta=1e-5),
           {"histograms": lambda b: st.sampled_from([None, [], [[]], "abc", [[1.5, 2]], [[-1, 3]], [[math.nan, 1]],
                                                     [[1, 2], [1, 2, 3]], [[5]]]),
            "answered": lambda b: st.sampled_from([None, [], [True], "ab", [1.5, 2], [None, True]]),
            "threshold": lambda b: b.real(None, None), "sigma1": lambda b: b.positive(),
            "sigma2": lambda b: b.positive(), "delta": lambda b: b.open_unit()}),
    Target("simple", acc.simple, lambda c: dict(eps=1.0, delta=1e-6, k=3),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit(), "k": lambda b: b.count()}),
    Target("advanced_dwork_roth", acc.advanced_dwork_roth, lambda c: dict(eps=1.0, delta=1e-6, k=3, delta_prime=1e-5),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit(), "k": lambda b: b.count(),
            "delta_prime": lambda b: b.open_unit()}),
    Target("kairouz_general", acc.kairouz_general, lambda c: dict(eps=1.0, delta=1e-6, k=3, delta_prime=1e-5),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit(), "k": lambda b: b.count(),
            "delta_prime": lambda b: b.open_unit()}),
    Target("optimal_homogeneous_delta", acc.optimal_homogeneous_delta,
           lambda c: dict(eps=1.0, delta=1e-6, k=3, eps_total=2.0),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit(), "k": lambda b: b.count(),
            "eps_total": lambda b: b.real(0.0, None)}),
    Target("optimal_homogeneous_epsilon", acc.optimal_homogeneous_epsilon,
           lambda c: dict(eps=1.0, delta=1e-6, k=3, delta_total=1e-4),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.half_unit(), "k": lambda b: b.count(),
            "delta_total": lambda b: b.open_unit()}),
    Target("heterogeneous_pld", acc.heterogeneous_pld,
           lambda c: dict(budgets=[(1.0, 1e-6), (0.5, 0.0)], delta_total=1e-4),
           {"budgets": budgets_bad, "delta_total": lambda b: b.open_unit(),
            "discretization": lambda b: b.positive()}),
    Target("parallel", acc.parallel, lambda c: dict(budgets=[(1.0, 1e-6), (0.5, 0.0)]), {"budgets": budgets_bad}),
    Target("teacher_majority_budget", acc.teacher_majority_budget,
           lambda c: dict(teacher_budgets=[(1.0, 1e-6)], queries=10),
           {"teacher_budgets": budgets_bad, "queries": lambda b: b.count()}),
    Target("all_bounds", acc.all_bounds, lambda c: dict(randomizer=acc.GenericLDP(1.0), n=1000, delta=1e-6),
           {"randomizer": randomizer_bad, "n": lambda b: b.count(), "delta": lambda b: b.open_unit(),
            "include_invalid": bool_bad, "methods": lambda b: st.sampled_from(["clones", ["nonsense"], 3, [3]])}),
    Target("best_upper_bound", acc.best_upper_bound, lambda c: dict(randomizer=acc.GenericLDP(1.0), n=1000, delta=1e-6),
           {"randomizer": randomizer_bad, "n": lambda b: b.count(), "delta": lambda b: b.open_unit()},
           [dict(delta=None), dict(eps=1.0)]),
    Target("calibrate_sigma", acc.calibrate_sigma, lambda c: dict(eps=1.0, delta=1e-5),
           {"eps": lambda b: b.epsilon(), "delta": lambda b: b.open_unit(),
            "method": lambda b: b.choice(("paper-rdp", "rdp", "pld"))}),
    Target("data_dependent_rdp", acc.data_dependent_rdp, lambda c: dict(votes=[8, 2, 1], sigma=5.0, order=2.0),
           {"votes": lambda b: st.sampled_from([None, [], [5], "abc", [1.5, 2], [-1, 3], [[1, 2]], [math.nan, 1],
                                                [True, False], [0, 0]]),
            "sigma": lambda b: b.positive(), "order": lambda b: b.real(1.0, None, lo_closed=False)}),
    Target("dpsgd_epsilon", acc.dpsgd_epsilon,
           lambda c: dict(noise_multiplier=1.0, sample_rate=0.01, steps=100, delta=1e-5, accountant="pld"),
           {"noise_multiplier": lambda b: b.positive(), "sample_rate": lambda b: b.real(0.0, 1.0, lo_closed=False),
            "steps": lambda b: b.count(), "delta": lambda b: b.open_unit(),
            "accountant": lambda b: b.choice(("pld", "prv", "rdp")), "eps_error": lambda b: b.positive(),
            "discretization": lambda b: b.positive()}),
    Target("gnmax_epsilon", acc.gnmax_epsilon, lambda c: dict(sigma=5.0, delta=1e-5, queries=3),
           {"sigma": lambda b: b.positive(), "delta": lambda b: b.open_unit(), "queries": lambda b: b.count(),
            "method": lambda b: b.choice(("pld", "rdp", "paper-rdp"))}),
    Target("largest_eps0", acc.largest_eps0, lambda c: dict(K=11, target_eps=1.0, target_delta=1e-6),
           {"K": lambda b: b.count(), "target_eps": lambda b: b.epsilon(), "target_delta": lambda b: b.open_unit(),
            "queries": lambda b: b.count(), "classes": lambda b: b.count(2), "eps0_max": lambda b: b.epsilon(),
            "rel_tol": lambda b: b.open_unit()}),
    Target("noise_multiplier_for", acc.noise_multiplier_for,
           lambda c: dict(target_eps=1.0, sample_rate=0.01, steps=100, delta=1e-5, accountant="pld"),
           {"target_eps": lambda b: b.epsilon(), "sample_rate": lambda b: b.real(0.0, 1.0, lo_closed=False),
            "steps": lambda b: b.count(), "delta": lambda b: b.open_unit(),
            "accountant": lambda b: b.choice(("pld", "prv", "rdp")), "tol": lambda b: b.positive()}),
    Target("paper_tables", acc.paper_tables, lambda c: dict(which=("teachers",), ms=(3,)),
           {"which": lambda b: st.sampled_from([None, "teachers", ("nonsense",), (), 3, (3,)]), "ms": ms_bad}),
    Target("shuffled_votes_guarantee", acc.shuffled_votes_guarantee, lambda c: dict(K=11, eps0=1.0, delta=1e-6),
           {"K": lambda b: b.count(), "eps0": lambda b: b.epsilon(), "delta": lambda b: b.open_unit(),
            "queries": lambda b: b.count(), "delta_prime": lambda b: b.open_unit()}),
    Target("tight_total_epsilon", acc.tight_total_epsilon, lambda c: dict(K=11, eps0=1.0, queries=3, delta_total=1e-5),
           {"K": lambda b: b.count(), "eps0": lambda b: b.epsilon(), "queries": lambda b: b.count(),
            "delta_total": lambda b: b.open_unit()}),
]
BY_NAME = {t.name: t for t in TARGETS}
NOT_INPUTS = {"BudgetDesign", "PrivacyProfile", "QueryBound", "Certificate", "SolveReport", "Bound", "Prior",
              "NeighboringRelation", "StopReason", "FAMILIES", "__version__"}


def test_every_public_callable_is_fuzzed():
    names = {n for n in darrm.__all__ if not (isinstance(getattr(darrm, n), type)
                                              and issubclass(getattr(darrm, n), BaseException))}
    names |= {n for n in acc.__all__ if not (isinstance(getattr(acc, n), type)
                                             and issubclass(getattr(acc, n), BaseException))}
    assert names - NOT_INPUTS == set(BY_NAME)


def _snapshot(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _check_refused(target: Target, ctx: Ctx, bad, kwargs: dict, param: str) -> None:
    out = ctx.dir / "out"
    out.mkdir(exist_ok=True)
    before = _snapshot(ctx.dir)
    with bad.time_limit():
        with pytest.raises(DarrmError) as info:
            target.call(**kwargs)
    msg = str(info.value)
    assert "\n" not in msg and msg.strip(), f"{target.name}({param}=...): message not one line: {msg!r}"
    if param:
        named = getattr(info.value, "parameter", None) or msg.split(":")[0]
        assert param.lower() in msg.lower() or param.lower() in str(named).lower(), \
            f"{target.name}({param}=...): the error does not name {param}: {msg!r}"
    assert _snapshot(ctx.dir) == before, f"{target.name}({param}=...) wrote or changed files"


def _default(target: Target, param: str) -> Any:
    p = inspect.signature(target.call).parameters.get(param)
    return inspect.Parameter.empty if p is None else p.default


PARAMETRIZED = [(t.name, p) for t in TARGETS for p in t.bad]


@pytest.mark.parametrize("name,param", PARAMETRIZED, ids=[f"{n}-{p}" for n, p in PARAMETRIZED])
@FUZZ
@given(data=st.data())
def test_fuzz_api(ctx, bad, tally, name, param, data):
    fuzz_one(BY_NAME[name], ctx, bad, tally, param, data)


def fuzz_one(target: Target, ctx, bad, tally, param: str, data) -> None:
    """Draw one invalid value of ``param``, call ``target`` with it and check the refusal."""
    value = data.draw(target.bad[param](bad), label=param)
    assume(not (value is None and _default(target, param) is None))  # None is that argument's default
    kwargs = {**target.base(ctx), param: value}
    tally(f"api {target.name}({param}=…)")
    _check_refused(target, ctx, bad, kwargs, param)


CROSS = [(t.name, i) for t in TARGETS for i in range(len(t.extra))]


@pytest.mark.parametrize("name,i", CROSS, ids=[f"{n}-{i}" for n, i in CROSS])
def test_inconsistent_combinations_are_refused(ctx, bad, tally, name, i):
    target = BY_NAME[name]
    kwargs = {**target.base(ctx), **target.extra[i]}
    tally(f"api {name}(combination)")
    _check_refused(target, ctx, bad, kwargs, "")


@pytest.mark.parametrize("name", [t.name for t in TARGETS])
def test_base_calls_are_valid(ctx, name):
    """The fuzzing above starts from valid calls: each base call succeeds."""
    target = BY_NAME[name]
    kwargs = target.base(ctx)
    if name == "LabellingSession":
        kwargs["path"] = None
    target.call(**kwargs)


def test_wrong_type_errors_are_also_type_errors(ctx):
    """A wrong type is a ParameterError that is also a TypeError (callers catching either see it)."""
    with pytest.raises(TypeError):
        darrm.aggregate(np.ones((1, 5)), "not a table")
    with pytest.raises(TypeError):
        acc.LabellingSession("not a table", budget_epsilon=1.0, delta=1e-4)
    assert os.path.exists(ctx.gfile)
