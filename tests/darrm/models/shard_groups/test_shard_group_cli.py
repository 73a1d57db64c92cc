"""``darrm solve --record-groups``: one-line errors naming the option, nothing written; solve, verify, aggregate."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm

GOOD = ["--members", "shard-groups", "--member-privacy", "nonprivate", "--K", "7",
        "--record-groups", "1:0.5:1e-5,3:1.5:1e-5"]


@pytest.mark.parametrize("argv,name", [
    (["--members", "shard-groups", "--member-privacy", "nonprivate", "--record-groups", "1:0.5"], "record-groups"),
    (["--members", "shard-groups", "--member-privacy", "nonprivate", "--record-groups", "x:0.5:0"], "record-groups"),
    (["--members", "shard-groups", "--member-privacy", "nonprivate", "--record-groups", "0:0.5:0"], "record-groups"),
    (["--members", "shard-groups", "--member-privacy", "nonprivate", "--record-groups", "1:-1:0"], "record-groups"),
    (["--members", "shard-groups", "--member-privacy", "nonprivate", "--K", "5", "--record-groups", "6:1:0"], "groups"),
    (["--members", "shard-groups", "--record-groups", "1:0.5:0"], "member-privacy"),
    (["--record-groups", "1:0.5:0"], "member-privacy"),                    # the option chooses its model
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--record-groups", "1:0.5:0"], "record-groups"),
    ([*GOOD, "--target-eps", "1"], "target-eps"),
    ([*GOOD, "--target-delta", "1e-5"], "target-delta"),
    ([*GOOD, "--eps", "0.1"], "eps"),
    ([*GOOD, "--groups", "2:0.2:0,3:0.5:0"], "groups"),
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


def test_account_queries_reports_each_record_groups_total(cli, tmp_path):
    """``darrm account queries`` on a record-groups file: one total per record group (the same as
    :func:`darrm.accounting.queries.record_group_bounds`), the largest as the headline, every key in
    the JSON vocabulary; a text table with a row per group and one for every record."""
    from darrm.accounting.queries import record_group_bounds
    from darrm.json_vocabulary import keys, vocabulary

    out = tmp_path / "h.json"
    argv = ["--members", "shard-groups", "--member-privacy", "0.3,1e-5", "--K", "7",
            "--record-groups", "1:0.5:1e-4,3:1.0:1e-4"]
    assert cli("solve", *argv, "--out", str(out))[0] == 0
    table = darrm.load(out)
    for randomness in ("fresh", "fixed"):
        rc, text, err = cli("account", "queries", str(out), "--queries", "10", "--delta-total", "1e-3",
                            "--member-randomness", randomness, "--json")
        assert rc == 0, err
        rec = json.loads(text)
        assert keys(rec) <= vocabulary()
        want = record_group_bounds(table, 10, delta_total=1e-3, member_randomness=randomness)
        got = rec["record_group_totals"]
        assert [g["record_group"] for g in got] == [[1, 0.5, 1e-4], [3, 1.0, 1e-4]]
        assert [g["epsilon_total"] for g in got] == [b.epsilon for b in want]
        assert rec["epsilon_total"] == max(b.epsilon for b in want) == got[1]["epsilon_total"]
    rc, text, _ = cli("account", "queries", str(out), "--queries", "10", "--epsilon-total", "3",
                      "--member-randomness", "fresh")
    assert rc == 0 and "1×(0.5, 0.0001)" in text and "3×(1, 0.0001)" in text and "every record" in text
