"""The ``darrm shuffle`` subcommand (called through a tiny argparse harness)."""

import argparse
import json

import pytest

from darrm.accounting.cli.shuffle import register
from darrm.errors import ParameterError


def _run(argv, capsys):
    p = argparse.ArgumentParser()
    register(p.add_subparsers())
    args = p.parse_args(argv)
    rc = args.func(args)
    return rc, capsys.readouterr().out


def test_json_records_for_k_rr(capsys):
    rc, out = _run(["shuffle", "--n", "500", "--eps0", "1,2", "--delta", "1e-5", "--classes", "3", "--json"], capsys)
    assert rc == 0
    recs = json.loads(out)
    assert {"method", "kind", "valid", "epsilon", "epsilon0"} <= set(recs[0])  # the CLI's JSON vocabulary
    for e0 in (1.0, 2.0):
        rs = [r for r in recs if r["epsilon0"] == e0]
        names = [r["method"] for r in rs]
        assert len(names) == len(set(names))  # one record per method
        ups = [r["epsilon"] for r in rs if r["kind"] == "upper" and r["valid"]]
        lows = [r["epsilon"] for r in rs if r["kind"] == "lower" and r["valid"]]
        # a lower method that does not apply to 3-RR (binary RR's exact curve) is listed, invalid, without a value
        assert all(r["epsilon"] is None for r in rs if r["kind"] == "lower" and not r["valid"])
        assert lows and max(lows) <= min(ups) <= e0
        assert {"optimal-decomposition", "clones", "variation-ratio"} <= set(names)


def test_generic_marks_flawed_variation_ratio_invalid(capsys):
    _, out = _run(["shuffle", "--n", "2000", "--eps0", "1", "--delta", "1e-5", "--json"], capsys)
    recs = {r["method"]: r for r in json.loads(out)}
    assert recs["variation-ratio"]["valid"] is False
    assert recs["clones"]["valid"] is True
    # a method that does not apply to a generic randomizer is listed, invalid, with its reason
    assert recs["optimal-decomposition"]["valid"] is False and recs["optimal-decomposition"]["epsilon"] is None
    assert "not applicable" in recs["optimal-decomposition"]["note"]


def test_table_output_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "eps.png"
    rc, out = _run(["shuffle", "--n", "300", "--eps0", "1", "--delta", "1e-4", "--classes", "2", "--plot", str(png)],
                   capsys)
    assert rc == 0 and "clones" in out and png.stat().st_size > 1000


@pytest.mark.parametrize("argv,name", [
    (["--n", "abc", "--eps0", "1", "--delta", "1e-6"], "n"),
    (["--n", "100", "--eps0", "0", "--delta", "1e-6"], "eps0"),
    (["--n", "100", "--eps0", "1", "--delta", "2"], "delta"),
    (["--n", "100", "--eps0", "1", "--delta", "1e-6", "--classes", "1"], "classes")])
def test_bad_arguments_raise_parameter_error(argv, name, capsys):
    with pytest.raises(ParameterError, match=name):
        _run(["shuffle", *argv], capsys)


def test_rounds_prints_the_composed_epsilon_total(capsys):
    from darrm.accounting.shuffle.composition import ShuffleRound, rounds_epsilon
    from darrm.accounting.shuffle.randomizers import GenericLDP

    rc, out = _run(["shuffle", "--n", "1e4", "--eps0", "1", "--delta", "1e-6", "--rounds", "10", "--json"], capsys)
    (rec,) = json.loads(out)
    assert rc == 0 and rec["rounds"] == 10 and rec["delta_total"] == 1e-6 and rec["epsilon0"] == 1.0
    assert rec["epsilon_total"] == rounds_epsilon([ShuffleRound(GenericLDP(1.0), 10_000, 10)], 1e-6)


def test_target_eps_solves_for_the_largest_eps0(capsys):
    from darrm.accounting.shuffle.calibration import central_epsilon

    rc, out = _run(["shuffle", "--n", "1e4", "--target-eps", "0.5", "--delta", "1e-6", "--classes", "2", "--json"],
                   capsys)
    rec = json.loads(out)
    e0 = rec["epsilon0"]
    assert rc == 0 and rec["epsilon_total"] <= 0.5 == rec["target_epsilon"]
    assert central_epsilon(e0 * 1.001, 10_000, 1e-6, 2) > 0.5  # the largest, to 0.1 %


@pytest.mark.parametrize("argv,name", [
    (["--n", "100", "--delta", "1e-6"], "eps0"),
    (["--n", "100", "--eps0", "1", "--target-eps", "1", "--delta", "1e-6"], "eps0"),
    (["--n", "100", "--eps0", "1", "--delta", "1e-6", "--rounds", "0"], "rounds"),
    (["--n", "100", "--target-eps", "-1", "--delta", "1e-6"], "target_eps"),
    (["--n", "100", "--eps0", "1", "--delta", "1e-6", "--rounds", "3", "--plot", "x.png"], "plot")])
def test_bad_rounds_and_target_raise_parameter_error(argv, name, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError, match=name):
        _run(["shuffle", *argv], capsys)
    assert not (tmp_path / "x.png").exists()
