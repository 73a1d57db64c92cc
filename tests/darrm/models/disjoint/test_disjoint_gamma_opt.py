"""γ_opt for members on disjoint shards: certified, optimal where the optimum is known, files, CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from darrm import cli, gamma_file
from darrm.accounting import ShuffledBinaryRR
from darrm.errors import GammaFileError
from darrm.mechanism import output_weights
from darrm.models.disjoint import (
    ApproxDP,
    DisjointParams,
    LocalRR,
    NonPrivate,
    certify_disjoint,
    solve_gamma_opt_disjoint,
)
from darrm.numerics.poisson_binomial import pmf

MODELS = [NonPrivate(), ApproxDP(1.0, 1e-5), LocalRR(3.0)]


@pytest.mark.parametrize("member", MODELS, ids=lambda m: m.describe())
@pytest.mark.parametrize("K", [11, 101, 1001])
def test_gamma_opt_is_certified(member, K):
    params = DisjointParams(K, member, 0.5, 1e-6)
    t = solve_gamma_opt_disjoint(params)
    assert t.violation <= 1e-12
    assert certify_disjoint(t.gamma, params).certified
    assert np.allclose(t.gamma, t.gamma[::-1])


@pytest.mark.parametrize("member", MODELS, ids=lambda m: m.describe())
def test_gamma_opt_small_K_private_by_full_enumeration(member):
    """Independent of the reduction: every vertex of every member's region, both outputs/directions."""
    K, eps, delta = 7, 0.4, 1e-4
    t = solve_gamma_opt_disjoint(DisjointParams(K, member, eps, delta))
    w = output_weights(t.gamma)
    lo, hi = member.unchanged_ends()
    e = math.exp(eps)
    worst = -1.0
    for p, pp in member.changed_vertices():
        for ends in itertools.product((lo, hi), repeat=K - 1):
            a, ap = pmf(np.array([p, *ends])), pmf(np.array([pp, *ends]))
            for ww in (w, 1 - w):
                worst = max(worst, a @ ww - e * (ap @ ww), ap @ ww - e * (a @ ww))
    assert worst <= delta + 1e-12


def test_nonprivate_members_mid_gamma_is_tanh_half_eps():
    """Pure target ε: (1+γ)/2 ≤ e^ε(1−γ)/2 at the middle count, so γ(mid) ≤ tanh(ε/2); the LP attains it."""
    eps = 0.8
    params = DisjointParams(11, NonPrivate(), eps, 0.0)
    t = solve_gamma_opt_disjoint(params)
    assert t.gamma[6] == pytest.approx(math.tanh(eps / 2), abs=1e-9)
    bumped = t.gamma.copy()
    bumped[[5, 6]] += 1e-6
    assert not certify_disjoint(bumped, params).certified


def test_private_members_within_target_need_no_noise():
    """Parallel composition: (ε, Δ)-DP members with ε ≤ target ε and Δ ≤ δ give γ ≡ 1
    (up to the repair's float-rounding scale when the constraint is tight, as here)."""
    t = solve_gamma_opt_disjoint(DisjointParams(101, ApproxDP(0.5, 1e-6), 0.5, 1e-6))
    assert np.all(t.gamma >= 1.0 - 1e-10)
    assert not certify_disjoint(np.ones(102), DisjointParams(101, ApproxDP(0.6, 1e-6), 0.5, 1e-6)).certified


def test_gamma_opt_beats_best_constant_gamma():
    params = DisjointParams(101, LocalRR(3.0), 0.3, 1e-6)
    t = solve_gamma_opt_disjoint(params)
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if certify_disjoint(np.full(102, mid), params).certified else (lo, mid)
    from darrm.prior import IIDPrior
    from darrm.solver.objective import expected_signed_error

    assert t.objective < expected_signed_error(np.full(102, lo), IIDPrior())


@pytest.mark.parametrize("K,eps0", [(11, 1.0), (101, 2.0)])
def test_majority_of_rr_members_is_as_private_as_the_shuffled_count(K, eps0):
    """γ ≡ 1 releases a function of L: its violation never exceeds the exact δ(ε) of L."""
    eps, delta = 0.5, 1e-6
    cert = certify_disjoint(np.ones(K + 1), DisjointParams(K, LocalRR(eps0), eps, delta))
    assert cert.violation + delta <= ShuffledBinaryRR(K, eps0).delta(eps) + 1e-15


def test_solvable_for_ten_thousand_nonprivate_members():
    t = solve_gamma_opt_disjoint(DisjointParams(10001, NonPrivate(), 1.0, 1e-6))
    assert t.violation <= 1e-12 and t.gamma[5001] == pytest.approx(math.tanh(0.5), abs=1e-6)


# ----------------------------------------------------------------------------- files and CLI
@pytest.fixture(scope="module")
def rr_table():
    return solve_gamma_opt_disjoint(DisjointParams(21, LocalRR(2.0), 0.3, 1e-6))


def test_disjoint_gamma_file_round_trips_and_recertifies(rr_table, tmp_path):
    path = tmp_path / "g.json"
    gamma_file.save(rr_table, path)
    d = json.loads(path.read_text())
    assert d["format"] == "darrm-gamma-disjoint/1" and d["model"] == {"kind": "rr", "eps0": 2.0}
    back = gamma_file.load(path)
    assert back.params == rr_table.params and np.array_equal(back.gamma, rr_table.gamma)


def test_loading_with_a_weaker_member_model_fails_certification(rr_table, tmp_path):
    """A file whose recorded model is edited (checksum fixed) is re-certified with that model and refused."""
    path = tmp_path / "g.json"
    gamma_file.save(rr_table, path)
    d = json.loads(path.read_text())
    d["model"] = {"kind": "rr", "eps0": 6.0}
    d["checksum"] = gamma_file.checksum(d)
    path.write_text(json.dumps(d))
    with pytest.raises(GammaFileError, match="NOT"):
        gamma_file.load(path)


def test_cli_solve_disjoint_writes_a_verifiable_file(tmp_path, capsys):
    out = tmp_path / "g.json"
    rc = cli.main(["solve", "--members", "disjoint", "--member-privacy", "1.0,1e-5", "--target-eps", "0.5",
                   "--target-delta", "1e-5", "--K", "11", "--out", str(out)])
    assert rc == 0
    assert cli.main(["verify", str(out)]) == 0
    assert "disjoint shards" in capsys.readouterr().out
    assert cli.main(["aggregate", str(out), "--votes", str(_votes(tmp_path)), "--counts", "--seed", "1"]) == 0


def _votes(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("0\n11\n6\n")
    return p


@pytest.mark.parametrize("argv", [
    ["solve", "--members", "disjoint", "--K", "11"],
    ["solve", "--members", "disjoint", "--member-privacy", "rr:-1", "--target-eps", "1", "--K", "11"],
    ["solve", "--members", "disjoint", "--member-privacy", "nonprivate", "--target-eps", "1", "--family", "sub"],
])
def test_cli_solve_disjoint_bad_input_exit_code_2(argv, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith("darrm: error:")
