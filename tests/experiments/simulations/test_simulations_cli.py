"""`darrm-experiments simulations` writes every file, and the files hold the computed numbers."""

import argparse
import csv
import json

import numpy as np
import pytest

from darrm import ParameterError, gamma_sub
from darrm.experiments.simulations.cli import register
from darrm.experiments.simulations.runner import parse_figures, write_table3
from darrm.experiments.simulations.table3 import table3


def _run(argv):
    p = argparse.ArgumentParser()
    sp = p.add_subparsers()
    register(sp)
    args = p.parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def outdir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sims")
    assert _run(["simulations", "--out", str(out), "--figures", "2,9", "--quick"]) == 0
    return out


def test_quick_run_writes_every_file(outdir):
    idx = json.loads((outdir / "index.json").read_text())
    assert idx["quick"] is True and set(idx["files"]) == {"figure2", "figure9"}
    for key, files in idx["files"].items():
        suffixes = sorted(f.split(key)[-1] for f in files)
        assert suffixes == sorted([".json", "_gammas.csv", "_error_curves.csv", "_expected_errors.csv", ".md",
                                   "_gamma.png", "_error.png", "_expected.png"])
        for f in files:
            data = open(f, "rb").read()
            assert len(data) > 200
            if f.endswith(".png"):
                assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_files_hold_the_computed_gammas_and_errors(outdir):
    fig = json.loads((outdir / "figure2.json").read_text())
    m3 = next(p for p in fig["panels"] if p["params"]["m"] == 3)
    sub = next(c for c in m3["curves"] if c["name"] == "Sub")
    assert np.array_equal(sub["gamma"], gamma_sub(11, 3))
    rows = list(csv.DictReader(open(outdir / "figure2_gammas.csv")))
    assert len(rows) == 2 * 3 * 12  # quick: m ∈ {1, 3}, three curves, l = 0..11
    exp = list(csv.DictReader(open(outdir / "figure9_expected_errors.csv")))
    half = [r for r in exp if r["actual"] == "p=0.5"]
    assert half and all(float(r["value"]) == 0.0 and r["method"] == "exact" for r in half)
    mc = [r for r in exp if r["method"] == "product-mc"]
    assert mc and all(int(r["samples"]) == 2000 and float(r["se"]) >= 0 for r in mc)


def test_table3_files(tmp_path):
    paths = write_table3(tmp_path)
    rows = json.loads(paths[0].read_text())
    assert [r["M"] for r in rows] == [10, 13, 15, 20]
    assert [round(r["m"], 4) for r in rows] == [round(r.m, 4) for r in table3()]
    assert "6.4521" in paths[2].read_text() and "paper" not in paths[2].read_text()  # no mismatch notes


def test_figure_selection():
    assert parse_figures(None) == ("2", "6", "7", "8", "9")
    assert parse_figures("9, fig2,figure9") == ("9", "2")
    for bad in ("3", "", "2,x"):
        with pytest.raises(ParameterError, match="figures"):
            parse_figures(bad)
