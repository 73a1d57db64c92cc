"""The PATE student: the held-out half is never read before evaluation, students use the released
labels, every record's valid total (ε, δ) is independently re-derived, and the CLI refuses bad flags.

The end-to-end fixture runs ``darrm-experiments pate --student`` on real MNIST (1,100 training
images, 1 teacher epoch, Q ∈ {5, 12}, 2 draws, 30 student steps) with spies on the two functions
that see data: the release of labels and the student's training.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from darrm import ParameterError
from darrm.experiments import cli
from darrm.experiments.data.loader import binary_task, load_dataset
from darrm.experiments.pate import run as run_mod
from darrm.experiments.pate import student_study
from darrm.experiments.pate.public_split import HeldOutAccessError, HeldOutSet, split_public
from darrm.experiments.pate.student import train_student
from darrm.experiments.pate.student_config import StudentConfig
from darrm.experiments.pate.study import METHODS, StudyConfig
from darrm.experiments.pate.totals import total_budget

TINY = ["--train-size", "1100", "--epochs", "1", "--queries", "5,12", "--draws", "2", "--no-progress"]


def test_held_out_guard_refuses_every_read_outside_accuracy():
    held = HeldOutSet(np.arange(12).reshape(4, 3), np.array([0, 1, 1, 1]))
    for read in (lambda h: h.images, lambda h: h.labels, lambda h: h[0], lambda h: len(h),
                 lambda h: np.asarray(h), lambda h: list(h)):
        with pytest.raises(HeldOutAccessError, match="held-out"):
            read(held)
    assert held.evaluations == 0
    assert held.accuracy(lambda x: x[:, 0] % 2) == 0.75  # first column 0,3,6,9 → 0,1,0,1 vs 0,1,1,1
    assert held.evaluations == 1
    with pytest.raises(ParameterError, match="predict"):
        held.accuracy(lambda x: np.zeros(3))


def test_a_pipeline_that_trains_on_the_held_out_half_fails():
    """A deliberately leaking student (fit on the held-out images) is stopped by the guard."""
    held = HeldOutSet(np.zeros((4, 28, 28), np.uint8), np.array([5, 8, 5, 8]))
    with pytest.raises(HeldOutAccessError):
        train_student(held.images, held.labels, np.zeros((0, 28, 28), np.uint8), (5, 8), StudentConfig(steps=1), 0)


@pytest.mark.parametrize("n,frac", [(2, 0.5), (1866, 0.5), (2000, 0.3), (11, 0.9)])
def test_public_split_is_disjoint_covering_and_seeded(n, frac):
    s = split_public(n, seed=4, held_out_fraction=frac)
    assert np.intersect1d(s.pool, s.held_out).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([s.pool, s.held_out])), np.arange(n))
    assert len(s.held_out) == round(n * frac)
    np.testing.assert_array_equal(split_public(n, 4, frac).pool, s.pool)
    assert n < 100 or not np.array_equal(split_public(n, 5, frac).pool, s.pool)


@pytest.mark.parametrize("kw,name", [({"n": 1, "seed": 0}, "n"), ({"n": 10, "seed": 0, "held_out_fraction": 1.0},
                                                                   "held_out_fraction"),
                                     ({"n": 3, "seed": 0, "held_out_fraction": 0.01}, "held_out_fraction")])
def test_public_split_names_the_bad_parameter(kw, name):
    with pytest.raises(ParameterError, match=name):
        split_public(**kw)


@pytest.fixture(scope="module")
def task(shared_datasets):
    return binary_task(load_dataset("mnist", shared_datasets / "mnist"))


def test_student_learns_from_the_released_labels(task):
    """True labels give an accurate student; the same images with every label swapped give one that
    is worse than chance: the student's accuracy is a function of the labels it was given."""
    s = split_public(len(task.test_labels), 0)
    pool, labels = task.test_images[s.pool], task.test_labels[s.pool]
    held = HeldOutSet(task.test_images[s.held_out], task.test_labels[s.held_out])
    cfg = StudentConfig(steps=100, self_training=False)
    good = held.accuracy(train_student(pool[:100], labels[:100], pool[100:], (5, 8), cfg, 1).predict)
    swapped = np.where(labels[:100] == 5, 8, 5)
    bad = held.accuracy(train_student(pool[:100], swapped, pool[100:], (5, 8), cfg, 1).predict)
    assert good > 0.85 and bad < 0.15


def test_student_refuses_labels_outside_its_classes():
    with pytest.raises(ParameterError, match="labels"):
        train_student(np.zeros((2, 28, 28), np.uint8), np.array([5, 7]), np.zeros((0, 28, 28), np.uint8), (5, 8),
                      StudentConfig(steps=1), 0)


@pytest.fixture(scope="module")
def student_run(tmp_path_factory, shared_datasets, spy_students):
    root = tmp_path_factory.mktemp("student")
    events: list[tuple] = []
    mp = pytest.MonkeyPatch()
    real_released = run_mod.released_labels

    def released(cfg, vp, vn, mech):
        events.append(("release", vp.shape[0], vn.shape[0]))
        return real_released(cfg, vp, vn, mech)

    mp.setattr(run_mod, "released_labels", released)
    spy_students(mp, student_study, events)
    argv = ["pate", "--dataset", "mnist", "--student", "--quick", "--out", str(root / "out"),
            "--cache-dir", str(root / "cache"), "--data-dir", str(shared_datasets / "mnist"), *TINY]
    try:
        assert cli.main(argv) == 0
    finally:
        mp.undo()
    return root / "out", events


def _rows(images: np.ndarray) -> set[bytes]:
    return {r.tobytes() for r in images}


def test_pipeline_queries_and_trains_on_the_pool_only_and_evaluates_after_training(student_run, task):
    out, events = student_run
    split = json.loads((out / "split.json").read_text())
    pool, held = np.asarray(split["pool"]), np.asarray(split["held_out"])
    assert np.intersect1d(pool, held).size == 0 and len(pool) + len(held) == len(task.test_labels)
    assert events[0] == ("release", len(pool), len(pool))  # only the pool's votes reach the aggregators
    # every image a student saw (labelled or unlabelled) is a pool image, never a held-out one
    held_only = _rows(task.test_images[held]) - _rows(task.test_images[pool])
    trains = [e for e in events if e[0] == "train"]
    assert len(trains) == len(METHODS) * 2 * 2  # methods × Q × draws (m = 3 only)
    for _, images, unlabelled in trains:
        seen = _rows(images) | _rows(unlabelled)
        assert not (seen & held_only)
        assert len(images) + len(unlabelled) == len(pool)
    # strictly train, evaluate, train, evaluate, … : each student is scored once, after its training
    kinds = [e[0] for e in events[1:]]
    assert kinds == ["train", "evaluate"] * len(trains)


def test_student_accuracies_are_reproduced_from_the_saved_releases(student_run, task):
    out, _ = student_run
    records = json.loads((out / "results.json").read_text())
    split = json.loads((out / "split.json").read_text())
    pool, held = np.asarray(split["pool"]), np.asarray(split["held_out"])
    released = run_mod.load_releases(out / "releases.npz")
    guard = HeldOutSet(task.test_images[held], task.test_labels[held])
    cfg = StudyConfig.with_student("mnist", quick=True)
    for r in (r for r in records if r["Q"] is not None):
        accs = []
        for d in range(2):
            idx, lab = released[(r["method"], r["m"], r["Q"], d)]
            np.testing.assert_array_equal(lab, lab.astype(int))
            rest = np.setdiff1d(np.arange(len(pool)), idx)
            st = train_student(task.test_images[pool][idx], lab, task.test_images[pool][rest], (5, 8), cfg.student,
                               student_study.student_seed(0, r["Q"], d))
            accs.append(guard.accuracy(st.predict))
        assert r["student_accuracy_mean"] == pytest.approx(np.mean(accs), abs=1e-12)
        assert r["student_accuracy_std"] == pytest.approx(np.std(accs), abs=1e-12)
        assert r["accuracy_mean"] == pytest.approx(np.mean([np.mean(released[(r["method"], r["m"], r["Q"], d)][1]
                                                                    == task.test_labels[pool][
                                                                        released[(r["method"], r["m"], r["Q"], d)][0]])
                                                            for d in range(2)]), abs=1e-12)
    assert (out / "students.md").stat().st_size > 0 and (out / "student_vs_epsilon.png").stat().st_size > 0


def test_quick_mode_says_it_is_a_smoke_test_and_shows_no_paper_columns(student_run):
    out, _ = student_run
    tables = (out / "tables.md").read_text()
    assert tables.startswith("SMOKE TEST (--quick)")
    assert "paper Table" not in tables and "(paper:" not in tables


def _gaussian_delta(eps: float, mu: float) -> float:
    """δ(ε) of a Gaussian mechanism with μ = sensitivity/σ (Balle & Wang 2018, Theorem 8), via scipy."""
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def test_every_record_carries_a_valid_total_checked_independently(student_run):
    out, _ = student_run
    records = json.loads((out / "results.json").read_text())
    teachers = json.loads((out / "teachers.json").read_text())
    eps_t, Delta = teachers["eps_teacher"], 1e-4
    for r in (r for r in records if r["Q"] is not None):
        assert {"epsilon_total", "delta_total", "accountant", "student_accuracy_mean", "student_accuracy_std"} <= set(r)
        if METHODS[r["method"]].ensemble == "private":
            # fixed DP-SGD teachers: every release is post-processing of the (ε_t, Δ)-DP ensemble
            assert (r["epsilon_total"], r["delta_total"]) == (eps_t, Delta) and "parallel" in r["accountant"]
        elif r["method"].startswith("gnmax"):
            mu = math.sqrt(2 * r["Q"]) / r["sigma"]
            assert _gaussian_delta(r["epsilon_total"], mu) == pytest.approx(Delta, rel=1e-6)
        else:
            assert r["epsilon_total"] is None and "non-private" in r["accountant"]
        if r["method"].startswith("darrm"):
            fresh = r["epsilon_total_fresh_members"]
            label = r["accountant_fresh_members"]
            assert "TIGHT" in label and "NOT for fixed teachers" in label
            assert r["delta_total_fresh_members"] == r["delta_total_paper"]
            # the tight bound: above one query's ε (at a smaller δ), below the generic optimal composition
            assert r["eps_query"] * 0.5 < fresh <= r["eps_total_optimal"] * (1 + 1e-6)


def test_darrm_total_on_fixed_teachers_does_not_grow_with_Q():
    mech = {"eps_query": 0.27, "delta_query": 3e-4}
    a = total_budget("darrm", "private", 20, mech, 0.09, 1e-4, 0.01)
    b = total_budget("darrm", "private", 500, mech, 0.09, 1e-4, 0.2)
    assert a["epsilon_total"] == b["epsilon_total"] == 0.09
    assert a["epsilon_total_fresh_members"] < b["epsilon_total_fresh_members"]
    assert "GENERIC" in a["accountant_fresh_members"]  # no table given: the generic bound, named
    with pytest.raises(ParameterError, match="sigma"):
        total_budget("gnmax", "nonprivate", 5, mech, 0.09, 1e-4, 0.01)


@pytest.mark.parametrize("extra,option", [(["--held-out-fraction", "1.5"], "held_out_fraction"),
                                          (["--no-self-training"], "student"),
                                          (["--held-out-fraction", "0.3"], "student")])
def test_cli_refuses_bad_student_options_with_one_line(tmp_path, capsys, extra, option):
    argv = ["pate", "--dataset", "mnist", "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"), *extra]
    if option == "held_out_fraction":
        argv.append("--student")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option in err[0]
    assert not (tmp_path / "o" / "results.json").exists()


def test_student_config_names_the_bad_field():
    for field, value in (("steps", 0), ("batch_size", 0), ("lr", 0.0), ("confidence", 1.0), ("hidden", 0)):
        with pytest.raises(ParameterError, match=field):
            StudentConfig(**{field: value})
    with pytest.raises(ParameterError, match="student"):
        StudyConfig("mnist", student="yes")  # type: ignore[arg-type]
