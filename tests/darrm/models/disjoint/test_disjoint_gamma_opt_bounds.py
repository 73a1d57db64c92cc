"""Disjoint-member γ_opt: optimal to 1e-9 against an independent full LP, honest at its round limit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from darrm import SolveOptions, cli
from darrm.errors import SolveError
from darrm.gamma import symmetric_from_upper
from darrm.models.disjoint import (
    ApproxDP,
    DisjointParams,
    NonPrivate,
    certify_disjoint,
    constraint_row,
    solve_gamma_opt_disjoint,
)
from darrm.models.disjoint.certificate import vote_count_pmf
from darrm.prior import IIDPrior
from darrm.privacy.certify import repair
from darrm.privacy.condition import folded_rows
from darrm.solver.full_lp import solve_all_rows
from darrm.solver.objective import expected_signed_error, objective_coefficients
from darrm.solver.rows import possibly_binding
from darrm.status import OPTIMAL, StopReason


def all_rows(params: DisjointParams) -> np.ndarray:
    """Every (vertex, n_high, output, direction) row, in that C-order; no constraint generation."""
    K, o = params.K, params.others
    out = []
    for p, pp in params.member.changed_vertices():
        a = np.stack([vote_count_pmf(o, n, float(p), K) for n in range(K)])
        ap = np.stack([vote_count_pmf(o, n, float(pp), K) for n in range(K)])
        r, rs = folded_rows(a, ap, params.exp_eps), folded_rows(ap, a, params.exp_eps)
        out.append(np.stack([np.stack([-r, -rs], 1), np.stack([r, rs], 1)], 1))  # (K, output, direction, n)
    return np.stack(out).reshape(-1, (K + 1) // 2)


def full_lp_objective(params: DisjointParams, prior) -> float:
    """Reference: one LP over all rows (those that cannot bind in the box dropped), certified and repaired."""
    R = all_rows(params)
    R = np.unique(R[possibly_binding(R, params.rhs)], axis=0)
    c, _ = objective_coefficients(params.K, prior)
    x, _ = solve_all_rows(R, params.rhs, c)
    g = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
    cert = certify_disjoint(g, params)
    if cert.violation > 0.0:
        g, _ = repair(g, params, cert.violation)
    assert certify_disjoint(g, params).certified
    return expected_signed_error(g, prior)


def test_vectorised_rows_are_the_constraint_rows():
    params = DisjointParams(41, ApproxDP(1.0, 1e-5), 0.3, 1e-6)
    R = all_rows(params).reshape(8, 41, 2, 2, -1)
    rng = np.random.default_rng(0)
    for idx in zip(rng.integers(0, 8, 20), rng.integers(0, 41, 20), rng.integers(0, 2, 20), rng.integers(0, 2, 20),
                   strict=True):
        assert np.array_equal(R[idx], constraint_row(params, *map(int, idx)))


CASES = [
    pytest.param(1001, 0.51, 0.04, NonPrivate(), id="K1001-mu0.51-nonprivate"),
    pytest.param(1001, 0.75, 0.04, ApproxDP(1.0, 1e-5), id="K1001-mu0.75-approxdp"),
    pytest.param(2001, 0.51, 0.05, NonPrivate(), id="K2001-mu0.51-nonprivate", marks=pytest.mark.slow),
    pytest.param(2001, 0.75, 0.05, NonPrivate(), id="K2001-mu0.75-nonprivate", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("K,mu,eps,member", CASES)
def test_disjoint_gamma_opt_equals_full_lp_reference(K, mu, eps, member):
    params, prior = DisjointParams(K, member, eps, 1e-6), IIDPrior(mu)
    t = solve_gamma_opt_disjoint(params, prior)
    assert t.status == OPTIMAL and t.info["converged"] and t.info["optimality_gap"] <= 1e-9
    assert t.objective == pytest.approx(full_lp_objective(params, prior), abs=1e-9)
    # the stated gap is the final certified table's, against the proven bound
    _, A = objective_coefficients(K, prior)
    assert t.info["optimality_gap"] == pytest.approx(max(0.0, t.objective - (A + t.info["lp_lower_bound"])), abs=0)
    assert certify_disjoint(t.gamma, params).certified


def test_round_limit_refuses_by_default_and_states_its_gap_on_request():
    params, prior = DisjointParams(1001, NonPrivate(), 0.05, 1e-6), IIDPrior(0.51)
    with pytest.raises(SolveError, match="gap"):
        solve_gamma_opt_disjoint(params, prior, options=SolveOptions(max_rounds=3))
    t = solve_gamma_opt_disjoint(params, prior, options=SolveOptions(max_rounds=3, accept_gap=True))
    assert t.status != OPTIMAL and t.info["converged"] is False
    assert t.info["stop"] == StopReason.ROUND_LIMIT.value and t.info["rounds"] == 3
    assert t.info["optimality_gap"] > 1e-9 and t.info["gap_tol"] == 1e-9
    assert certify_disjoint(t.gamma, params).certified


@pytest.mark.parametrize("kw,name", [({"max_rounds": 0}, "max_rounds"), ({"gap_tol": -1.0}, "gap_tol"),
                                     ({"gap_tol": float("nan")}, "gap_tol"), ({"cuts_per_round": 0}, "cuts_per_round")])
def test_bad_solve_options_name_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        solve_gamma_opt_disjoint(DisjointParams(11, NonPrivate(), 0.5), options=SolveOptions(**kw))


BASE = ["solve", "--members", "disjoint", "--member-privacy", "nonprivate", "--target-eps", "0.05",
        "--target-delta", "1e-6", "--K", "101"]


def test_cli_disjoint_round_limit_exits_2_and_accept_gap_writes_the_gap(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert cli.main([*BASE, "--max-rounds", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("darrm: error:") and err.count("\n") == 1 and "gap" in err and not out.exists()
    assert cli.main([*BASE, "--max-rounds", "2", "--accept-gap", "--out", str(out)]) == 0
    info = json.loads(out.read_text())["info"]
    assert info["converged"] is False and info["optimality_gap"] > 1e-9 and info["stop"] == "round limit"
    assert cli.main(["verify", str(out)]) == 0


@pytest.mark.parametrize("flag,value,name", [("--max-rounds", "0", "max-rounds"), ("--gap-tol", "-1", "gap-tol"),
                                             ("--gap-tol", "nan", "gap-tol")])
def test_cli_disjoint_bad_solve_options_exit_2_naming_them(flag, value, name, capsys):
    """Named as the option the user typed (``--max-rounds`` → ``max-rounds:``)."""
    assert cli.main([*BASE, flag, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("darrm: error:") and f"error: {name}:" in err
