"""``darrm solve --budget-groups [--vote-weights]``: one-line errors naming the option, nothing written;
solve, verify, evaluate and aggregate (votes with the members in group order, or (Q, G) counts)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm

GOOD = ["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "2:0.5:1e-5,3:1.5:1e-5"]


@pytest.mark.parametrize("argv,name", [
    (["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "1:0.5"], "budget-groups"),
    (["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "x:0.5:0"], "budget-groups"),
    (["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "0:0.5:0"], "budget-groups"),
    (["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "1:-1:0"], "budget-groups"),
    (["--members", "weighted-shards", "--member-privacy", "nonprivate", "--budget-groups", "2:1:0,2:1:0"], "groups"),
    (["--members", "weighted-shards", "--budget-groups", "1:0.5:0"], "member-privacy"),
    (["--budget-groups", "1:0.5:0"], "member-privacy"),                    # the option chooses its model
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--budget-groups", "1:0.5:0"], "budget-groups"),
    ([*GOOD, "--vote-weights", "1"], "vote-weights"),
    ([*GOOD, "--vote-weights", "1,0"], "vote-weights"),
    ([*GOOD, "--vote-weights", "1,nan"], "vote-weights"),
    ([*GOOD, "--vote-weights", "1,a"], "vote-weights"),
    (["--members", "disjoint", "--member-privacy", "nonprivate", "--target-eps", "1", "--vote-weights", "1"],
     "vote-weights"),
    ([*GOOD, "--K", "7"], "K"),
    ([*GOOD, "--target-eps", "1"], "target-eps"),
    ([*GOOD, "--record-groups", "1:1:0"], "record-groups"),
    ([*GOOD, "--groups", "2:0.2:0,3:0.5:0"], "groups"),
    ([*GOOD, "--checkpoint", "c.npz"], "checkpoint"),
    ([*GOOD, "--family", "sub"], "family"),
])
def test_bad_budget_group_requests_exit_2_naming_the_option_and_write_nothing(cli, tmp_path, argv, name):
    out = tmp_path / "h.json"
    rc, _, err = cli("solve", *argv, "--out", str(out))
    assert rc == 2, err
    assert err.startswith(f"darrm: error: {name}") and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("weights", [None, "1,3"], ids=["per-group", "weighted"])
def test_solve_verify_evaluate_and_aggregate_a_budget_groups_table(cli, tmp_path, weights):
    out = tmp_path / "h.json"
    extra = [] if weights is None else ["--vote-weights", weights]
    rc, text, err = cli("solve", *GOOD, *extra, "--prior", "iid:0.75", "--out", str(out))
    assert rc == 0, err
    assert "budget groups" in text and out.exists()
    table = darrm.load(out)
    assert isinstance(table.params, darrm.WeightedShardParams) and table.params.K == 5
    assert table.gamma.shape == (3, 4)
    rc, text, _ = cli("verify", str(out), "--json")
    rec = json.loads(text)
    assert rc == 0 and rec["verified"] and rec["members"] == "weighted-shards"
    assert rec["budget_groups"] == [[2, 0.5, 1e-5], [3, 1.5, 1e-5]] and rec["epsilon_query"] == 1.5
    assert rec["gamma_form"] == ("per-group" if weights is None else "weighted")
    assert rec["vote_weights"] == (None if weights is None else [1.0, 3.0])
    rc, text, err = cli("evaluate", str(out), "--json")
    assert rc == 0, err and "opt" in json.loads(text)
    votes = tmp_path / "v.npy"
    v = np.random.default_rng(0).integers(0, 2, size=(6, 5))
    np.save(votes, v)
    rc, text, err = cli("aggregate", str(out), "--votes", str(votes), "--seed", "1", "--json")
    assert rc == 0, err
    counts = tmp_path / "c.npy"
    np.save(counts, np.stack([v[:, :2].sum(1), v[:, 2:].sum(1)], axis=1))
    rc2, text2, err2 = cli("aggregate", str(out), "--votes", str(counts), "--counts", "--seed", "1", "--json")
    assert rc2 == 0, err2
    assert json.loads(text)["labels"] == json.loads(text2)["labels"]


@pytest.mark.parametrize("groups", [33, 41])
def test_more_budget_groups_than_gamma_has_axes_are_refused_at_the_boundary(cli, tmp_path, groups):
    """γ has one axis per budget group; numpy handles at most 32: more groups are refused before any
    work, naming the option (CLI) or ``groups`` (API), with the supported maximum."""
    import time

    from darrm.errors import ParameterError
    from darrm.models.disjoint import LocalRR
    from darrm.models.weighted_shards.params import MAX_GROUPS, WeightedShardParams

    out = tmp_path / "g.json"
    t0 = time.monotonic()
    rc, _, err = cli("--no-progress", "solve", "--members", "weighted-shards", "--member-privacy", "rr:1",
                     "--budget-groups", ",".join(["1:1:0"] * groups), "--out", str(out))
    assert rc == 2 and err.count("\n") == 1 and err.startswith("darrm: error: budget-groups: ") and "32" in err, err
    assert time.monotonic() - t0 < 5 and not out.exists()
    assert MAX_GROUPS == 32
    with pytest.raises(ParameterError, match=r"^groups: at most 32 budget groups"):
        WeightedShardParams(LocalRR(1.0), [(1, 1.0, 0.0)] * groups)
