"""A tiny end-to-end run of ``darrm-experiments pate`` on the real MNIST files.

The test recomputes every reported accuracy from the cached teacher votes, checks the
privacy columns against the accountant, and checks that the released labels do not depend
on the true test labels (a run with shuffled labels releases exactly the same labels).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from darrm import IIDPrior, expected_signed_error
from darrm.accounting import kairouz_general
from darrm.experiments import cli
from darrm.experiments.data import loader
from darrm.experiments.pate import run as run_mod
from darrm.experiments.pate.run import load_releases, mechanism_at
from darrm.experiments.pate.study import METHODS, StudyConfig, query_indices
from darrm.experiments.releases import mechanism_rng, release

TINY = ["--train-size", "1100", "--epochs", "1", "--ms", "1,3", "--queries", "5,12", "--draws", "3",
        "--no-progress"]
REQUIRED = {"dataset", "method", "m", "Q", "accuracy_mean", "accuracy_std", "eps_query", "delta_query"}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, shared_datasets):
    root = tmp_path_factory.mktemp("pate")
    argv = ["pate", "--dataset", "mnist", "--out", str(root / "out"), "--cache-dir", str(root / "cache"),
            "--data-dir", str(shared_datasets / "mnist"), *TINY]
    assert cli.main(argv) == 0
    return root, argv


def _load(out: Path):
    return (json.loads((out / "results.json").read_text()), json.loads((out / "teachers.json").read_text()),
            json.loads((out / "mechanisms.json").read_text()))


def test_results_file_has_the_interface_records(tiny_run):
    root, _ = tiny_run
    records, teachers, _ = _load(root / "out")
    assert isinstance(records, list) and all(REQUIRED <= set(r) for r in records)
    cells = {(r["method"], r["m"], r["Q"]) for r in records if r["m"] is not None}
    assert cells == {(meth, m, Q) for meth in METHODS for m in (1, 3) for Q in (5, 12)}
    tr = [r for r in records if r["method"] == "teachers-dpsgd"]
    assert len(tr) == 1 and tr[0]["eps"] == teachers["eps_teacher"] > 0
    for name in ("tables.md", "accuracy_vs_m.png", "releases.npz"):
        assert (root / "out" / name).stat().st_size > 0


def _strings(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


def test_teachers_json_holds_no_absolute_path(tiny_run):
    """The run ran on absolute --out/--cache-dir/--data-dir paths, yet teachers.json names the
    ensembles by their cache key and the data files by name only."""
    root, _ = tiny_run
    _, teachers, _ = _load(root / "out")
    text = (root / "out" / "teachers.json").read_text()
    assert str(root) not in text
    absolute = [s for s in _strings(teachers) if Path(s).is_absolute() or s.startswith(("~", "\\\\"))]
    assert absolute == []
    cache = teachers["run"]["cache"]
    assert all((root / "cache" / cache[k] / "settings.json").is_file() for k in ("private", "nonprivate"))
    assert teachers["run"]["data"]["source_dir"] == "mnist"
    assert {f["path"] for f in teachers["run"]["data"]["files"]} == {
        f"{n}.gz" for n in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                            "t10k-labels-idx1-ubyte")}


def test_accuracies_recomputed_from_cached_votes(tiny_run):
    root, _ = tiny_run
    records, teachers, mechs = _load(root / "out")
    cfg = StudyConfig("mnist", ms=(1, 3), queries=(5, 12), draws=3, epochs=1, train_size=1100)
    vp = np.load(root / "cache" / teachers["run"]["cache"]["private"] / "votes.npy")
    vn = np.load(root / "cache" / teachers["run"]["cache"]["nonprivate"] / "votes.npy")
    labels = binary_test_labels()
    released = load_releases(root / "out" / "releases.npz")
    for r in (r for r in records if r["m"] is not None):
        mech = mechanism_at({k: (np.asarray(v) if k.startswith("gamma_") and isinstance(v, list) else v)
                             for k, v in mechs[str(r["m"])].items()}, r["Q"])
        accs = []
        for d in range(cfg.draws):
            idx = query_indices(cfg.seed, len(labels), r["Q"], d)
            rng = mechanism_rng(METHODS, cfg.seed, r["method"], r["m"], r["Q"], d)
            lab = release(METHODS, r["method"], vp[idx], vn[idx], mech, rng, cfg.classes)
            saved_idx, saved_lab = released[(r["method"], r["m"], r["Q"], d)]
            np.testing.assert_array_equal(idx, saved_idx)
            np.testing.assert_array_equal(lab, saved_lab)
            if r["method"] == "majority-nonprivate":  # independent of the package's code
                np.testing.assert_array_equal(lab, np.where((vn[idx] != 5).sum(1) > 5, 8, 5))
            accs.append(np.mean(lab == labels[idx]))
        assert r["accuracy_mean"] == pytest.approx(np.mean(accs), abs=1e-12)
        assert r["accuracy_std"] == pytest.approx(np.std(accs), abs=1e-12)


def binary_test_labels() -> np.ndarray:
    ds = loader.load_dataset("mnist", allow_download=False)
    return ds.test_labels[(ds.test_labels == 5) | (ds.test_labels == 8)]


def _gaussian_delta(mu: float, eps: float) -> float:
    """δ(ε) of the Gaussian mechanism with sensitivity/σ = μ (Balle & Wang 2018, Theorem 8), written out."""
    from scipy.stats import norm

    return float(norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu))


def test_privacy_columns_follow_the_stated_budget(tiny_run):
    root, _ = tiny_run
    records, teachers, mechs = _load(root / "out")
    eps_t, Delta = teachers["eps_teacher"], 1e-4
    for t in teachers["private"]:  # our PRV accountant vs Opacus's own accountant
        assert t["eps"] == pytest.approx(t["eps_opacus"], rel=0.02)
        assert t["eps"] <= eps_t
    for r in records:
        if r["method"] in ("gnmax-paper", "gnmax-tight", "darrm-sub", "darrm-opt"):
            assert r["eps_query"] == pytest.approx(r["m"] * eps_t, rel=1e-12)
            assert r["delta_query"] == pytest.approx(-math.expm1(r["m"] * math.log1p(-Delta)), rel=1e-12)
            et, dt = kairouz_general(r["eps_query"], r["delta_query"], r["Q"], 1e-4)
            assert (r["eps_total_paper"], r["delta_total_paper"]) == pytest.approx((et, dt))
            assert r["eps_total_optimal"] <= r["eps_total_paper"] + 1e-12
        if r["method"] == "majority-private-parallel":
            assert (r["eps_total_paper"], r["delta_total_paper"]) == (eps_t, Delta)
        if r["method"] == "gnmax-equal-total":  # the DaRRM rows' total, by the analytic Gaussian curve
            assert (r["epsilon_total"], r["delta_total"]) == (pytest.approx(eps_t, rel=1e-6), Delta)
            assert "Gaussian" in r["accountant"]
            assert _gaussian_delta(math.sqrt(2 * r["Q"]) / r["sigma"], eps_t) == pytest.approx(Delta, rel=1e-6)
    for mech in mechs.values():
        assert mech["sigma_tight"] <= mech["sigma_paper"]
        assert mech["gamma_opt_violation"] <= 1e-9
        # γ_opt is optimal for the LP's prior, so it is no worse than γ_Sub there (not pointwise)
        prior = IIDPrior()
        assert expected_signed_error(np.asarray(mech["gamma_opt"]), prior) <= \
            expected_signed_error(np.asarray(mech["gamma_sub"]), prior) + 1e-9


def test_releases_do_not_depend_on_true_labels_and_cache_resumes(tiny_run, monkeypatch):
    """Re-run with the test labels shuffled, after deleting one teacher and the votes (an
    'interrupted' cache): the deleted teacher is retrained identically, the others are
    reloaded, and every released label is the same; only the accuracies change."""
    root, argv = tiny_run
    _, teachers, _ = _load(root / "out")
    pdir = root / "cache" / teachers["run"]["cache"]["private"]
    (pdir / "teacher_03.pt").unlink()
    (pdir / "votes.npy").unlink()
    votes_before = np.load(root / "cache" / teachers["run"]["cache"]["nonprivate"] / "votes.npy")
    real_binary_task = run_mod.binary_task

    def shuffled(*a, **k):
        t = real_binary_task(*a, **k)
        perm = np.random.default_rng(99).permutation(len(t.test_labels))
        object.__setattr__(t, "test_labels", t.test_labels[perm])
        return t

    monkeypatch.setattr(run_mod, "binary_task", shuffled)
    out2 = root / "out2"
    argv2 = [a if a != str(root / "out") else str(out2) for a in argv]
    assert cli.main(argv2) == 0
    a = load_releases(root / "out" / "releases.npz")
    b = load_releases(out2 / "releases.npz")
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k][0], b[k][0])
        np.testing.assert_array_equal(a[k][1], b[k][1])
    t2 = json.loads((out2 / "teachers.json").read_text())
    assert [t["cached"] for t in t2["private"]] == [i != 3 for i in range(11)]
    assert all(t["cached"] for t in t2["nonprivate"])
    votes_after = np.load(root / "cache" / t2["run"]["cache"]["nonprivate"] / "votes.npy")
    np.testing.assert_array_equal(votes_before, votes_after)
