import functools

import numpy as np
import pytest

from darrm import SolveOptions
from darrm.errors import ParameterError
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior, IndependentPrior
from darrm.privacy.certify import certify
from darrm.privacy.corners import orientations
from darrm.solver.full_lp import choose_method
from darrm.solver.gamma_opt import solve_gamma_opt


@pytest.mark.parametrize(
    "K,m,Delta",
    [(11, 3, 1e-5), (13, 5, 1e-5), (15, 3, 1e-4), (21, 5, 1e-5), (31, 3, 0.0), (11, 2.5, 0.0)],
)
def test_constraint_generation_matches_the_full_lp(K, m, Delta):
    """Same optimum as the full-enumeration LP to 1e-9, both certified."""
    P = PrivacyParams(K, m, 0.1, Delta)
    full = solve_gamma_opt(P, options=SolveOptions(method="full"))
    cp = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    assert cp.info["method"] == "cutting-planes" and full.info["method"] == "full"
    assert cp.objective == pytest.approx(full.objective, abs=1e-9)
    for t in (full, cp):
        assert certify(t.gamma, P).violation <= 1e-12
    if Delta > 0:
        assert cp.info["working_set"] < cp.info["multisets"] / 10


def test_constraint_generation_with_a_non_iid_prior():
    P = PrivacyParams(15, 3, 0.1, 1e-5)
    pr = IndependentPrior(tuple(np.linspace(0.55, 0.95, 15)))
    assert solve_gamma_opt(P, pr, options=SolveOptions(method="cutting-planes")).objective == pytest.approx(
        solve_gamma_opt(P, pr, options=SolveOptions(method="full")).objective, abs=1e-9
    )


def test_orientations_are_the_swap_and_reflection_of_the_corner_set():
    from darrm.privacy.corners import corners

    cs = corners(0.3, 0.01)
    v = np.array([[1, 2, 0, 3, 0, 1, 4, 0]])
    o = orientations(v)

    def pts(cnt):
        return sorted(map(tuple, np.repeat(cs, cnt, axis=0).round(12)))

    base = pts(v[0])
    assert pts(o[1]) == sorted(tuple(np.round((q, p), 12)) for p, q in base)  # swap
    assert pts(o[2]) == sorted(tuple(np.round((1 - p, 1 - q), 12)) for p, q in base)  # reflect


def test_checkpoint_resumes_with_the_same_working_set(tmp_path):
    P = PrivacyParams(17, 3, 0.1, 1e-5)
    ck = tmp_path / "ws.npz"
    a = solve_gamma_opt(P, checkpoint=str(ck), options=SolveOptions(method="cutting-planes"))
    assert ck.exists() and not a.info["resumed"]
    b = solve_gamma_opt(P, checkpoint=str(ck), options=SolveOptions(method="cutting-planes"))
    assert b.info["resumed"] and b.info["rounds"] <= 2
    assert b.objective == pytest.approx(a.objective, abs=1e-12)
    # a checkpoint for other parameters is refused (neither trusted nor overwritten)
    before = ck.read_bytes()
    with pytest.raises(ParameterError, match="checkpoint.*another problem"):
        solve_gamma_opt(PrivacyParams(17, 5, 0.1, 1e-5), checkpoint=str(ck),
                        options=SolveOptions(method="cutting-planes"))
    assert ck.read_bytes() == before


def test_auto_picks_the_path_by_size():
    assert choose_method(PrivacyParams(9, 3, 0.1, 1e-5)) == "full"
    assert choose_method(PrivacyParams(11, 3, 0.1, 1e-5)) == "cutting-planes"
    assert choose_method(PrivacyParams(11, 3, 0.1, 0.0)) == "full"
    assert choose_method(PrivacyParams(101, 3, 0.1, 0.0)) == "cutting-planes"


def test_unconverged_generation_is_refused_or_certified_with_a_stated_gap():
    from darrm.errors import SolveError

    P = PrivacyParams(21, 5, 0.1, 1e-5)
    with pytest.raises(SolveError, match="only proven within"):
        solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", max_rounds=1))
    opt = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    early = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", max_rounds=2, accept_gap=True))
    assert certify(early.gamma, P).certified  # privacy is never approximate
    assert not early.info["converged"] and early.status != "optimal" and "gap-bounded" in early.status
    assert early.info["stop"] == "round limit"
    gap = early.info["optimality_gap"]
    assert early.objective >= opt.objective - 1e-12
    assert early.objective - opt.objective <= gap + 1e-9  # the gap is a valid bound
    assert opt.info["converged"] and opt.info["optimality_gap"] <= 1e-9 and opt.status == "optimal"


def test_factored_pmfs_equal_the_poisson_binomial_dp():
    from darrm.privacy.corner_pmfs import factored_pmf_pairs, pmf_pairs
    from darrm.privacy.corners import corners, count_vectors

    for K, Delta in ((9, 1e-5), (7, 0.0), (11, 0.01), (41, 0.0)):
        cs = corners(0.3, Delta)
        cv = count_vectors(K, cs.shape[0])
        for a, b in zip(pmf_pairs(cv, cs), factored_pmf_pairs(cv, cs), strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_restricted_lp_backends_agree_and_their_lagrangian_bound_is_tight(backend):
    from darrm.solver.full_lp import build_rows, solve_all_rows
    from darrm.solver.objective import objective_coefficients
    from darrm.solver.restricted_lp import lagrangian_bound, make_restricted_lp

    P = PrivacyParams(11, 3, 0.1, 1e-5)
    c, _ = objective_coefficients(P.K, IIDPrior())
    rows = build_rows(P)
    x_ref, _ = solve_all_rows(rows, P.rhs, c)
    lp = make_restricted_lp(backend, c, P.rhs)
    lp.add(rows[: rows.shape[0] // 2])
    lp.add(rows[rows.shape[0] // 2 :])
    x, y = lp.solve()
    assert c @ x == pytest.approx(c @ x_ref, abs=1e-12)
    assert np.all(y >= -1e-12)
    # at the optimal duals the bound equals the optimum; for any other y ≥ 0 it is below it
    assert lagrangian_bound(c, lp.rows, P.rhs, y) == pytest.approx(c @ x_ref, abs=1e-10)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert lagrangian_bound(c, rows, P.rhs, rng.exponential(size=rows.shape[0])) <= c @ x_ref + 1e-12
    # dropping rows relaxes the LP: its optimum can only go down
    lp.keep(np.arange(lp.rows.shape[0]) % 2 == 0)
    x2, _ = lp.solve()
    assert c @ x2 <= c @ x + 1e-12


@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("works_from", [1, 2, 3, 4, 5, 99])
def test_a_failing_highs_solve_is_retried_down_to_the_interior_point_method_or_refused(works_from, scaled,
                                                                                        monkeypatch):
    """HiGHS ending without an optimum (status "Not Set" or "Unknown", seen at K = 2001, Δ = 0) is retried
    on a fresh model, then with each of RETRIES (HiGHS's own scaling, only for a model given another
    one as a default, as pure DP is; the last: interior point with crossover); the optimum is the
    same, the next round is back on the simplex, and when every attempt fails the solve is a
    SolveError, never a silent point."""
    from darrm.errors import SolveError
    from darrm.solver import restricted_lp as rl
    from darrm.solver.full_lp import build_rows, solve_all_rows
    from darrm.solver.objective import objective_coefficients

    P = PrivacyParams(11, 3, 0.1, 1e-5)
    c, _ = objective_coefficients(P.K, IIDPrior())
    rows = build_rows(P)
    x_ref, _ = solve_all_rows(rows, P.rhs, c)
    calls = []
    real = rl.HighsRestrictedLP._run

    def flaky(h):  # attempt n (1: the warm model, 2: fresh, 3: RETRIES[0], 4: RETRIES[1]) runs from works_from on
        calls.append(h.getOptions().solver)
        if len(calls) >= works_from:
            real(h)
        else:
            h.clearSolver()

    monkeypatch.setattr(rl.HighsRestrictedLP, "_run", staticmethod(flaky))
    lp = rl.make_restricted_lp("highs", c, P.rhs, defaults={"simplex_scale_strategy": 4} if scaled else None)
    lp.add(rows)
    attempts = 2 + len(rl.RETRIES) - (0 if scaled else 1)  # unscaled: the scaling retry changes nothing
    if works_from > attempts:
        with pytest.raises(SolveError, match="LP not solved"):
            lp.solve()
        assert len(calls) == attempts
        return
    x, _ = lp.solve()
    assert c @ x == pytest.approx(c @ x_ref, abs=1e-8)
    assert len(calls) == works_from
    if works_from == attempts:
        assert calls[-1] == "ipm"
    if scaled and works_from >= 3:
        assert lp.opts["simplex_scale_strategy"] == 1
    lp.solve()  # the next round: the simplex again
    assert calls[-1] != "ipm" and lp.opts.get("solver") is None


def test_unknown_lp_backend_is_refused_by_name():
    from darrm.errors import ParameterError

    with pytest.raises(ParameterError, match="lp_backend"):
        solve_gamma_opt(PrivacyParams(15, 3, 0.1, 1e-5),
                        options=SolveOptions(method="cutting-planes", lp_backend="gurobi"))
    with pytest.raises(ParameterError, match="stabilize"):
        solve_gamma_opt(PrivacyParams(15, 3, 0.1, 1e-5), options=SolveOptions(method="cutting-planes", stabilize=0.0))


@pytest.mark.parametrize("stabilize,backend", [(1.0, "highs"), (0.5, "highs"), (0.3, "cvxpy")])
def test_in_out_stabilised_generation_reaches_the_full_lp_optimum(stabilize, backend):
    """Every λ and both LP back ends reach the full LP's optimum with a certified table and a
    stated gap that bounds the true distance to the optimum."""
    P = PrivacyParams(17, 5, 0.1, 1e-5)
    full = solve_gamma_opt(P, options=SolveOptions(method="full"))
    t = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", stabilize=stabilize, lp_backend=backend))
    assert t.info["converged"] and t.info["lp_backend"] == backend
    assert t.objective == pytest.approx(full.objective, abs=1e-9)
    assert t.objective - full.objective <= t.info["optimality_gap"] + 1e-12
    assert certify(t.gamma, P).certified


def test_gap_stop_returns_a_certified_table_within_the_stated_gap():
    """A loose gap_tol stops early on the bounds alone; the table is still certified and the
    true distance to the optimum (from the full LP) is within the reported gap."""
    P = PrivacyParams(21, 5, 0.1, 1e-5)
    full = solve_gamma_opt(P, options=SolveOptions(method="full"))
    t = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", gap_tol=2e-3, stabilize=0.3))
    assert t.info["converged"]
    assert certify(t.gamma, P).certified
    assert 0.0 <= t.objective - full.objective <= t.info["optimality_gap"] + 1e-12
    assert t.info["optimality_gap"] <= 2e-3 + 1e-12
    assert t.info["stop"] in ("optimality gap", "no violated multiset", "violations within LP tolerance")


def test_generation_reaches_the_full_lp_optimum_at_k101_pure_dp():
    """K = 101, Δ = 0 (C(104,3) = 187,460 multisets; the full LP keeps 64,773 possibly binding
    rows): the per-c sweep blocks (two triangular products each, flushed tables) reach the full
    LP's optimum to 1e-9, proven optimal."""
    P = PrivacyParams(101, 3, 0.1, 0.0)
    full = solve_gamma_opt(P, options=SolveOptions(method="full", accept_gap=True))
    cp = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    assert cp.objective == pytest.approx(full.objective, abs=1e-9)
    assert cp.status == "optimal" and cp.info["optimality_gap"] <= 1e-9
    assert certify(cp.gamma, P).certified


def test_screening_at_k41_reaches_the_optimum_of_exhaustive_generation():
    """Δ > 0, K = 41: with screening the solve needs fewer exhaustive sweeps than rounds and ends
    at the objective of a solve that sweeps exhaustively every round, both proven optimal."""
    P = PrivacyParams(41, 5, 0.1, 1e-5)
    a = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    b = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", screen=False))
    assert a.info["screens"] > 0 and a.info["exhaustive_sweeps"] < a.info["rounds"]
    assert b.info["screens"] == 0
    assert a.objective == pytest.approx(b.objective, abs=1e-9)
    assert a.status == b.status == "optimal"


class _RandomScreen:
    """A deliberately useless screening oracle: it claims big violations at random multisets
    (their rows are true constraints, so adding them is harmless but does not help)."""

    def __init__(self, inner, seed=0):
        self.inner, self.rng = inner, np.random.default_rng(seed)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def screen(self, x, top, threshold):
        from darrm.privacy.corners import count_vectors
        from darrm.privacy.sweep import SweepResult

        self.inner.screens += 1
        allc = count_vectors(self.inner.params.K, 8)
        pick = allc[self.rng.choice(allc.shape[0], size=5, replace=False)]
        return SweepResult(1.0, pick, np.ones(5), 5)


class _BlindScreen(_RandomScreen):
    """A screening oracle that never finds anything."""

    def screen(self, x, top, threshold):
        self.inner.screens += 1
        return None


@pytest.mark.parametrize("weak", [_RandomScreen, _BlindScreen])
def test_a_weak_screening_oracle_still_ends_certified_and_optimal(weak, monkeypatch):
    """The screen only proposes cuts; bounds and the stop come from exhaustive sweeps and the
    final certificate sweeps every multiset, so a useless screen costs rounds, never privacy
    or optimality."""
    import math

    import darrm.solver.cutting_planes as cpm

    real = cpm.SweepOracle
    monkeypatch.setattr(cpm, "SweepOracle", lambda *a, **k: weak(real(*a, **k)))
    P = PrivacyParams(21, 5, 0.1, 1e-5)
    full = solve_gamma_opt(P, options=SolveOptions(method="full"))
    t = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    assert t.info["screens"] > 0
    assert t.objective == pytest.approx(full.objective, abs=1e-9)
    assert t.status == "optimal" and t.info["optimality_gap"] <= 1e-9
    assert t.info["multisets"] == math.comb(21 + 7, 7)  # the certificate swept every multiset
    assert certify(t.gamma, P).certified


def test_a_solve_that_does_not_fit_max_memory_is_refused_before_any_work():
    """K = 201, Δ > 0 needs ~2.8 GiB for one sweep worker (sweep_memory): a 1 GiB budget is refused
    up front, naming max_memory; a 4 GiB budget picks as many workers as fit (one)."""
    import time

    from darrm.errors import ParameterError
    from darrm.privacy.sweep import default_executor, sweep_memory

    P = PrivacyParams(201, 5, 0.1, 1e-5)
    t = time.perf_counter()
    with pytest.raises(ParameterError, match="max_memory.*GiB"):
        solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", max_memory=2**30))
    assert time.perf_counter() - t < 5.0
    assert sweep_memory(P, 1) < 4 * 2**30 < sweep_memory(P, 2)
    assert getattr(default_executor(P, 4 * 2**30), "workers", 1) == 1
    with pytest.raises(ParameterError, match="max_memory"):
        SolveOptions(max_memory=-1)


class _TrickleScreen:
    """A screening oracle that finds one real violation per screen (the worst multiset, by an
    uncounted exhaustive sweep): at most 4 new rows, fewer than Schedule.screen_min_rows.  ``calls`` is the
    order in which the solve called it: "screen" (cuts returned) or "sweep" (exhaustive)."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def screen(self, x, top, threshold):
        from darrm.gamma import symmetric_from_upper
        from darrm.privacy.sweep import sweep

        self.inner.screens += 1
        res = sweep(symmetric_from_upper(x, self.inner.params.K), self.inner.params, top=1, threshold=threshold)
        if res.max_violation <= threshold:
            return None
        self.calls.append("screen")
        return res

    def exhaustive(self, x, top, threshold):
        self.calls.append("sweep")
        return self.inner.exhaustive(x, top, threshold)


@pytest.mark.parametrize("min_rows", [0, 8])
def test_a_screen_that_adds_few_rows_ends_the_streak(min_rows, monkeypatch):
    """Schedule.screen_min_rows: a screen adding fewer rows than it is followed by an exhaustive sweep, never by
    another screen (with the rule off, the same oracle screens several rounds in a row); the solve
    still ends at the full LP's optimum, proven optimal and certified by a sweep of every multiset."""
    import darrm.solver.cutting_planes as cpm

    real, made = cpm.SweepOracle, []

    def make(*a, **k):
        made.append(_TrickleScreen(real(*a, **k)))
        return made[-1]

    monkeypatch.setattr(cpm, "SweepOracle", make)
    from darrm.solver import gamma_opt
    from darrm.solver.schedule import Schedule

    monkeypatch.setattr(gamma_opt, "solve_cutting_planes", functools.partial(
        gamma_opt.solve_cutting_planes, schedule=Schedule(screen_min_rows=min_rows)))
    P = PrivacyParams(21, 5, 0.1, 1e-5)
    full = solve_gamma_opt(P, options=SolveOptions(method="full"))
    t = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    pairs = list(zip(made[0].calls, made[0].calls[1:], strict=False))
    assert "screen" in made[0].calls
    assert (("screen", "screen") in pairs) == (min_rows == 0)
    assert t.objective == pytest.approx(full.objective, abs=1e-9)
    assert t.status == "optimal" and t.info["optimality_gap"] <= 1e-9
    assert certify(t.gamma, P).certified
