"""Fuzz the experiment functions a user calls from Python with invalid arguments: the C-class duel's
design and release (:mod:`darrm.experiments.pate.plurality_duel`) and the two-class study at equal
totals (:func:`darrm.experiments.disjoint.real.run_equal_total`).

The contract is :mod:`test_fuzz_api`'s (its :class:`Target` and :func:`fuzz_one`, reused): one argument of a
valid call replaced by a drawn invalid value must raise a one-line
:class:`darrm.errors.DarrmError` at once, naming that argument, and write nothing.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from fuzz.test_fuzz_api import FUZZ, Target, fuzz_one
from hypothesis import given
from hypothesis import strategies as st

import darrm
from darrm.experiments.disjoint.real import run_equal_total
from darrm.experiments.pate.plurality_duel import DuelCandidate, design_duel, release_duel

BUDGET = darrm.TotalBudget(1.0, 1e-5, 10)


@functools.cache
def duel_candidate() -> DuelCandidate:
    """A designed duel for 5 teachers and 3 classes (the release's valid candidate)."""
    return design_duel(5, 3, BUDGET, splits=(0.9,), samples=200).best


def _binary_votes(n: int = 30, K: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    labels = rng.choice([5, 8], size=n)
    return np.where(rng.random((n, K)) < 0.85, labels[:, None], 13 - labels[:, None]), labels


def labels_bad(b):
    return st.sampled_from([None, "abc", [], np.full(30, 5.5), np.full(29, 5), np.full((30, 1), 5), np.full(30, 7),
                            np.full(30, math.nan), ["a"] * 30, 3.0, {"y": 1}])


def binary_votes_bad(b):
    return st.sampled_from([None, "abc", [], np.full(30, 5), np.full((30, 4), 5), np.full((30, 5), 7),
                            np.full((30, 5), math.nan), np.array([["a"] * 5] * 30), np.ones((30, 5, 1)),
                            np.zeros((0, 5)), [[5, 8], [5]], 3.0, {"v": 1}])


def class_votes_bad(b):
    return st.sampled_from([None, "abc", [], np.ones(5), np.ones((2, 4)), np.full((2, 5), 3), np.full((2, 5), -1),
                            np.full((2, 5), np.nan), np.array([["a"] * 5]), np.ones((1, 5, 1)), np.full((1, 5), 0.5),
                            3.0, {"v": 1}])


def sequence_bad(element):
    """Not a non-empty sequence, or a sequence holding one bad element."""
    return lambda b: st.one_of(st.sampled_from([None, (), [], "2", 2.0, {"x": 1}]),
                               element(b).map(lambda v: (v,)))


TARGETS = [
    Target("design_duel", design_duel,
           lambda c: dict(K=5, C=3, budget=BUDGET, p_correct=0.75, splits=(0.9,), samples=200, seed=0),
           {"K": lambda b: b.count(), "C": lambda b: b.count(2), "p_correct": lambda b: b.open_unit(),
            "budget": lambda b: st.sampled_from([None, 1.0, (1.0, 1e-5, 10), {"epsilon": 1.0}, darrm.IIDPrior()]),
            "splits": lambda b: st.one_of(st.sampled_from([None, "0.9", 0.9, {"r": 1}]),
                                          b.open_unit().map(lambda v: (v,))),
            "samples": lambda b: b.count(), "seed": lambda b: b.count(0)}),
    Target("release_duel", release_duel,
           lambda c: dict(votes=np.random.default_rng(0).integers(0, 3, size=(4, 5)), K=5, C=3,
                          candidate=duel_candidate(), rng=0),
           {"votes": class_votes_bad, "K": lambda b: b.count(), "C": lambda b: b.count(2),
            "candidate": lambda b: st.sampled_from([None, "gnmax", np.ones(11), {"h": [1.0] * 11}, BUDGET]),
            "rng": lambda b: st.sampled_from(["abc", -1, 1.5, math.nan, [1.5], object(), "0", -(2**70)])}),
    Target("run_equal_total", run_equal_total,
           lambda c: dict(dataset="tiny", votes=_binary_votes()[0], labels=_binary_votes()[1], total_eps=(2.0,),
                          queries=(5,), delta_total=1e-5, draws=1, seed=0, prior_mean=0.9, classes=(5, 8)),
           {"dataset": lambda b: st.sampled_from([None, 1, b"mnist", ["mnist"]]), "votes": binary_votes_bad,
            "labels": labels_bad, "total_eps": sequence_bad(lambda b: b.epsilon()),
            "queries": lambda b: st.one_of(sequence_bad(lambda b: b.count())(b), st.just((31,))),
            "delta_total": lambda b: b.open_unit(), "draws": lambda b: b.count(), "seed": lambda b: b.count(0),
            "prior_mean": lambda b: b.open_unit(),
            "classes": lambda b: st.sampled_from([None, (5,), (5, 5), (5, 8, 9), ("5", "8"), (5.0, 8.0), "58"])}),
]
BY_NAME = {t.name: t for t in TARGETS}
PARAMETRIZED = [(t.name, p) for t in TARGETS for p in t.bad]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The folder whose files the check compares before and after each call."""
    return SimpleNamespace(dir=tmp_path_factory.mktemp("fuzz_experiments"))


@pytest.mark.parametrize("name,param", PARAMETRIZED, ids=[f"{n}-{p}" for n, p in PARAMETRIZED])
@FUZZ
@given(data=st.data())
def test_fuzz_experiment_functions(scratch, bad, tally, name, param, data):
    fuzz_one(BY_NAME[name], scratch, bad, tally, param, data)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_base_calls_are_valid(scratch, name):
    """The fuzzing above starts from valid calls: each base call succeeds."""
    BY_NAME[name].call(**BY_NAME[name].base(scratch))
