"""Issue 16: every ``--json`` output uses one vocabulary (darrm.json_vocabulary), Opacus/dp_accounting names."""

from __future__ import annotations

import json

import numpy as np
import pytest

from darrm.cli import main
from darrm.json_vocabulary import canonical, canonical_key, keys, vocabulary


@pytest.fixture(scope="module")
def gfile(tmp_path_factory):
    g = tmp_path_factory.mktemp("json") / "g.json"
    assert main(["--no-progress", "solve", "--K", "5", "--out", str(g)]) == 0
    return g


def _json(capsys, *argv) -> object:
    capsys.readouterr()
    assert main(["--no-progress", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _commands(g, votes):
    return {
        "solve": ["solve", "--K", "5", "--json"],
        "solve-disjoint": ["solve", "--members", "disjoint", "--member-privacy", "rr:1", "--target-eps", "0.5",
                           "--target-delta", "1e-6", "--K", "11", "--json"],
        "solve-approx-dp-members": ["solve", "--members", "disjoint", "--member-privacy", "1,1e-6", "--target-eps",
                                    "1", "--target-delta", "1e-5", "--K", "11", "--json"],
        "solve-groups": ["solve", "--groups", "2:0.2:0,3:0.5:1e-5", "--target-eps", "0.8", "--target-delta", "1e-4",
                         "--json"],
        "solve-sub-beta": ["solve", "--K", "5", "--family", "sub", "--prior", "beta:3,1", "--json"],
        "solve-total-budget": ["solve", "--K", "3", "--eps", "0.3", "--member-delta", "1e-4", "--total-eps", "1",
                               "--total-delta", "1e-3", "--queries", "1", "--json"],  # the same record, fast
        "verify": ["verify", str(g), "--json"],
        "evaluate": ["evaluate", str(g), "--json"],
        "aggregate": ["aggregate", str(g), "--votes", str(votes), "--seed", "1", "--json"],
        "compose": ["account", "compose", "--eps", "0.2", "--delta", "1e-5", "--compositions", "10", "--json"],
        "dpsgd": ["account", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100",
                  "--delta", "1e-5", "--json"],
        "dpsgd-target": ["account", "dpsgd", "--target-eps", "1", "--sample-rate", "0.01", "--steps", "100",
                         "--delta", "1e-5", "--json"],
        "gnmax": ["account", "gnmax", "--eps", "0.2676", "--delta", "3e-4", "--json"],
        "paper-tables": ["account", "paper-tables", "--table", "totals", "--json"],
        "queries": ["account", "queries", str(g), "--queries", "20", "--delta-total", "1e-3",
                    "--member-randomness", "fresh", "--json"],
        "queries-fixed": ["account", "queries", str(g), "--queries", "20", "--epsilon-total", "1",
                          "--member-randomness", "fixed", "--json"],
        "shuffle": ["shuffle", "--n", "1e4", "--eps0", "1", "--delta", "1e-6", "--classes", "3", "--json"],
        "shuffle-rounds": ["shuffle", "--n", "1e4", "--eps0", "1", "--delta", "1e-6", "--rounds", "5", "--json"],
        "shuffle-target": ["shuffle", "--n", "1e4", "--target-eps", "1", "--delta", "1e-6", "--json"],
        "account-votes": ["account-votes", "--K", "101", "--eps0", "1", "--Q", "3", "--target-eps", "5", "--json"],
    }


def test_every_json_output_uses_only_the_vocabulary(capsys, tmp_path, gfile):
    votes = tmp_path / "v.npy"
    np.save(votes, np.random.default_rng(0).integers(0, 2, size=(7, 5)))
    outside = {}
    for name, argv in _commands(gfile, votes).items():
        doc = _json(capsys, *argv)
        bad = keys(doc) - vocabulary()
        if bad:
            outside[name] = sorted(bad)
        # one name per concept: never the short library spellings
        assert not {k for k in keys(doc) if "eps" in k.split("_") or k in ("eps0", "bound", "Q")}, name
    assert not outside, f"JSON keys outside darrm.json_vocabulary.VOCABULARY: {outside}"


def test_the_paper_tables_keys_are_all_in_the_vocabulary(capsys):
    for table in ("table3", "gnmax"):
        doc = _json(capsys, "account", "paper-tables", "--table", table, "--json")
        assert set(doc) == {table} and keys(doc) <= vocabulary()
    pytest.importorskip("opacus")  # the teachers table has PRV and RDP columns
    doc = _json(capsys, "account", "paper-tables", "--table", "teachers", "--json")
    assert keys(doc) <= vocabulary()


def test_canonical_names_follow_opacus_and_dp_accounting():
    assert [canonical_key(k) for k in ("eps", "eps_total", "target_eps", "eps0", "largest_eps0", "bound", "Q",
                                       "delta", "noise_multiplier", "sample_rate", "steps", "epsilon")] == [
        "epsilon", "epsilon_total", "target_epsilon", "epsilon0", "largest_epsilon0", "kind", "queries",
        "delta", "noise_multiplier", "sample_rate", "steps", "epsilon"]
    assert canonical({"a": [{"eps": 1, "b": ({"eps0": 2},)}]}) == {"a": [{"epsilon": 1, "b": [{"epsilon0": 2}]}]}


def test_solve_and_verify_json_state_the_guarantee_and_the_table(capsys, gfile):
    solved = _json(capsys, "solve", "--K", "5", "--json")
    verified = _json(capsys, "verify", str(gfile), "--json")
    for doc in (solved, verified):
        assert doc["members"] == "shared" and doc["K"] == 5 and len(doc["gamma"]) == 6
        assert doc["epsilon_query"] == pytest.approx(doc["m"] * doc["epsilon"])
        assert doc["delta_query"] == doc["delta"] and doc["certified"] is True
        assert doc["prior"] == {"kind": "iid", "mean": 0.75} and doc["report"]["stop"]
    assert verified["verified"] is True and verified["gamma_file"] == str(gfile)
    assert solved["gamma_file"] is None and solved["gamma"] == verified["gamma"]
    dj = _json(capsys, "solve", "--members", "disjoint", "--member-privacy", "rr:1", "--target-eps", "0.5",
               "--K", "11", "--json")
    assert dj["member_privacy"] == {"kind": "rr", "epsilon0": 1.0} and dj["epsilon_query"] == 0.5


def test_aggregate_json_holds_the_same_labels_as_the_plain_output(capsys, tmp_path, gfile):
    votes = tmp_path / "v.npy"
    np.save(votes, np.random.default_rng(1).integers(0, 2, size=(30, 5)))
    capsys.readouterr()
    assert main(["aggregate", str(gfile), "--votes", str(votes), "--seed", "5"]) == 0
    plain = [int(x) for x in capsys.readouterr().out.split()]
    doc = _json(capsys, "aggregate", str(gfile), "--votes", str(votes), "--seed", "5", "--json")
    assert doc["labels"] == plain and doc["queries"] == 30 and doc["seed"] == 5 and doc["secure"] is False
    out = tmp_path / "labels.txt"
    doc = _json(capsys, "aggregate", str(gfile), "--votes", str(votes), "--seed", "5", "--json", "--out", str(out))
    assert doc["labels_file"] == str(out) and [int(x) for x in out.read_text().split()] == plain


def test_demo_json(capsys):
    doc = _json(capsys, "demo", "--json")
    assert doc["K"] == 11 and doc["family"] == "opt" and set(doc["error_curves"]) >= {"p", "opt", "sub", "const"}
    assert keys(doc) <= vocabulary()
