"""``darrm solve --record-groups``: one-line errors naming the option, nothing written; solve, verify, aggregate."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm

GOOD = ["--members", "disjoint", "--member-privacy", "nonprivate", "--K", "7",
        "--record-groups", "1:0.5:1e-5,3:1.5:1e-5"]


@pytest.mark.parametrize("argv,name", [
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--record-groups", "1:0.5"], "record-groups"),
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--record-groups", "x:0.5:0"], "record-groups"),
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--record-groups", "0:0.5:0"], "record-groups"),
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--record-groups", "1:-1:0"], "record-groups"),
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--K", "5", "--record-groups", "6:1:0"], "groups"),
    (["--members", "disjoint", "--record-groups", "1:0.5:0"], "member-privacy"),
    (["--record-groups", "1:0.5:0"], "record-groups"),                     # shared members
    ([*GOOD, "--target-eps", "1"], "target-eps"),
    ([*GOOD, "--target-delta", "1e-5"], "target-delta"),
    ([*GOOD, "--eps", "0.1"], "eps"),
    ([*GOOD, "--groups", "2:0.2:0,3:0.5:0"], "record-groups"),
    ([*GOOD, "--checkpoint", "c.npz"], "checkpoint"),
    ([*GOOD, "--family", "sub"], "family"),
])
def test_bad_record_group_requests_exit_2_naming_the_option_and_write_nothing(cli, tmp_path, argv, name):
    out = tmp_path / "h.json"
    rc, _, err = cli("solve", *argv, "--out", str(out))
    assert rc == 2, err
    assert err.startswith(f"darrm: error: {name}") and err.count("\n") == 1
    assert not out.exists()


def test_solve_verify_and_aggregate_a_record_groups_table(cli, tmp_path):
    out = tmp_path / "h.json"
    rc, text, err = cli("solve", *GOOD, "--prior", "iid:0.75", "--out", str(out))
    assert rc == 0, err
    assert "record groups" in text and out.exists()
    table = darrm.load(out)
    assert isinstance(table.params, darrm.ShardGroupParams) and table.params.K == 7
    assert darrm.certify(table.gamma, table.params).certified
    rc, text, _ = cli("verify", str(out), "--json")
    rec = json.loads(text)
    assert rc == 0 and rec["verified"] and rec["members"] == "shard-groups"
    assert rec["record_groups"] == [[1, 0.5, 1e-5], [3, 1.5, 1e-5]] and rec["epsilon_query"] == 1.5
    votes = tmp_path / "v.npy"
    np.save(votes, np.random.default_rng(0).integers(0, 2, size=(4, 7)))
    rc, text, err = cli("aggregate", str(out), "--votes", str(votes), "--seed", "1", "--json")
    assert rc == 0, err and len(json.loads(text)["labels"]) == 4


def test_an_edited_record_group_fails_verification(cli, tmp_path):
    """Claiming fewer copies in the file breaks its checksum: never a silent re-label."""
    out = tmp_path / "h.json"
    assert cli("solve", *GOOD, "--out", str(out))[0] == 0
    doc = json.loads(out.read_text())
    doc["record_groups"][1][0] = 1
    out.write_text(json.dumps(doc))
    rc, _, err = cli("verify", str(out))
    assert rc == 2 and err.count("\n") == 1
