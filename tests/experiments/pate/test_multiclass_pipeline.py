"""``darrm-experiments pate --classes 10``: teachers and students see only the query pool, every
student is scored once after training, every record carries its total (ε, δ) and student accuracy,
the quick mode says it is a smoke test, and bad options are refused in one line.

Runs on real MNIST at toy size (5 teachers on 500 images, Q = 6, 2 draws, ε_total = 2) with spies
on the functions that see data.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from darrm.experiments import cli
from darrm.experiments.data.loader import load_dataset
from darrm.experiments.pate import multiclass_run as run_mod
from darrm.experiments.pate.multiclass_aggregators import gnmax_sigma
from darrm.experiments.pate.public_split import HeldOutSet, split_public

TINY = ["--teachers", "5", "--train-size", "500", "--queries", "6", "--draws", "2", "--no-progress"]


@pytest.fixture(scope="module")
def run10(tmp_path_factory, shared_datasets, spy_students):
    root = tmp_path_factory.mktemp("ten")
    events: list[tuple] = []
    mp = pytest.MonkeyPatch()
    real_votes = run_mod.multiclass_votes

    def votes(name, tx, ty, pool, *args, **kw):
        events.append(("teachers", pool.copy()))
        return real_votes(name, tx, ty, pool, *args, **kw)

    mp.setattr(run_mod, "multiclass_votes", votes)
    spy_students(mp, run_mod, events)
    argv = ["pate", "--dataset", "mnist", "--classes", "10", "--quick", "--out", str(root / "out"),
            "--cache-dir", str(root / "cache"), "--data-dir", str(shared_datasets / "mnist"), *TINY]
    try:
        assert cli.main(argv) == 0
    finally:
        mp.undo()
    return root / "out", events, load_dataset("mnist", shared_datasets / "mnist")


def _rows(images: np.ndarray) -> set[bytes]:
    return {r.tobytes() for r in images}


def test_teachers_and_students_see_the_pool_only_and_students_are_scored_after_training(run10):
    out, events, ds = run10
    public_x, public_y = run_mod.public_subset(ds.test_images, ds.test_labels, 1000, 0)  # the --quick public set
    split = split_public(len(public_y), 0, 0.5)
    pool, held = _rows(public_x[split.pool]), _rows(public_x[split.held_out])
    assert events[0][0] == "teachers" and _rows(events[0][1]) == pool
    trains = [e for e in events if e[0] == "train"]
    assert trains
    for _, images, unlabelled in trains:
        seen = _rows(images) | _rows(unlabelled)
        assert seen <= pool and not seen & held
    kinds = [e[0] for e in events[1:]]
    assert kinds == ["train", "evaluate"] * (len(kinds) // 2)  # each score follows its own training


def test_run_record_names_the_cache_by_key_not_by_absolute_path(run10):
    out, _, _ = run10
    text = (out / "multiclass_run.json").read_text()
    key = json.loads(text)["teachers"]["cache"]
    assert str(out.parent) not in text and "/" not in key and key.startswith("mnist-multiclass-")

    def strings(node):
        if isinstance(node, dict):
            return [s for k, v in node.items() for s in (k, *strings(v))]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return [node] if isinstance(node, str) else []

    assert [s for s in strings(json.loads(text)) if s.startswith("/")] == []
    assert (out.parent / "cache" / key / "settings.json").is_file()


def test_a_leaking_pipeline_fails(run10, monkeypatch, tmp_path, shared_datasets):
    """The same run with a student that reads the held-out labels raises instead of reporting."""
    from darrm.experiments.pate.public_split import HeldOutAccessError

    def leak(images, labels, unlabelled, classes, cfg, seed):
        raise AssertionError("unreachable")

    real_init = HeldOutSet.__init__

    def init(self, images, labels):
        real_init(self, images, labels)
        self.labels  # noqa: B018 - a pipeline that peeks

    monkeypatch.setattr(HeldOutSet, "__init__", init)
    with pytest.raises(HeldOutAccessError):
        run_mod.run_multiclass(run_mod.MulticlassConfig.quick("mnist", teachers=5, train_size=500, queries=(6,),
                                                              draws=1),
                               tmp_path / "o", data_dir=str(shared_datasets / "mnist"), cache_dir=tmp_path / "c",
                               progress=False)


def test_every_record_has_its_total_and_student_accuracy(run10):
    out, _, _ = run10
    records = json.loads((out / "results.json").read_text())
    methods = {r["method"] for r in records}
    assert methods == {"gnmax", "confident-gnmax", "darrm-plurality", "darrm-duel", "plurality-nonprivate",
                       "true-labels"}
    for r in records:
        assert {"student_accuracy_mean", "student_accuracy_std", "baseline_student_accuracy_mean", "epsilon_total",
                "delta_total", "accountant", "query_protocol"} <= set(r)
        assert r["student"]["kind"] == "semi-supervised" and r["query_protocol"].startswith("queries drawn blind")
        if r["method"] in ("plurality-nonprivate", "true-labels"):
            assert r["epsilon_total"] is None
        else:
            assert r["epsilon_total"] == 2.0 and r["delta_total"] == 1e-5
    g = next(r for r in records if r["method"] == "gnmax")
    assert g["sigma"] == pytest.approx(gnmax_sigma(2.0, 1e-5, 6))
    d = next(r for r in records if r["method"] == "darrm-plurality")
    assert d["certified_divergence"] <= d["delta_query"] and d["epsilon_total_check"] <= 2.0
    assert d["accountant"].startswith("TIGHT") and d["eps_query"] >= d["eps_query_generic"]  # own profile
    duel = next(r for r in records if r["method"] == "darrm-duel")
    assert duel["epsilon_total_check"] <= 2.0 and duel["prior_agreement"] >= duel["prior_agreement_gnmax"]
    assert duel["student_accuracy_mean"] is not None and duel["baseline_student_accuracy_mean"] is not None
    assert duel["accountant"].startswith("exact GDP") and duel["candidates"][0]["name"] == "gnmax"
    c = next(r for r in records if r["method"] == "confident-gnmax")
    assert "epsilon_published" in c and "epsilon_published_note" in c  # the GNSS release (or why not)


def test_a_second_data_set_reads_the_darrm_designs_instead_of_solving_them(run10, monkeypatch):
    out, _, _ = run10
    cache = out.parent / "cache"
    assert len(list(cache.glob("pate-design-*.json"))) == 2  # duel + plurality of the one (ε_total, Q)

    def unsolvable(*args, **kwargs):
        raise AssertionError("a DaRRM design solved again although it is cached")

    monkeypatch.setattr(run_mod, "design_duel", unsolvable)
    monkeypatch.setattr(run_mod, "plurality_tight_budget", unsolvable)
    cfg = run_mod.MulticlassConfig.quick("fashion-mnist", teachers=5, train_size=500, queries=(6,))
    mech = run_mod._mechanisms(cfg, False, cache)
    records = {r["method"]: r for r in json.loads((out / "results.json").read_text())}
    for method, key in (("darrm-duel", "sigma1"), ("darrm-plurality", "eps_query")):
        assert mech[(method, 2.0, 6)][key] == records[method][key]
    assert mech[("darrm-plurality", 2.0, 6)]["table"].max_divergence == records["darrm-plurality"][
        "certified_divergence"]


def test_quick_mode_says_it_is_a_smoke_test(run10):
    out, _, _ = run10
    text = (out / "multiclass.md").read_text()
    assert text.startswith("SMOKE TEST") and "Published anchors" not in text
    assert (out / "multiclass_student_vs_epsilon.png").stat().st_size > 1000


@pytest.mark.parametrize(("extra", "option"), [(["--classes", "3"], "--classes"),
                                               (["--classes", "10", "--ms", "3"], "ms"),
                                               (["--total-eps", "1"], "total-eps"),
                                               (["--classes", "10", "--total-eps", "-1"], "total_eps"),
                                               (["--classes", "10", "--teachers", "1"], "teachers")])
def test_cli_refuses_bad_ten_class_options_with_one_line(tmp_path, capsys, extra, option):
    argv = ["pate", "--dataset", "mnist", "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"), *extra]
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err
    assert not (tmp_path / "o" / "results.json").exists()


def test_methods_setting_lists_the_runs_methods_in_table_order_and_refuses_unknown_ones():
    from darrm import ParameterError
    from darrm.experiments.pate.multiclass_config import METHODS, MulticlassConfig

    assert tuple(run_mod.MULTICLASS_METHODS) == METHODS
    assert MulticlassConfig("mnist", methods=("true-labels", "gnmax")).methods == ("gnmax", "true-labels")
    for bad in ((), ("gnmax", "gnmax"), ("lnmax",)):
        with pytest.raises(ParameterError, match="methods"):
            MulticlassConfig("mnist", methods=bad)


def test_releases_that_agree_label_for_label_share_one_student(shared_datasets, tmp_path, monkeypatch):
    """A GNMax whose release is the plurality itself (noise removed by a spy) gets the plurality's student: one
    semi-supervised and one baseline student are trained for the two rows, with equal scores."""
    calls: list[int] = []
    real = run_mod.train_student

    def counting(images, labels, unlabelled, classes, c, seed):
        calls.append(len(labels))
        return real(images, labels, unlabelled, classes, c, seed)

    monkeypatch.setattr(run_mod, "train_student", counting)
    monkeypatch.setattr(run_mod, "gnmax_release", lambda hist, sigma, rng: hist.argmax(axis=1))
    cfg = run_mod.MulticlassConfig.quick("mnist", teachers=5, train_size=500, queries=(6,), draws=1,
                                         methods=("gnmax", "plurality-nonprivate"))
    records = run_mod.run_multiclass(cfg, tmp_path / "o", data_dir=str(shared_datasets / "mnist"),
                                     cache_dir=tmp_path / "c", progress=False)
    assert calls == [6, 6]
    g, p = (next(r for r in records if r["method"] == m) for m in ("gnmax", "plurality-nonprivate"))
    assert g["student_accuracy_mean"] == p["student_accuracy_mean"]
    assert g["baseline_student_accuracy_mean"] == p["baseline_student_accuracy_mean"]
    run = json.loads((tmp_path / "o" / "multiclass_run.json").read_text())
    assert run["students_trained"] == 1 and run["students_shared"] == 1
