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
