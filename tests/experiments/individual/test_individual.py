"""The individualised-budgets study: who sees which record, calibrations checked independently, the pipeline.

The tables designed for every group's total are re-checked without the designers' code: for each group,
every worst configuration of one query is enumerated from the model's definition (the changed members at
every vertex of their region, the unchanged ones counted at either end of their interval), the release
law computed from Algorithm 1 (the majority w.p. γ, else a fair coin), both outputs and both directions,
and the group's recorded total is re-checked on those points by :func:`references.budget_check.check_record`
(the Q-fold composition of their envelope by dp_accounting, optimistic, must meet the budget; a PLD charge
must not lie below it; a GDP charge is re-checked point by point in mpmath and composed analytically; a
generic per-query charge point by point at its (ε_q, δ_q)).
"""

from __future__ import annotations

import functools
import itertools
import json

import numpy as np
import pytest
from references.budget_check import check_record, composed_pair

import darrm
from darrm.accounting import gnmax_epsilon, optimal_homogeneous_epsilon
from darrm.experiments.cli import main
from darrm.experiments.individual.config import IndividualConfig, quick_config
from darrm.experiments.individual.mechanisms import calibrate, gnmax_labels
from darrm.experiments.individual.shards import assign_groups, group_shards, teachers_per_group, upsampled_shards
from darrm.experiments.pate.student_config import StudentConfig


def test_each_record_of_group_g_sits_in_exactly_r_g_distinct_teachers():
    groups = assign_groups(1000, (0.34, 0.43, 0.23), 0)
    assert np.bincount(groups).tolist() == [340, 430, 230]
    shards = upsampled_shards(groups, (1, 2, 3), 11, 0)
    held = np.zeros((1000, 11), dtype=int)
    for t, sh in enumerate(shards):
        assert np.unique(sh).size == sh.size  # no record twice in one shard
        held[sh, t] += 1
    assert (held.sum(axis=1) == np.asarray((1, 2, 3))[groups]).all()


def test_weighting_teachers_hold_one_group_each_and_every_record_once():
    groups = assign_groups(999, (0.34, 0.43, 0.23), 1)
    shards, owner = group_shards(groups, 21, (0.34, 0.43, 0.23), 1)
    assert len(shards) == 21 and np.bincount(owner).tolist() == teachers_per_group(21, (0.34, 0.43, 0.23))
    for sh, g in zip(shards, owner, strict=True):
        assert (groups[sh] == g).all()
    assert np.sort(np.concatenate(shards)).tolist() == list(range(999))


@functools.cache
def _calibration(K: int, Q: int):
    """calibrate() once per (K, Q) for this module (the designs take seconds)."""
    return calibrate(IndividualConfig(K=K), Q)


@pytest.mark.parametrize("Q", [20, 100])
def test_every_mechanism_meets_every_groups_total_budget(Q):
    """Checked with the accountants, not the calibration: GNMax through the exact Gaussian ε of σ divided by
    the group's sensitivity factor, DaRRM through its certificate and the optimal composition of Q queries."""
    cfg = IndividualConfig(K=21)
    cal = _calibration(21, Q)
    for g, (eps_g, r) in enumerate(zip(cfg.budgets, cfg.copies, strict=True)):
        assert gnmax_epsilon(cal.sigma_upsample / r, cfg.delta_total, Q) <= eps_g * (1 + 1e-9)
        assert gnmax_epsilon(cal.sigma_weight / cal.weights[g], cfg.delta_total, Q) <= eps_g * (1 + 1e-9)
        assert optimal_homogeneous_epsilon(cal.eps_query[g], cal.delta_query, Q, cfg.delta_total) <= eps_g * (1 + 1e-9)
    assert darrm.certify(cal.individual.gamma, cal.individual.params).certified
    assert [g.copies for g in cal.individual.params.groups] == list(cfg.copies)
    assert darrm.certify(cal.worst.gamma, cal.worst.params).certified
    # a calibration that forgets the copies is caught: the three-copy group exceeds its budget
    assert gnmax_epsilon(cal.sigma_worst / 3, cfg.delta_total, Q) > cfg.budgets[2]
    # and DaRRM's worst-budget γ is not private for records copied twice at the middle budget
    twice = darrm.ShardGroupParams(21, darrm.NonPrivate(), [(3, cal.eps_query[0], cal.delta_query)])
    assert not darrm.certify(cal.worst.gamma, twice).certified
    # DaRRM on the weighting teachers: every group at its own per-query target, certified; the LPs nested
    sizes = teachers_per_group(21, cfg.shares)
    for table in (cal.per_group, cal.weighted):
        p = table.params
        assert [(g.size, g.target_eps, g.target_delta) for g in p.groups] == [
            (k, e, cal.delta_query) for k, e in zip(sizes, cal.eps_query, strict=True)]
        assert darrm.certify(table.gamma, p).certified and table.status == "optimal"
        # the per-group γ spends the better groups' budgets: at the worst group's target for all it is refused
        all_worst = darrm.WeightedShardParams(darrm.NonPrivate(), [(k, cal.eps_query[0], cal.delta_query)
                                                                   for k in sizes], p.weights)
        assert not darrm.certify(table.gamma, all_worst).certified
    assert cal.weighted.params.weights == (1.0, 2.0, 3.0)
    assert cal.per_group.objective <= cal.weighted.objective + 1e-9


def _release_one(gamma: np.ndarray, total: np.ndarray, K: int, law: np.ndarray) -> float:
    """Pr[A = 1] for the law of the vote counts: the majority of all K votes w.p. γ, else a fair coin."""
    return float(np.sum(law * (gamma * (total >= (K + 1) // 2) + (1.0 - gamma) / 2.0)))


def _bernoulli_sum(probs) -> np.ndarray:
    pmf = np.array([1.0])
    for q in probs:
        pmf = np.convolve(pmf, [1.0 - q, q])
    return pmf


def _points(pairs: list[tuple[float, float]]) -> np.ndarray:
    """(x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) of both outputs and both directions."""
    pts = []
    for a, b in pairs:
        pts += [(b, a), (a, b), (1 - b, 1 - a), (1 - a, 1 - b)]
    return np.clip(np.array(pts), 0.0, 1.0)


def upsampled_points(gamma: np.ndarray, member, copies: int) -> np.ndarray:
    """Every configuration for a record copied into ``copies`` teachers: an ordered tuple of the changed
    teachers' vertices, n of the K − r others at the upper end of their interval, the rest at the lower."""
    K = len(gamma) - 1
    vs, (lo, hi) = member.changed_vertices(), member.unchanged_ends()
    pairs = []
    for tup in itertools.product(range(vs.shape[0]), repeat=copies):
        for n in range(K - copies + 1):
            a, b = (_release_one(gamma, np.arange(K + 1), K, _bernoulli_sum(
                [vs[v, side] for v in tup] + [hi] * n + [lo] * (K - copies - n))) for side in (0, 1))
            pairs.append((a, b))
    return _points(pairs)


def weighting_points(gamma: np.ndarray, member, sizes: list[int], g: int) -> np.ndarray:
    """Every configuration for a record of budget group g (γ read per group count): the changed teacher of
    group g at a vertex, j_h of group h's other teachers at the upper end of their interval."""
    K = sum(sizes)
    total = sum(np.meshgrid(*[np.arange(k + 1) for k in sizes], indexing="ij"))
    vs, (lo, hi) = member.changed_vertices(), member.unchanged_ends()
    others = [k - (h == g) for h, k in enumerate(sizes)]
    pairs = []
    for v in range(vs.shape[0]):
        for js in itertools.product(*[range(n + 1) for n in others]):
            laws = []
            for side in (0, 1):
                joint = np.array(1.0)
                for h, (n, j) in enumerate(zip(others, js, strict=True)):
                    changed = [vs[v, side]] if h == g else []
                    joint = np.multiply.outer(joint, _bernoulli_sum(changed + [hi] * j + [lo] * (n - j)))
                laws.append(_release_one(gamma, total, K, joint))
            pairs.append(tuple(laws))
    return _points(pairs)


def check_group_total(pts: np.ndarray, record: dict, budget: float, cfg: IndividualConfig, Q: int) -> None:
    """The group's recorded total re-checked on the enumerated points (module docstring)."""
    assert (record["epsilon"], record["delta"], record["queries"]) == (budget, cfg.delta_total, Q)
    assert record["composed_epsilon"] <= budget
    check_record(pts, record)


def test_designed_rows_meet_every_groups_total_by_an_independent_check_and_never_lose_to_the_per_query_rows():
    """The two tables designed for every group's total (upsampled teachers, weighting teachers): each group's
    total re-checked by enumeration and dp_accounting (module docstring), and by the model's verifier; their
    expected error under the prior never above the per-query rows' on the same teachers."""
    cfg, Q = IndividualConfig(K=21), 20
    cal = _calibration(21, Q)
    sizes = teachers_per_group(21, cfg.shares)
    designs = ((cal.designed_individual, cal.individual,
                lambda g: upsampled_points(cal.designed_individual.gamma, darrm.NonPrivate(), cfg.copies[g])),
               (cal.designed_per_group, cal.per_group,
                lambda g: weighting_points(cal.designed_per_group.gamma, darrm.NonPrivate(), sizes, g)))
    for table, per_query, points in designs:
        assert table.objective <= per_query.objective
        assert type(table.params) is type(per_query.params)
        groups = table.info["group_budgets"]["groups"]
        assert len(groups) == len(cfg.budgets)
        for g, (rec, budget) in enumerate(zip(groups, cfg.budgets, strict=True)):
            check_group_total(points(g), rec, budget, cfg, Q)
        # the verifier recomputes every group's total from γ alone (the smallest of its valid bounds): never
        # above the records, never below dp_accounting's optimistic composition of the enumerated pairs
        floor = max(composed_pair(points(g), Q, cfg.delta_total, pessimistic=False) for g in range(len(groups)))
        assert floor <= darrm.verify_charged_total(table) <= max(rec["composed_epsilon"] for rec in groups)
    assert [g.copies for g in cal.designed_individual.params.groups] == list(cfg.copies)
    assert [g.size for g in cal.designed_per_group.params.groups] == sizes
    # the check catches a table that spends more than the record claims: the upsampled design charged at the
    # first group's budget (one copy) for records copied three times
    with pytest.raises(AssertionError):
        check_group_total(upsampled_points(cal.designed_individual.gamma, darrm.NonPrivate(), 3),
                          cal.designed_individual.info["group_budgets"]["groups"][0], cfg.budgets[0], cfg, Q)
    record = cal.record()
    for key in ("darrm_designed_individual", "darrm_designed_per_group"):
        assert [g["composed_epsilon"] <= g["epsilon"] for g in record[key]["groups"]] == [True] * len(cfg.budgets)


def test_weighted_gnmax_reads_the_weighted_histogram():
    votes = np.array([[5, 5, 8]])
    rng = np.random.default_rng(0)
    # σ tiny: the weighted argmax decides; weight 3 on the lone 8 wins
    assert gnmax_labels(votes, 1e-9, (5, 8), rng, np.array([1.0, 1.0, 3.0])).tolist() == [8]
    assert gnmax_labels(votes, 1e-9, (5, 8), rng).tolist() == [5]


def test_bad_options_exit_2_naming_the_option_before_any_work(tmp_path, capsys):
    for argv, name in ((["--teachers", "4"], "teachers"), (["--copies", "1,2"], "copies"),
                       (["--queries", "0"], "queries"), (["--draws", "0"], "draws"),
                       (["--copies", "1,x"], "--copies")):
        try:
            rc = main(["individual", "--quick", "--out", str(tmp_path / "o"), *argv])
        except SystemExit as exc:  # argparse's own type errors
            rc = exc.code
        assert rc == 2
        err = capsys.readouterr().err
        assert name in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_the_study_runs_end_to_end_and_writes_its_files(shared_datasets, tmp_path, capsys):
    from darrm.experiments.individual.report import write_results
    from darrm.experiments.individual.run import METHODS, run_individual

    cfg = quick_config(K=9, queries=(10,), draws=1, teacher=StudentConfig(steps=5, self_training=False))
    result = run_individual(cfg, data_dir=str(shared_datasets), cache_dir=tmp_path / "cache", progress=False)
    assert {r["method"] for r in result["rows"]} == set(METHODS)
    assert all(0.0 <= r["accuracy_mean"] <= 1.0 and r["released"] == 10 for r in result["rows"])
    sim = result["simulation"][0]
    assert sim["all_at_best"] <= sim["groups"] <= sim["all_at_worst"]
    paths = write_results(result, tmp_path / "out")
    assert all(p.is_file() for p in paths)
    assert json.loads(paths[0].read_text())["config"]["K"] == 9
    assert "smoke test" in paths[1].read_text()
    # the teachers' votes are cached: a second run trains nothing
    again = run_individual(cfg, data_dir=str(shared_datasets), cache_dir=tmp_path / "cache", progress=False)
    assert again["rows"] == result["rows"]
    assert again["run"]["seconds_teachers"] < result["run"]["seconds_teachers"]
