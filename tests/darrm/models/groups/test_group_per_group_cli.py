"""``darrm solve --groups … --gamma-form per-group``: one-line errors, solve, verify, aggregate
(votes in group order, or (Q, G) counts), evaluate and ``--json``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm
from darrm.models.groups.per_group import joint_expected_error

GOOD = ["--groups", "2:0.2:0,3:0.5:1e-5", "--target-eps", "0.8", "--target-delta", "1e-4"]


@pytest.mark.parametrize("argv,name", [
    (["--gamma-form", "per-group", "--K", "5"], "gamma-form"),        # without --groups
    ([*GOOD, "--gamma-form", "joint"], "gamma-form"),                  # not a form
])
def test_bad_gamma_forms_exit_2_naming_the_option_and_write_nothing(cli, tmp_path, argv, name):
    out = tmp_path / "h.json"
    rc, _, err = cli("solve", *argv, "--out", str(out))
    assert rc == 2, err
    assert err.startswith(f"darrm: error: {name}") or f"--{name}" in err.splitlines()[-1]
    assert err.count("\n") == 1
    assert not out.exists()


def test_solve_verify_aggregate_and_evaluate_a_per_group_table(cli, tmp_path):
    out = tmp_path / "h.json"
    rc, text, err = cli("solve", *GOOD, "--gamma-form", "per-group", "--json", "--out", str(out))
    assert rc == 0, err
    rec = json.loads(text)
    assert rec["gamma_form"] == "per-group" and np.asarray(rec["gamma"]).shape == (3, 4)
    table = darrm.load(out)
    assert table.params.per_group and np.array_equal(table.gamma, np.asarray(rec["gamma"]))
    total = darrm.solve(darrm.GroupParams(table.params.groups, 0.8, 1e-4), darrm.IIDPrior(0.75))
    assert table.objective <= total.objective + 1e-9  # never worse than γ(L)
    rc, text, err = cli("solve", *GOOD, "--gamma-form", "per-group")
    assert rc == 0 and "gamma per group count" in text and "l_1" in text, err
    rc, text, _ = cli("verify", str(out), "--json")
    assert rc == 0 and json.loads(text)["gamma_form"] == "per-group"

    rng = np.random.default_rng(0)
    votes = rng.integers(0, 2, size=(200, 5))
    np.save(tmp_path / "v.npy", votes)
    rc, text, err = cli("aggregate", str(out), "--votes", str(tmp_path / "v.npy"), "--seed", "3", "--json")
    assert rc == 0, err
    labels = json.loads(text)["labels"]
    assert labels == darrm.aggregate(votes, table, 3).tolist()
    counts = np.stack([votes[:, :2].sum(axis=1), votes[:, 2:].sum(axis=1)], axis=1)
    np.savetxt(tmp_path / "c.csv", counts, fmt="%d", delimiter=",")
    rc, text, err = cli("aggregate", str(out), "--votes", str(tmp_path / "c.csv"), "--counts", "--seed", "3",
                        "--json")
    assert rc == 0, err
    assert json.loads(text)["labels"] == labels  # the same labels from the groups' counts
    rc, _, err = cli("aggregate", str(out), "--votes", str(tmp_path / "v.npy"), "--counts", "--seed", "3")
    assert rc == 2 and err.startswith("darrm: error: counts") and err.count("\n") == 1

    rc, text, err = cli("evaluate", str(out), "--json", "--p", "0.75,0.9")
    assert rc == 0, err
    curve = json.loads(text)["opt"]
    assert abs(curve[0] - joint_expected_error(table.gamma, table.params, darrm.IIDPrior(0.75))) < 1e-12
    assert abs(curve[1] - joint_expected_error(table.gamma, table.params, darrm.IIDPrior(0.9))) < 1e-12


def test_per_group_labels_follow_the_table_not_the_total(tmp_path):
    """Monte-Carlo: the released label equals the majority with probability ½ + ½γ(l), per count
    vector l; a mechanism that read γ at the total count instead would fail (≥ 6 σ here)."""
    params = darrm.GroupParams(((2, 0.2, 0.0), (3, 0.5, 1e-5)), 0.8, 1e-4, "per-group")
    table = darrm.solve(params, darrm.IIDPrior(0.75))
    l = (2, 1)  # L = 3 = mid: majority 1
    votes = np.tile([[1, 1, 1, 0, 0]], (40_000, 1))
    got = darrm.aggregate(votes, table, 11).mean()
    want = 0.5 + 0.5 * table.gamma[l]
    sigma = np.sqrt(want * (1 - want) / votes.shape[0])
    assert abs(got - want) < 4 * sigma
    other = (0, 3)  # the same total, another split: a different γ in this table
    assert abs(table.gamma[other] - table.gamma[l]) > 12 * sigma


def test_a_per_group_table_refuses_to_be_read_by_the_total_count():
    from darrm.errors import ParameterError
    from darrm.models.groups import GroupParams, MemberGroup
    from darrm.table import GammaTable

    params = GroupParams((MemberGroup(1, 0.1, 1e-5), MemberGroup(2, 0.3, 1e-5)), target_eps=0.5,
                         target_delta=1e-4, gamma_form="per-group")
    table = GammaTable(params, np.full(params.gamma_shape, 0.5), "custom", 0.0)
    with pytest.raises(ParameterError, match="L"):
        table(1)
