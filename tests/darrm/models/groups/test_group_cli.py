"""``darrm solve --groups``: one-line errors naming the option, nothing written; solve, verify, aggregate."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm

GOOD = ["--groups", "2:0.2:0,3:0.5:1e-5", "--target-eps", "0.8", "--target-delta", "1e-4"]


@pytest.mark.parametrize("argv,name", [
    (["--groups", "2:0.2:0,2:0.5:0", "--target-eps", "0.8"], "groups"),        # even K
    (["--groups", "2:0.2", "--target-eps", "0.8"], "groups"),                  # malformed
    (["--groups", "2:0.2:0,3:x:0", "--target-eps", "0.8"], "groups"),
    (["--groups", "2:0.2:0,3:0.5:0"], "target-eps"),                         # no target
    (["--groups", "2:0.2:1e-3,3:0.5:0", "--target-eps", "0.8", "--target-delta", "1e-4"], "target-delta"),
    ([*GOOD, "--K", "7"], "K"),
    ([*GOOD, "--eps", "0.1"], "eps"),
    ([*GOOD, "--m", "2"], "m"),
    ([*GOOD, "--members", "disjoint"], "groups"),
    ([*GOOD, "--member-privacy", "rr:1"], "member-privacy"),
    ([*GOOD, "--checkpoint", "c.npz"], "checkpoint"),
    ([*GOOD, "--family", "sub"], "family"),
])
def test_bad_group_requests_exit_2_naming_the_option_and_write_nothing(cli, tmp_path, argv, name):
    out = tmp_path / "h.json"
    rc, _, err = cli("solve", *argv, "--out", str(out))
    assert rc == 2, err
    assert err.startswith(f"darrm: error: {name}") and err.count("\n") == 1
    assert not out.exists()


def test_solve_verify_and_aggregate_a_grouped_table(cli, tmp_path):
    out = tmp_path / "h.json"
    rc, text, err = cli("solve", *GOOD, "--prior", "iid:0.75", "--out", str(out))
    assert rc == 0, err
    assert "groups" in text and out.exists()
    table = darrm.load(out)
    assert isinstance(table.params, darrm.GroupParams) and table.params.K == 5
    assert darrm.certify(table.gamma, table.params).certified
    rc, text, _ = cli("verify", str(out), "--json")
    rec = json.loads(text)
    assert rc == 0 and rec["verified"] and rec["members"] == "groups"
    assert rec["groups"] == [[2, 0.2, 0.0], [3, 0.5, 1e-5]] and rec["epsilon_query"] == 0.8
    votes = tmp_path / "v.npy"
    np.save(votes, np.random.default_rng(0).integers(0, 2, size=(4, 5)))
    rc, _, err = cli("aggregate", str(out), "--votes", str(votes), "--seed", "1")
    assert rc == 0, err
    rc, text, err = cli("evaluate", str(out), "--json", "--p", "0.75")  # the table alone: no baselines
    assert rc == 0, err
    assert list(json.loads(text)) == ["p", "opt"]
    assert abs(json.loads(text)["opt"][0] - table.objective) < 1e-12  # the i.i.d. 0.75 error it was solved for


def test_a_tampered_grouped_file_fails_verification(cli, tmp_path):
    """Changing a group's budget in the file breaks its checksum: never a silent re-label."""
    out = tmp_path / "h.json"
    assert cli("solve", *GOOD, "--out", str(out))[0] == 0
    d = json.loads(out.read_text())
    d["groups"][1][1] = 0.1
    out.write_text(json.dumps(d))
    rc, _, err = cli("verify", str(out))
    assert rc == 2 and "checksum" in err


def test_a_table_relabelled_with_looser_budgets_fails_its_certificate(cli, tmp_path):
    """Even with a recomputed checksum, a γ solved for one set of budgets is refused for looser member
    budgets (less private members): loading re-runs the grouped certificate."""
    from darrm.gamma_file import checksum

    out = tmp_path / "h.json"
    assert cli("solve", *GOOD, "--out", str(out))[0] == 0
    d = json.loads(out.read_text())
    d["groups"][1][1] = 2.0
    d.pop("checksum")
    d["checksum"] = checksum(d)
    out.write_text(json.dumps(d))
    rc, _, err = cli("verify", str(out))
    assert rc == 2 and "certif" in err
