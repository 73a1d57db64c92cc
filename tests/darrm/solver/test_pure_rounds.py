"""The pure-DP policy of constraint generation (darrm.solver.pure_rounds): seed rows are rows of the
full LP, and a solve with the seed, the λ ramp, the line search and its proximal target ends at the full
LP's optimum, certified by every multiset, whatever the schedule (darrm.solver.schedule)."""

import functools
import math

import numpy as np
import pytest

from darrm import SolveOptions
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify_reference
from darrm.privacy.corners import orientations
from darrm.solver import gamma_opt, pure_rounds
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.rows import iter_row_blocks
from darrm.solver.schedule import Schedule


def test_seed_rows_are_rows_of_the_full_lp():
    """Every seeded multiset, in every orientation, is a corner multiset of K members whose folded
    row (as the working set builds it, from factored binomial pmfs) equals the full LP's row for
    that multiset (Poisson-binomial dynamic programming over every multiset) to 1e-12."""
    import darrm.solver.cutting_planes as cpm
    from darrm.solver.restricted_lp import make_restricted_lp

    P = PrivacyParams(21, 3, 0.1, 0.0)
    seed = pure_rounds.seed_multisets(P)
    assert seed.shape == (22, 4) and np.all(seed.sum(axis=1) == 21) and np.all(seed >= 0)
    n = P.K - P.K // 2  # the upper half γ(mid..K)
    ws = cpm.WorkingSet(P, np.zeros(n), make_restricted_lp("highs", np.zeros(n), P.rhs), None)
    new = ws.new_among(seed)
    assert new.shape[0] == len({tuple(r) for r in orientations(seed).tolist()}) == 4 * 22 - 4
    full = {tuple(cv): row for counts, rows in iter_row_blocks(P)
            for cv, row in zip(counts.tolist(), rows, strict=True)}
    mine = ws._rows(new)
    for cv, row in zip(new.tolist(), mine, strict=True):
        assert np.max(np.abs(full[tuple(cv)] - row)) <= 1e-12


def test_no_seed_for_approximate_dp_members():
    assert pure_rounds.seed_multisets(PrivacyParams(21, 3, 0.1, 1e-5)).shape == (0, 8)


def _with_schedule(monkeypatch, **changes) -> None:
    """Solve with a changed schedule from now on (the tuning numbers; none changes what is proven)."""
    monkeypatch.setattr(gamma_opt, "solve_cutting_planes",
                        functools.partial(gamma_opt.solve_cutting_planes, schedule=Schedule(**changes)))


@pytest.mark.parametrize("K,m,stabilize", [(31, 3, "auto"), (41, 10, "auto"), (41, 10, 0.5)])
def test_seeded_ramped_generation_ends_at_the_full_lp_optimum_certified_by_every_multiset(K, m, stabilize):
    """With the seed, the λ ramp and no purge (the pure-DP policy), constraint generation reaches the
    full LP's objective (every corner multiset a row) to 1e-9, proven optimal (gap ≤ 1e-9); its final
    certificate swept all C(K+3, 3) multisets, and the direct per-multiset certificate (both outputs,
    both directions, Poisson-binomial pmfs) agrees.  λ = 0.5 from the start exercises the ramp (auto
    stays at λ = 1 at these K)."""
    P = PrivacyParams(K, m, 0.1, 0.0)
    new = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", stabilize=stabilize))
    assert new.objective == pytest.approx(_full_lp_objective(P), abs=1e-9)
    assert new.status == "optimal" and new.info["optimality_gap"] <= 1e-9
    assert new.info["multisets"] == math.comb(K + 3, 3)
    assert certify_reference(new.gamma, P).violation <= 0.0


@pytest.mark.parametrize("lam", [1e-6, 0.3, 0.5, 0.8, 0.95])
def test_the_ramp_reaches_the_lp_point_in_finitely_many_feasible_rounds(lam):
    """λ strictly grows and reaches 1 (separation at the LP point itself, where the classic stop
    and the LP-tolerance stop are decided) after at most log2(1/ramp_floor) + log2(1/(1 − λ)) steps."""
    seen = [lam]
    while seen[-1] < 1.0:
        seen.append(pure_rounds.ramp_lambda(seen[-1]))
        assert seen[-1] > seen[-2] and seen[-1] <= 1.0
        assert len(seen) <= 4 + math.ceil(math.log2(1.0 / (1.0 - lam)))
    assert pure_rounds.ramp_lambda(0.5) == 0.75 and pure_rounds.ramp_lambda(0.875) == 1.0


def _policy(P: PrivacyParams, **kw) -> pure_rounds.RoundPolicy:
    return pure_rounds.RoundPolicy.of(P, Schedule(), **kw)


def test_the_ramp_and_keeping_every_row_are_for_pure_dp_only():
    assert _policy(PrivacyParams(21, 3, 0.1, 0.0)).ramp
    assert not _policy(PrivacyParams(21, 3, 0.1, 1e-5)).ramp
    assert _policy(PrivacyParams(21, 3, 0.1, 0.0)).purge_after == 0
    assert _policy(PrivacyParams(21, 3, 0.1, 1e-5)).purge_after == Schedule().purge_after == 5


def test_none_of_the_changes_applies_at_large_meps():
    """Above pure_max_meps the rows hold entries ~e^{mε}: the plain path runs (a scan of 40 requests
    with mε in [18, 30] where HiGHS failed on the seeded LP)."""
    P = PrivacyParams(21, 3, 4.0, 0.0)  # mε = 12
    pol = _policy(P)
    assert pol.seed.shape[0] == 0 and not pol.ramp and pol.purge_after == Schedule().purge_after
    assert not pol.line_search and pol.prox_mu0 is None and pol.highs == {}
    assert pure_rounds.seed_multisets(P, Schedule(pure_max_meps=12.0)).shape[0] == 22


def _full_lp_objective(P: PrivacyParams) -> float:
    return solve_gamma_opt(P, options=SolveOptions(method="full")).objective


@pytest.mark.parametrize("K,m,stabilize", [(41, 10, 0.5), (61, 10, 0.5)])
def test_line_search_generation_ends_at_the_full_lp_optimum(K, m, stabilize):
    """With the segment line search (the default for pure DP; λ = 0.5 from the start puts the solve in
    line-search rounds at these K) constraint generation reaches the full LP's optimum (every corner
    multiset a row) to 1e-9, proven optimal, and its table passes the direct per-multiset certificate."""
    P = PrivacyParams(K, m, 0.1, 0.0)
    opts = SolveOptions(method="cutting-planes", stabilize=stabilize)
    ls = solve_gamma_opt(P, options=opts)
    assert ls.info["line_search_rounds"] > 0
    assert ls.status == "optimal" and ls.info["optimality_gap"] <= 1e-9
    assert ls.objective == pytest.approx(_full_lp_objective(P), abs=1e-9)
    assert certify_reference(ls.gamma, P).violation <= 0.0


def test_an_overshooting_line_search_still_ends_certified_at_the_optimum(monkeypatch):
    """A deliberately wrong step (three times λ*, past the feasible region) makes the proposals
    violate: the exhaustive sweep of each proposal catches it and the solve repairs by scaling or
    restarts from the best certified point, so the answer is still certified (direct per-multiset
    certificate) and still the full LP's optimum to 1e-9; no bound rests on the step."""
    P = PrivacyParams(41, 10, 0.1, 0.0)
    # outside the validated range on purpose: a deliberately broken schedule
    broken = Schedule()
    object.__setattr__(broken, "line_search_short", 3.0)
    monkeypatch.setattr(gamma_opt, "solve_cutting_planes",
                        functools.partial(gamma_opt.solve_cutting_planes, schedule=broken))
    import darrm.solver.cutting_planes as cpm

    seen = []
    inner = cpm.SweepOracle.segment

    def spy(self, x_a, x_b, top, threshold, deep=0):
        res = inner(self, x_a, x_b, top, threshold, deep)
        seen.append(res.max_violation)
        return res

    monkeypatch.setattr(cpm.SweepOracle, "segment", spy)
    t = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes", stabilize=0.5))
    assert any(v > 0.0 for v in seen)  # some proposal was outside, and the sweep said so
    assert t.status == "optimal" and t.info["optimality_gap"] <= 1e-9
    assert t.objective == pytest.approx(_full_lp_objective(P), abs=1e-9)
    assert certify_reference(t.gamma, P).violation <= 0.0


def test_line_search_and_highs_scaling_are_for_pure_dp_only():
    pure, approx, big = PrivacyParams(21, 3, 0.1, 0.0), PrivacyParams(21, 3, 0.1, 1e-5), PrivacyParams(21, 3, 4.0, 0.0)
    assert _policy(pure).line_search and not _policy(approx).line_search and not _policy(big).line_search
    assert _policy(pure).highs == {"simplex_scale_strategy": 4}
    assert _policy(approx).highs == {} and _policy(big).highs == {}
    # no segment sweep on a torch device, no proximal LP on the cvxpy back end
    assert not _policy(pure, line_search=False).line_search and _policy(pure, prox=False).prox_mu0 is None


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_the_exact_bound_schedule_never_changes_the_optimum(delta, monkeypatch):
    """The exact-objective re-solves (on the twin model) at the measured schedule and at one that
    re-solves as often as it can (every round once in reach, no back-off) end at the full LP's
    optimum to 1e-9, both proven optimal (the bound is the Lagrangian bound with the exact costs
    whichever round computes it).  Δ > 0 at K = 21: the re-solve runs there as at K = 31 (once
    under both schedules, counted), and the full LP reference costs ~9 s instead of ~195 s."""
    import darrm.solver.cutting_planes as cpm

    P = PrivacyParams(21 if delta else 31, 3, 0.1, delta)
    opts = SolveOptions(method="cutting-planes", stabilize=0.5)
    full = _full_lp_objective(P)
    record, resolves = cpm.TightBound.record, []
    monkeypatch.setattr(cpm.TightBound, "record", lambda self, *a, **k: resolves.append(1) or record(self, *a, **k))
    for changes in ({}, {"tight_every": 1, "tight_every_max": 1, "tight_settled": 0.0}):
        _with_schedule(monkeypatch, **changes)
        resolves.clear()
        t = solve_gamma_opt(P, options=opts)
        assert t.status == "optimal" and t.info["optimality_gap"] <= 1e-9
        assert t.objective == pytest.approx(full, abs=1e-9)
        assert resolves, "the exact-objective re-solve never ran: the test would prove nothing"


def test_the_twin_model_holds_the_working_sets_rows_through_adds_and_purges():
    """The exact-objective model sees every row the tie-break model sees, in the same order, after
    rows are added before and after it is attached and after a purge (Δ > 0 purges slack rows)."""
    import darrm.solver.cutting_planes as cpm
    from darrm.privacy.sweep import sweep
    from darrm.solver.restricted_lp import make_restricted_lp

    P = PrivacyParams(11, 3, 0.1, 1e-5)
    n = P.K - P.K // 2
    ws = cpm.WorkingSet(P, np.ones(n), make_restricted_lp("highs", -np.ones(n), P.rhs), None)
    counts = sweep(np.ones(P.K + 1), P, top=40, diverse=False).candidates  # violated by γ ≡ 1
    ws.add(ws.new_among(counts[:10]))
    ws.attach_twin(make_restricted_lp("highs", np.ones(n), P.rhs))
    ws.add(ws.new_among(counts[10:30]))
    assert np.array_equal(ws.twin.rows, ws.lp.rows) and ws.lp.rows.shape[0] == ws.multisets.shape[0]
    before = ws.lp.rows.shape[0]
    x, _ = ws.lp.solve()  # maximising Σγ: at the optimum some rows bind, the others are slack
    ws.purge(x, 1)
    assert 0 < ws.lp.rows.shape[0] < before
    assert np.array_equal(ws.twin.rows, ws.lp.rows) and ws.lp.rows.shape[0] == ws.multisets.shape[0]
    _, y = ws.twin.solve()
    assert y.shape[0] == ws.lp.rows.shape[0]


def test_the_proximal_lp_is_the_restricted_lp_at_mu_zero_and_keeps_a_feasible_anchor_at_large_mu():
    """ProximalHighsLP (min c·x + μ‖x − a‖₁ over the same rows): with μ = 0 its optimum and row duals
    are the plain restricted LP's; with μ above every |c_l| a feasible anchor is its own optimum
    (each unit moved costs more than it can gain); after adds, a purge and moving the anchor it
    still solves the same rows as the plain model, and its duals give a Lagrangian bound ≤ its
    optimum (valid for any y ≥ 0)."""
    from darrm.solver.restricted_lp import HighsRestrictedLP, ProximalHighsLP, lagrangian_bound

    rng = np.random.default_rng(7)
    n = 25
    R, c = rng.normal(size=(80, n)), rng.normal(size=n)
    plain, prox = HighsRestrictedLP(c, 1.0), ProximalHighsLP(c, 1.0, np.zeros(n), 0.0)
    for m in (plain, prox):
        m.add(R[:40])
    (x0, _), (x1, y1) = plain.solve(), prox.solve()
    assert c @ x1 == pytest.approx(c @ x0, abs=1e-9) and y1.shape == (40,)
    assert lagrangian_bound(c, R[:40], 1.0, y1) == pytest.approx(c @ x0, abs=1e-8)
    anchor = 0.5 * x0  # feasible: the rows are linear with rhs 1 > 0 and 0 is feasible
    prox.set_anchor(anchor, 10.0 * np.max(np.abs(c)))
    x2, y2 = prox.solve()
    assert np.max(np.abs(x2 - anchor)) <= 1e-9
    assert lagrangian_bound(c, R[:40], 1.0, y2) <= c @ x0 + 1e-9  # a valid bound: ≤ the optimum
    keep = np.arange(80) % 3 != 0
    for m in (plain, prox):
        m.add(R[40:])
        m.keep(keep)
    prox.set_anchor(np.zeros(n), 0.0)
    (x0, _), (x1, y1) = plain.solve(), prox.solve()
    assert np.array_equal(prox.rows, plain.rows) and y1.shape == (int(keep.sum()),)
    assert c @ x1 == pytest.approx(c @ x0, abs=1e-9)


def test_idle_coordinates_cannot_move_the_objective_by_more_than_their_share():
    """idle_coordinates and prox_weights: the coordinates given the fixed weight prox_mu0 are the
    lightest ones, their |c| sum to at most prox_idle_share·gap_tol, and the next lighter
    coordinate would break that."""
    share, mu_idle = Schedule().prox_idle_share, Schedule().prox_mu0
    c = -np.exp(-0.5 * ((np.arange(400) - 200.0) / 9.0) ** 2) * 0.01
    for gap_tol in (1e-9, 1e-6):
        mu = pure_rounds.prox_weights(pure_rounds.idle_coordinates(c, gap_tol), 1e-9)
        idle = mu == mu_idle
        assert idle.any() and not idle.all() and np.all(mu[~idle] == 1e-9)
        assert np.abs(c[idle]).sum() <= share * gap_tol
        lightest_busy = np.min(np.abs(c[~idle]))
        assert np.abs(c[idle]).sum() + lightest_busy > share * gap_tol
        assert np.max(np.abs(c[idle])) <= lightest_busy


@pytest.mark.parametrize("K", [41, 61])
def test_proximal_line_search_ends_at_the_full_lp_optimum_like_the_lp_point_target(K, monkeypatch):
    """The line search aimed at the proximal point (the default) ends proven optimal at the full LP's
    optimum to 1e-9, as aiming at the tie-break LP point does (the policy without a proximal target, as
    on the cvxpy back end), and its table passes the direct per-multiset certificate; its proximal
    rounds really ran (the model exists)."""
    import darrm.solver.cutting_planes as cpm

    made = []
    inner = cpm.ProximalHighsLP.__init__

    def spy(self, *a, **k):
        made.append(self)
        inner(self, *a, **k)

    monkeypatch.setattr(cpm.ProximalHighsLP, "__init__", spy)
    P = PrivacyParams(K, 10, 0.1, 0.0)
    opts = SolveOptions(method="cutting-planes", stabilize=0.5)
    prox = solve_gamma_opt(P, options=opts)
    assert made and prox.info["line_search_rounds"] > 0
    assert prox.status == "optimal" and prox.info["optimality_gap"] <= 1e-9
    assert prox.objective == pytest.approx(_full_lp_objective(P), abs=1e-9)
    assert certify_reference(prox.gamma, P).violation <= 0.0
    made.clear()
    policy = cpm.RoundPolicy.of
    monkeypatch.setattr(cpm.RoundPolicy, "of", lambda *a, **k: policy(*a, **{**k, "prox": False}))
    lp_point = solve_gamma_opt(P, options=opts)
    assert not made
    assert prox.objective == pytest.approx(lp_point.objective, abs=1e-9)


def test_a_failed_proximal_solve_is_retried_on_a_fresh_model_with_the_same_anchor_and_weights(monkeypatch):
    """A proximal model whose solve fails is rebuilt by the restricted LP's retries (a fresh model, its
    2n proximal rows and n columns recreated at the current anchor and weights, the working set's rows
    re-added): the optimum is the one the model had before the failure."""
    from darrm.solver import restricted_lp as rl

    rng = np.random.default_rng(3)
    n = 15
    R, c = rng.normal(size=(50, n)), rng.normal(size=n)
    prox = rl.ProximalHighsLP(c, 1.0, np.zeros(n), 0.0)
    prox.add(R)
    x0, _ = prox.solve()
    anchor, mu = 0.5 * x0, np.linspace(0.01, 0.3, n)
    prox.set_anchor(anchor, mu)
    x_ref, y_ref = prox.solve()
    assert np.max(np.abs(x_ref - x0)) > 1e-3  # the weights matter here
    prox.set_anchor(np.zeros(n), 0.0)
    prox.solve()
    prox.set_anchor(anchor, mu)
    calls = []
    real = rl.HighsRestrictedLP._run

    def flaky(h):  # the warm model fails once; the fresh one runs
        calls.append(1)
        if len(calls) > 1:
            real(h)
        else:
            h.clearSolver()

    monkeypatch.setattr(rl.HighsRestrictedLP, "_run", staticmethod(flaky))
    x, y = prox.solve()
    assert len(calls) == 2 and y.shape == (50,)
    assert c @ x + mu @ np.abs(x - anchor) == pytest.approx(c @ x_ref + mu @ np.abs(x_ref - anchor), abs=1e-9)
