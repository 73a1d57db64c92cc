"""Fuzz the C-class plurality aggregator and the bounds on runaway sizes.

* ``release_plurality`` / ``histograms_of`` (the PATE experiments' C-class aggregator) with votes
  that are no (Q, K) matrix of class labels 0..C−1, and rngs that are no Generator or seed: one-line
  :class:`~darrm.errors.ParameterError` naming the argument, the inputs unchanged;
* ``solve_top_two`` and ``MulticlassConfig`` with a δ no plurality table can be certified for;
* huge integers for every real-valued and count parameter of a labelling session;
* runaway counts: ``local:N`` / ``joblib:N`` executors past the memory budget (the real solve path,
  not stubbed), checkpoints declaring more rows than the problem has, labelling batches of millions
  of queries far past the budget; each refused within :data:`~tests.fuzz.conftest.CALL_LIMIT_S`
  (measured: 1–4 s), nothing written.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import darrm
import darrm.cli
from darrm.errors import DarrmError, ParameterError

from .conftest import SETTINGS
from .test_fuzz_cli import run

EXAMPLES = 25
FUZZ = settings(max_examples=EXAMPLES, **SETTINGS)
K, C = 7, 3


@pytest.fixture(scope="module")
def top_two():
    from darrm.experiments.pate.plurality_top_two import solve_top_two

    return solve_top_two(K, C, 1.0, 1e-3)


def _refused(call, name: str, bad) -> DarrmError:
    with bad.time_limit(), pytest.raises(DarrmError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{name}: "), msg
    return info.value


def _bad_votes():
    """Vote matrices that are no (Q, K=7) matrix of labels 0..2 with Q ≥ 1."""
    good_row = [0, 1, 2, 0, 1, 2, 0]
    return st.one_of(
        st.sampled_from([None, "abc", [], [[]], 3, 2.5, {"v": 1}, np.zeros((0, K), dtype=int), np.ones(K, dtype=int),
                         np.ones((1, K, 1), dtype=int), np.ones((2, K - 1), dtype=int), [good_row, good_row[:3]],
                         [[*good_row[:-1], "x"]], np.full((1, K), np.nan), np.full((1, K), np.inf),
                         np.array([[1j] * K]), [[object()] * K]]),
        # one entry out of 0..C−1, or not integral
        st.tuples(st.integers(1, 4), st.integers(0, K - 1),
                  st.one_of(st.integers(C, 10**6), st.integers(-(10**6), -1),
                            st.floats(0.01, 1.99).filter(lambda x: x != 1.0), st.sampled_from([2.5, 1e300, -0.5])))
        .map(lambda t: np.concatenate([np.tile(np.array(good_row, dtype=float), (t[0], 1))[:, :t[1]],
                                       np.full((t[0], 1), t[2]),
                                       np.tile(np.array(good_row, dtype=float), (t[0], 1))[:, t[1] + 1:]], axis=1)))


@FUZZ
@given(votes=_bad_votes())
def test_fuzz_plurality_votes(top_two, bad, tally, votes):
    from darrm.experiments.pate.multiclass_aggregators import histograms_of
    from darrm.experiments.pate.plurality_top_two import release_plurality

    tally("api release_plurality(votes=…)")
    numeric = isinstance(votes, np.ndarray) and votes.dtype.kind in "iuf"
    before = votes.copy() if numeric else None
    _refused(lambda: release_plurality(votes, top_two, np.random.default_rng(0)), "votes", bad)
    _refused(lambda: histograms_of(votes, C), "votes", bad)
    if numeric:
        assert np.array_equal(votes, before, equal_nan=True), "the votes were changed"


@FUZZ
@given(rng=st.sampled_from(["abc", -1, 1.5, math.nan, [1.5], object(), "0", -(2**70), True, {"seed": 1}]))
def test_fuzz_plurality_rng(top_two, bad, tally, rng):
    from darrm.experiments.pate.plurality_top_two import release_plurality

    tally("api release_plurality(rng=…)")
    _refused(lambda: release_plurality(np.zeros((2, K), dtype=int), top_two, rng), "rng", bad)


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(delta=st.one_of(st.floats(0.0, 1e-12, exclude_min=True), st.sampled_from([1e-300, 5e-324, 1e-12])))
def test_fuzz_plurality_delta_below_the_rounding_margin(bad, tally, delta):
    from darrm.experiments.pate.multiclass_config import MulticlassConfig
    from darrm.experiments.pate.plurality_top_two import solve_top_two

    tally("api solve_top_two(delta ≤ margin) / MulticlassConfig(total_delta ≤ margin)")
    _refused(lambda: solve_top_two(K, C, 1.0, delta), "delta", bad)
    _refused(lambda: MulticlassConfig("mnist", total_delta=delta), "total_delta", bad)


@pytest.fixture(scope="module")
def table():
    return darrm.solve(darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5), progress=False)


HUGE = st.one_of(st.integers(min_value=10**309, max_value=10**400), st.integers(max_value=-(10**309)),
                 st.sampled_from([10**5000, -(10**5000), 2**1024]))


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(value=HUGE, param=st.sampled_from(["budget_epsilon", "delta"]))
def test_fuzz_huge_integers_are_parameter_errors(table, bad, tally, value, param):
    from darrm.accounting import LabellingSession

    tally("api huge integers (beyond float64, past str's digit limit)")
    kw = {"budget_epsilon": 1.0, "delta": 1e-4, param: value}
    _refused(lambda: LabellingSession(table, member_randomness="fresh", **kw), param, bad)
    _refused(lambda: darrm.TotalBudget(1.0, 1e-3, value), "queries", bad)


@settings(max_examples=10, **SETTINGS)
@given(kind=st.sampled_from(["local", "joblib"]), workers=st.integers(40, 90_000))
def test_fuzz_runaway_executor_workers(tmp_path_factory, bad, tally, kind, workers):
    """The real solve path (no stub): N workers' sweeps must fit --max-memory, for both local kinds."""
    pytest.importorskip("joblib")
    tally("cli darrm solve --executor KIND:N past the memory budget")
    d = tmp_path_factory.mktemp("exec")
    with bad.time_limit():
        rc, out, err = run(darrm.cli.main, ["--no-progress", "solve", "--K", "5", "--m", "1", "--executor",
                                            f"{kind}:{workers}", "--max-memory", "256M", "--out", str(d / "g.json")])
    assert rc == 2 and err.count("\n") == 1 and err.startswith("darrm: error: executor: "), err
    assert list(d.iterdir()) == []


@settings(max_examples=10, **SETTINGS)
@given(extra=st.integers(1, 10**6), distinct=st.integers(1, 4))
def test_fuzz_forged_checkpoint_rows(tmp_path_factory, bad, tally, extra, distinct):
    """A checkpoint declaring more rows than K votes over C corners have distinct multisets is refused
    from its header; any number of repeats of fewer distinct valid rows loads them once."""
    from darrm.solver.checkpoint import load_checkpoint, multisets

    tally("api checkpoint declaring runaway rows")
    Kc, Cc, fp = 5, 4, "0123456789abcdef"
    rows = np.zeros((distinct, Cc), dtype=np.int64)
    rows[:, 0] = Kc - np.arange(distinct)
    rows[:, 1] = np.arange(distinct)
    d = tmp_path_factory.mktemp("ck")
    forged = np.tile(rows, (math.ceil((multisets(Kc, Cc) + extra) / distinct), 1))
    p = d / "c.npz"
    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.array(fp), working=forged)
    p.write_bytes(buf.getvalue())
    with bad.time_limit(), pytest.raises(ParameterError, match=r"^checkpoint: .*declares [\d,]+ rows, more than"):
        load_checkpoint(Path(p), fp, Cc, Kc)
    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.array(fp), working=forged[:multisets(Kc, Cc)])
    p.write_bytes(buf.getvalue())
    np.testing.assert_array_equal(load_checkpoint(Path(p), fp, Cc, Kc), rows)


@settings(max_examples=5, **SETTINGS)
@given(n=st.integers(10**5, 3 * 10**6))
def test_fuzz_labelling_batches_far_past_the_budget(table, bad, tally, n):
    from darrm.accounting import LabellingSession, PrivacyBudgetExceeded

    tally("api LabellingSession batch of 1e5–3e6 queries past the budget")
    s = LabellingSession(table, budget_epsilon=1.0, delta=1e-4, member_randomness="fresh")
    with bad.time_limit(), pytest.raises(PrivacyBudgetExceeded, match="nothing was released"):
        s.label_counts(np.full(n, 5))
    assert s.queries == 0


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(items=st.lists(st.sampled_from(["1", "0.5", "2", ""]), min_size=2, max_size=5).filter(lambda xs: "" in xs))
def test_fuzz_list_options_refuse_empty_items(tally, items):
    tally("cli darrm shuffle --eps0 with an empty item")
    rc, out, err = run(darrm.cli.main, ["shuffle", "--n", "1000", "--eps0", ",".join(items), "--delta", "1e-6"])
    assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("darrm: error: eps0: "), err
