import json

import numpy as np
import pytest

from darrm.cli import main


def test_demo_solves_certifies_and_prints_table_and_error_curve(cli):
    rc, out, _ = cli("--no-progress", "demo")
    assert rc == 0
    assert "certified" in out and "γ_opt" in out and "E(γ_sub)" in out
    assert "0.9777" in out  # γ_opt(1) of the K=11, m=3 solution


def test_solve_verify_evaluate_aggregate_pipeline(cli, tmp_path):
    g = tmp_path / "g.json"
    rc, out, _ = cli("solve", "--K", "11", "--m", "3", "--eps", "0.1", "--member-delta", "1e-5",
                     "--out", str(g))
    assert rc == 0 and g.exists()
    rc, out, _ = cli("verify", str(g))
    assert rc == 0 and "OK" in out
    rc, out, _ = cli("evaluate", str(g), "--json")
    curves = json.loads(out)
    assert set(curves) >= {"p", "opt", "sub", "const"}
    png = tmp_path / "e.png"
    rc, out, _ = cli("evaluate", str(g), "--plot", str(png))
    assert rc == 0 and png.read_bytes()[:4] == b"\x89PNG"
    votes = np.random.default_rng(0).integers(0, 2, size=(50, 11))
    np.save(tmp_path / "v.npy", votes)
    rc, out, _ = cli("aggregate", str(g), "--votes", str(tmp_path / "v.npy"), "--seed", "3")
    labels = [int(x) for x in out.split()]
    assert rc == 0 and len(labels) == 50 and set(labels) <= {0, 1}
    (tmp_path / "v.csv").write_text("\n".join(",".join(map(str, r)) for r in votes))
    rc, out2, _ = cli("aggregate", str(g), "--votes", str(tmp_path / "v.csv"), "--seed", "3")
    assert out2 == out


@pytest.mark.parametrize("family", ["sub", "const"])
def test_solve_baseline_families(cli, family):
    rc, out, _ = cli("solve", "--family", family)
    assert rc == 0 and f"γ_{family}" in out


def test_subsampling_families_need_integer_m(cli):
    rc, out, _ = cli("solve", "--family", "dsub", "--member-delta", "0", "--m", "2")
    assert rc == 0 and "(0.2, 0)-DP" in out
    rc, _, err = cli("solve", "--family", "sub", "--m", "2.5")
    assert rc == 2 and err.startswith("darrm: error: m")


def test_uncertifiable_family_is_an_error(cli, monkeypatch):
    import darrm.gamma

    monkeypatch.setattr(darrm.gamma, "gamma_sub", lambda K, m: np.ones(K + 1))  # a broken family
    rc, _, err = cli("solve", "--family", "sub", "--m", "3")
    assert rc == 2 and "not (mε, δ)-DP" in err


@pytest.mark.parametrize(
    "argv,name",
    [
        (["solve", "--eps", "0"], "eps"),
        (["solve", "--eps", "nan"], "eps"),
        (["solve", "--K", "10"], "K"),
        (["solve", "--m", "12"], "m"),
        (["solve", "--member-delta", "1"], "member-delta"),  # named as the option typed
        (["solve", "--member-delta", "1e-3", "--delta", "1e-4"], "delta"),
        (["solve", "--prior", "weird:1"], "prior"),
        (["solve", "--prior", "iid:1.5"], "prior.mean"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_parameter(cli, argv, name):
    rc, out, err = cli(*argv)
    assert rc == 2
    assert err.startswith(f"darrm: error: {name}") and err.count("\n") == 1


def test_bad_files_and_votes_exit_2(cli, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    rc, _, err = cli("verify", str(bad))
    assert rc == 2 and "not a valid JSON" in err
    g = tmp_path / "g.json"
    assert main(["solve", "--out", str(g)]) == 0
    np.save(tmp_path / "v.npy", np.zeros((3, 7)))
    capsys.readouterr()
    rc, _, err = cli("aggregate", str(g), "--votes", str(tmp_path / "v.npy"))
    assert rc == 2 and "votes" in err
    rc, _, err = cli("aggregate", str(g), "--votes", str(tmp_path / "missing.csv"))
    assert rc == 2 and "votes" in err
