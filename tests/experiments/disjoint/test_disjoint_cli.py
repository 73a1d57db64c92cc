"""``darrm-experiments disjoint``: the synthetic and real experiments write their files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from darrm.experiments import cli
from darrm.experiments.disjoint import real as real_mod
from darrm.experiments.disjoint.real import run_real
from darrm.experiments.disjoint.synthetic import METHODS, agreement_grid, evaluate


def test_synthetic_writes_results_and_plot_matching_evaluate(tmp_path, capsys):
    assert cli.main(["disjoint", "synthetic", "--K", "11", "--eps", "0.5", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "results_eps0.5_delta1e-06.json").read_text())
    assert (data["eps"], data["delta"]) == (0.5, 1e-6)
    (row,) = data["rows"]
    want = evaluate(11, 0.5, 1e-6, agreement_grid())
    assert {m: row[m] for m in METHODS} == {m: want[m] for m in METHODS}
    assert (tmp_path / "accuracy_eps0.5_delta1e-06.png").stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accuracy_eps0.5_delta1e-06.png",
                                                          "results_eps0.5_delta1e-06.json"]  # no temp files left
    out = capsys.readouterr().out
    assert "darrm-nonprivate" in out and "wrote" in out


def test_real_writes_records_and_tables(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    labels = rng.choice([5, 8], size=60)
    votes = np.where(rng.random((60, 11)) < 0.9, labels[:, None], 13 - labels[:, None]).astype(np.int64)
    monkeypatch.setattr(real_mod, "load_votes", lambda ds, data_dir, cache_dir: (votes, votes, labels, 0.0892))
    monkeypatch.setattr(real_mod, "run_real", lambda *a, **k: _small_run(*a))  # the CLI reads them at run time
    assert cli.main(["disjoint", "real", "--dataset", "mnist", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "results_real.json").read_text())
    assert {r["dataset"] for r in rows} == {"mnist"} and {r["Q"] for r in rows} == {10}
    tables = (tmp_path / "real_tables.md").read_text()
    assert tables.startswith("# Disjoint members") and "| gnmax" in tables
    assert "| gnmax" in capsys.readouterr().out


def _small_run(dataset, vp, vn, labels, eps_t):
    return run_real(dataset, vp, vn, labels, eps_t, ms=(1,), queries=(10,), draws=2)


def _tiny_votes(n: int = 60):
    rng = np.random.default_rng(1)
    labels = rng.choice([5, 8], size=n)
    return np.where(rng.random((n, 11)) < 0.85, labels[:, None], 13 - labels[:, None]).astype(np.int64), labels


def test_equal_total_writes_the_rows_of_run_equal_total_on_a_tiny_vote_array(tmp_path, monkeypatch, capsys):
    votes, labels = _tiny_votes()
    monkeypatch.setattr(real_mod, "nonprivate_votes", lambda ds, data_dir, cache_dir: (votes, labels))
    assert cli.main(["disjoint", "equal-total", "--total-eps", "2", "--queries", "10", "--draws", "2",
                     "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "results_equal_total.json").read_text())
    want = real_mod.run_equal_total("mnist", votes, labels, total_eps=(2.0,), queries=(10,), draws=2)
    assert rows == json.loads(json.dumps(want))  # the library's rows, bit for bit
    assert [r["method"] for r in rows] == list(real_mod.EQUAL_TOTAL_METHODS)
    assert all(r["epsilon_charged"] <= 2.0 * (1 + 1e-9) for r in rows)
    tables = (tmp_path / "equal_total.md").read_text()
    assert "| darrm-designed (" in tables and "| gnmax |" in tables
    assert sorted(p.name for p in tmp_path.iterdir()) == ["equal_total.md", "results_equal_total.json"]
    assert "wrote" in capsys.readouterr().out


def _exit_code(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:  # argparse's own type errors
        return int(exc.code or 0)


@pytest.mark.parametrize(("argv", "name"), [
    (["--total-eps", "0"], "total-eps"), (["--total-eps", "x"], "--total-eps"), (["--queries", "0"], "queries"),
    (["--queries", "61"], "queries"), (["--delta-total", "1"], "delta-total"), (["--draws", "0"], "draws"),
    (["--prior-mean", "1.5"], "prior-mean")])
def test_equal_total_refuses_bad_options_in_one_line_naming_the_option_and_writes_nothing(argv, name, tmp_path,
                                                                                          monkeypatch, capsys):
    votes, labels = _tiny_votes()  # 60 test images: Q = 61 is refused once the votes are known
    monkeypatch.setattr(real_mod, "nonprivate_votes", lambda ds, data_dir, cache_dir: (votes, labels))
    assert _exit_code(["disjoint", "equal-total", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert name in err and err.count("\n") == 1 and not (tmp_path / "o").exists()
