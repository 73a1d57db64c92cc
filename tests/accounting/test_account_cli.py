"""`darrm account ...` through a minimal argparse harness (as darrm.cli.main does)."""

from __future__ import annotations

import argparse
import json

import pytest

from darrm.accounting.cli.account import register
from darrm.errors import DarrmError


def _run(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    sp = p.add_subparsers()
    register(sp)
    args = p.parse_args(argv)
    return args.func(args)


def test_compose_table_lists_every_bound(capsys):
    assert _run(["account", "compose", "--eps", "0.2676", "--delta", "3e-4", "--compositions", "50"]) == 0
    out = capsys.readouterr().out
    for name in ("simple", "dwork-roth", "kairouz-general", "optimal-grid", "optimal"):
        assert name in out
    assert "9.90091" in out


def test_compose_json(capsys):
    assert _run(["account", "compose", "--eps", "0.2556", "--delta", "3e-4", "--compositions", "100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by = {b["method"]: b for b in data["bounds"]}
    assert round(by["kairouz-general"]["epsilon_total"], 3) == 14.219  # JSON keys: darrm.json_vocabulary
    assert by["optimal"]["epsilon_total"] < by["kairouz-general"]["epsilon_total"]
    assert data["epsilon"] == 0.2556


def test_dpsgd_from_loader_json(capsys):
    argv = ["account", "dpsgd", "--noise-multiplier", "12", "--n-samples", "1024", "--delta", "1e-4",
            "--accountant", "prv", "--json"]
    assert _run(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"] == 160 and round(data["results"][0]["epsilon"], 4) == 0.0892


def test_dpsgd_inverse(capsys):
    argv = ["account", "dpsgd", "--target-eps", "0.5", "--sample-rate", "0.01", "--steps", "100",
            "--delta", "1e-5", "--accountant", "rdp"]
    assert _run(argv) == 0
    assert "noise_multiplier" in capsys.readouterr().out


def test_gnmax_table(capsys):
    assert _run(["account", "gnmax", "--eps", "0.2676", "--delta", "3e-4"]) == 0
    out = capsys.readouterr().out
    assert "21.4606" in out and "12.9039" in out


def test_paper_tables_json(capsys):
    assert _run(["account", "paper-tables", "--table", "totals", "--m", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(round(r["epsilon_total"], 3) for r in data["totals"]) == [5.112, 5.352, 9.382, 9.901, 14.219, 15.044]


@pytest.mark.parametrize(
    "argv",
    [
        ["account", "compose", "--eps", "-1", "--compositions", "3"],
        ["account", "gnmax", "--eps", "0.2", "--delta", "2"],
        ["account", "dpsgd", "--noise-multiplier", "12", "--delta", "1e-4"],
        ["account", "dpsgd", "--noise-multiplier", "0", "--sample-rate", "0.1", "--steps", "5", "--delta", "1e-4"],
    ],
)
def test_bad_input_raises_darrm_error(argv):
    with pytest.raises(DarrmError):
        _run(argv)


@pytest.fixture(scope="module")
def pate_sub_file(tmp_path_factory):
    import darrm
    from darrm.gamma_file import save

    path = tmp_path_factory.mktemp("q") / "sub.json"
    save(darrm.solve(darrm.PrivacyParams(11, 3, 0.0892, 1e-4), family="sub"), path)
    return path


def test_queries_json_prints_the_tight_total_epsilon_and_the_generic_one(cli, pate_sub_file):
    """The paper's PATE setting: 100 answers of γ_Sub cost ε ≤ 3.01 at δ_total ≈ 0.0297 (12.60 generic)."""
    rc, out, err = cli("account", "queries", str(pate_sub_file), "--queries", "100", "--delta-total",
                       "0.029652966623532118", "--member-randomness", "fresh", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["accountant"] == "dominating-pair-pld" and doc["member_randomness"] == "fresh"
    assert doc["lower_bound"] <= doc["epsilon_total"] <= 3.01
    assert doc["epsilon_total_generic"] == pytest.approx(12.597, abs=2e-3)
    rc, out, _ = cli("account", "queries", str(pate_sub_file), "--queries", "100", "--epsilon-total",
                     str(doc["epsilon_total"]), "--member-randomness", "fresh", "--json")
    back = json.loads(out)
    assert rc == 0 and back["delta_total"] <= 0.029652966623532118 * (1 + 1e-6)


def test_queries_fixed_members_name_their_bound(cli, pate_sub_file):
    rc, out, _ = cli("account", "queries", str(pate_sub_file), "--queries", "100", "--delta-total", "1e-3",
                     "--member-randomness", "fixed")
    assert rc == 0 and "members-shared-composition" in out


@pytest.mark.parametrize(("extra", "option"), [
    (["--delta-total", "0.1"], "member-randomness"),
    (["--member-randomness", "fresh"], "delta-total"),
    (["--member-randomness", "fresh", "--delta-total", "2"], "delta-total"),
    (["--member-randomness", "fresh", "--epsilon-total", "-1"], "epsilon-total"),
    (["--member-randomness", "fresh", "--delta-total", "0.1", "--interval", "0"], "interval"),
    (["--member-randomness", "sometimes", "--delta-total", "0.1"], "member-randomness"),
])
def test_queries_bad_input_is_one_line_naming_the_option(cli, pate_sub_file, extra, option):
    rc, out, err = cli("account", "queries", str(pate_sub_file), "--queries", "10", *extra)
    assert rc == 2 and out == "" and option in err and len(err.strip().splitlines()) == 1
