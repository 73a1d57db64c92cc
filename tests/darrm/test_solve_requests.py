"""Issue 15: an argument the solve would ignore, or a prior for another K, is refused before any work.

``darrm.solve`` / ``darrm solve`` used to drop silently: ``checkpoint``/``executor`` with disjoint
members, ``--checkpoint`` with the full LP (asked for, or picked by "auto" at small K) or a closed
form, constraint-generation options with the full LP, shared-data flags with ``--members disjoint``
and the reverse; and ``--prior means:…`` with ≠ K means failed only inside the solve.
"""

from __future__ import annotations

import pytest

import darrm
from darrm import api, cli
from darrm.backends.executors import ProcessExecutor, SerialExecutor
from darrm.errors import ParameterError
from darrm.models.disjoint import solver as disjoint_solver
from darrm.privacy import certify as certify_module
from darrm.solver import gamma_opt

SHARED = darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5)  # "auto" picks the full LP here
LARGE = darrm.PrivacyParams(K=41, m=3, eps=0.1, member_delta=1e-5)  # "auto" picks constraint generation
DISJOINT = darrm.DisjointParams(5, darrm.LocalRR(1.0), 1.0)


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any solver starts."""
    def started(*a, **k):
        raise AssertionError("the solve started before the request was checked")
    monkeypatch.setattr(gamma_opt, "solve_gamma_opt", started)
    monkeypatch.setattr(disjoint_solver, "solve_gamma_opt_disjoint", started)
    monkeypatch.setattr(certify_module, "certify_tight", started)
    monkeypatch.setattr(gamma_opt, "solve_cutting_planes", started)


REFUSED = [
    # (what, params, keyword arguments, the parameter named)
    ("disjoint + checkpoint", DISJOINT, dict(checkpoint="c.npz"), "checkpoint"),
    ("disjoint + local processes", DISJOINT, dict(executor=ProcessExecutor(2)), "executor"),
    ("disjoint + full LP", DISJOINT, dict(options=darrm.SolveOptions(method="full")), "method"),
    ("disjoint + stabilize", DISJOINT, dict(options=darrm.SolveOptions(stabilize=0.5)), "stabilize"),
    ("disjoint + no screen", DISJOINT, dict(options=darrm.SolveOptions(screen=False)), "screen"),
    ("disjoint + means for K=3", DISJOINT, dict(prior=darrm.IndependentPrior((0.6, 0.7, 0.8))), "prior"),
    ("shared + means for K=4", LARGE, dict(prior=darrm.IndependentPrior((0.6,) * 4)), "prior"),
    ("closed form + means for K=3", SHARED, dict(family="sub", prior=darrm.IndependentPrior((0.6,) * 3)), "prior"),
    ("closed form + checkpoint", SHARED, dict(family="sub", checkpoint="c.npz"), "checkpoint"),
    ("closed form + round limit", SHARED, dict(family="const", options=darrm.SolveOptions(max_rounds=3)),
     "max_rounds"),
    ("closed form + gap", SHARED, dict(family="dsub", options=darrm.SolveOptions(accept_gap=True)), "accept_gap"),
    ("full LP + checkpoint", LARGE, dict(options=darrm.SolveOptions(method="full"), checkpoint="c.npz"),
     "checkpoint"),
    ("full LP + cuts", LARGE, dict(options=darrm.SolveOptions(method="full", cuts_per_round=8)), "cuts_per_round"),
    ("auto = full LP + checkpoint", SHARED, dict(checkpoint="c.npz"), "checkpoint"),
    ("auto = full LP + no screen", SHARED, dict(options=darrm.SolveOptions(screen=False)), "screen"),
]


@pytest.mark.parametrize("what,params,kw,name", REFUSED, ids=[r[0] for r in REFUSED])
def test_ignored_or_inconsistent_arguments_are_refused_before_any_work(tmp_path, monkeypatch, no_work,
                                                                        what, params, kw, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError) as info:
        darrm.solve(params, **kw)
    assert info.value.parameter == name and "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == []  # no checkpoint or lock file


def test_the_refusals_explain_themselves():
    with pytest.raises(ParameterError, match="O\\(K\\) rows per round.*in this process"):
        darrm.solve(DISJOINT, checkpoint="c.npz")
    with pytest.raises(ParameterError, match="auto' picks the full LP.*cutting-planes"):
        darrm.solve(SHARED, checkpoint="c.npz")
    with pytest.raises(ParameterError, match="K=5 of them; got 3"):
        darrm.solve(SHARED, darrm.IndependentPrior((0.6, 0.7, 0.8)))


ACCEPTED = [
    ("disjoint, serial executor", DISJOINT, dict(executor=SerialExecutor())),
    ("disjoint, its own options", DISJOINT, dict(options=darrm.SolveOptions(method="cutting-planes", max_rounds=50,
                                                                            cuts_per_round=8, lp_backend="cvxpy",
                                                                            max_memory=2**32))),
    ("closed form, memory budget", SHARED, dict(family="sub", options=darrm.SolveOptions(max_memory=2**32))),
    ("full LP, its gap options", SHARED, dict(options=darrm.SolveOptions(method="full", gap_tol=1e-6))),
    ("cutting planes at small K, checkpointed", SHARED,
     dict(options=darrm.SolveOptions(method="cutting-planes", screen=False), checkpoint="c.npz")),
    ("means for K=5", SHARED, dict(prior=darrm.IndependentPrior((0.6, 0.7, 0.8, 0.9, 0.7)))),
]


@pytest.mark.parametrize("what,params,kw", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_arguments_that_apply_are_accepted(tmp_path, monkeypatch, what, params, kw):
    monkeypatch.chdir(tmp_path)
    prior, opts, checkpoint = api.check_request(params, kw.get("prior"), family=kw.get("family", "opt"),
                                                options=kw.get("options"), executor=kw.get("executor"),
                                                checkpoint=kw.get("checkpoint"))
    assert isinstance(prior, darrm.Prior) and isinstance(opts, darrm.SolveOptions)


def test_a_disjoint_solve_with_a_memory_budget_still_solves():
    table = darrm.solve(DISJOINT, options=darrm.SolveOptions(max_memory=2**32))
    assert table.status == "optimal"


# -- the command line --------------------------------------------------------------------------



@pytest.fixture
def no_solve(monkeypatch):
    def started(*a, **k):
        raise AssertionError("solve started before the options were checked")
    monkeypatch.setattr(api, "solve", started)


D = ["--no-progress", "solve", "--members", "disjoint", "--K", "5", "--member-privacy", "rr:1", "--target-eps", "1"]
S = ["--no-progress", "solve", "--K", "5"]

CLI_REFUSED = [
    (D + ["--checkpoint", "{d}/c.npz"], "checkpoint"),
    (D + ["--executor", "local:2"], "executor"),
    (D + ["--method", "full"], "method"),
    (D + ["--no-screen"], "screen"),
    (D + ["--stabilize", "0.5"], "stabilize"),
    (D + ["--family", "sub"], "family"),
    (D + ["--m", "2"], "m"),
    (D + ["--eps", "0.5"], "eps"),
    (D + ["--member-delta", "0"], "member-delta"),
    (D + ["--delta", "0.01"], "delta"),
    (D + ["--prior", "means:0.6,0.7"], "prior"),
    (S + ["--member-privacy", "rr:1"], "member-privacy"),
    (S + ["--target-eps", "1"], "target-eps"),
    (S + ["--target-delta", "0"], "target-delta"),
    (S + ["--checkpoint", "{d}/c.npz"], "checkpoint"),  # "auto" picks the full LP at K = 5
    (S + ["--method", "full", "--max-rounds", "3"], "max-rounds"),
    (S + ["--method", "full", "--cuts-per-round", "3"], "cuts-per-round"),
    (S + ["--family", "sub", "--checkpoint", "{d}/c.npz"], "checkpoint"),
    (S + ["--family", "const", "--gap-tol", "1e-3"], "gap-tol"),
    (S + ["--family", "const", "--method", "cutting-planes"], "method"),
    (S + ["--prior", "means:0.6,0.7,0.8"], "prior"),
    (S + ["--K", "41", "--method", "cutting-planes", "--prior", "means:0.6,0.7,0.8"], "prior"),
]


@pytest.mark.parametrize("argv,name", CLI_REFUSED, ids=[" ".join(a[2:]) for a, _ in CLI_REFUSED])
def test_cli_options_that_would_be_ignored_are_refused(cli, tmp_path, no_solve, argv, name):
    rc, out, err = cli(*[a.format(d=tmp_path) for a in argv])
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and f"error: {name}:" in lines[0] and out == "", err
    assert list(tmp_path.iterdir()) == []


def test_cli_defaults_of_both_kinds_of_members_still_solve(cli, tmp_path):
    rc, out, err = cli(*D, "--executor", "serial", "--json")
    assert rc == 0, err
    rc, out, err = cli(*S, "--json")
    assert rc == 0, err
    assert '"m": 3.0' in out and '"member_delta": 1e-05' in out


def test_cli_help_still_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 3)" in text and "(default: 0.1)" in text and "(default: 1e-05)" in text
    assert "per-query target δ (default: 0)" in text
