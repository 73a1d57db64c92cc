"""The constraint-generation loop shared by the member models whose separation oracle sees every row.

Claim.  For any model that supplies (a) the LP's costs and table form, (b) a separation oracle that
returns the rigorous maximum violation v̂ of a full table over EVERY constraint and the keys of the most
violated rows not yet in the LP, and (c) each key's LP row (a row of the model's full LP), the loop
below returns a certified point x_best and a lower bound lb with c·x_best − lb ≥ 0 the proven gap.

Proof.  Every row added is a row of the full LP, so each working-set LP is a relaxation; its duals
y ≥ 0 at the exact objective give a valid lower bound (:func:`darrm.solver.restricted_lp.lagrangian_bound`,
valid for any y ≥ 0, here also for the duals recomputed from the basis by a :class:`Polish`).  The
oracle's v̂ at the separation point x bounds its violation of every constraint, so x itself (v̂ ≤ 0) or
its repair by scaling (:func:`darrm.privacy.certify.repair`) is feasible: an upper bound.  Which point is
separated (:class:`Stabilizer`) and which rows are added change the path only.  The caller certifies
x_best again over the full table (:func:`darrm.solver.finalize.certified_gamma_opt`).

Used by the disjoint members (:mod:`darrm.models.disjoint.solver`, and through it the record groups on shards and
the budget groups on one-group shards) and the grouped members on shared data (:mod:`darrm.models.groups.solver`).

Every constraint-generation loop is driven by :func:`run_rounds` over a :class:`Rounds` run: this module's
Kelley/in-out run (:func:`constraint_generation`), the shared-data model's run
(:func:`darrm.solver.cutting_planes.solve_cutting_planes`: the same :class:`Stabilizer` and :class:`Incumbent`
with its named strategies — screening, a seed, a λ ramp, the exact-objective bound's schedule, line searches
and proximal steps) and the profile-bounded LP (:func:`darrm.solver.multi_pair.solve_pairs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from ..privacy.certify import repair
from ..status import StopReason
from .finalize import TableForm
from .restricted_lp import RestrictedLP, lagrangian_bound, make_restricted_lp
from .schedule import Schedule


class Stabilizer:
    """λ of in-out separation (Ben-Ameur & Neto 2007): a fixed λ in (0, 1], or "auto": plain
    Kelley cuts (λ = 1) until the LP point's violation first rises, then ``auto_lambda``
    (:attr:`darrm.solver.schedule.Schedule.auto_lambda`).  ``ramp_floor`` (None: no ramp): after a
    feasible separation point λ moves halfway to 1 (:func:`darrm.solver.pure_rounds.ramp_lambda`)."""

    def __init__(self, stabilize: float | str, ramp_floor: float | None = None,
                 auto_lambda: float = Schedule.auto_lambda):
        self.auto = stabilize == "auto"
        self.lam0 = auto_lambda if self.auto else float(stabilize)
        self.lam = 1.0 if self.auto else self.lam0
        self.kelley = True
        self.last_out: float | None = None
        self.ramp_floor = ramp_floor

    def separation_point(self, x_in: np.ndarray | None, x_out: np.ndarray) -> tuple[np.ndarray, bool]:
        """(x_sep, whether x_sep is the LP point itself)."""
        if x_in is None or self.lam >= 1.0:
            return x_out, True
        return x_in + self.lam * (x_out - x_in), False

    def look_at_lp_point(self) -> None:
        """Separate at the LP point next (the last separation point gave no new cut)."""
        self.lam = 1.0

    def after_feasible(self) -> None:
        """The separation point was feasible (it is the new x_in): separate at the LP point next,
        or with a ramp (:func:`darrm.solver.pure_rounds.ramp_lambda`) halfway from λ to it."""
        from .pure_rounds import ramp_lambda

        self.lam = ramp_lambda(self.lam, self.ramp_floor) if self.ramp_floor is not None else 1.0

    def after_violation(self, v: float, at_out: bool) -> None:
        """Plain Kelley cuts while the LP point's violation keeps falling; in-out from the first
        rise on (the oscillation that stalls plain cutting planes at large K)."""
        if self.auto and at_out:
            if self.last_out is not None and v > self.last_out:
                self.kelley = False
            self.last_out = v
        self.lam = 1.0 if (self.auto and self.kelley) else self.lam0


def _polished(x: np.ndarray, rows: np.ndarray, rhs: float, c: np.ndarray,
              basis: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """(x′, y′): the LP's optimal vertex and its row duals recomputed in float64 from its basis.

    HiGHS works to a feasibility tolerance (~1e-10) and ignores matrix entries below
    ``small_matrix_value``: with randomised-response members its point sits
    outside exact rows by ~1e-9, and scaling it back (:func:`darrm.privacy.certify.repair`) costs
    ~|c·x|·2v/rhs, more than ``gap_tol``.  Here the basis's nonbasic rows are solved for
    equality over the basic columns with the exact rows (nonbasic columns at their
    bounds), and the duals from c_B + R_{N,B}ᵀ y_N = 0.  Neither needs to be right: x′ is
    only a candidate, certified like any other point, and y′ only feeds the Lagrangian
    bound, valid for every y ≥ 0 (:func:`darrm.solver.restricted_lp.lagrangian_bound`).
    """
    y = np.zeros(rows.shape[0])
    if basis is None or rows.shape[0] == 0:
        return x, y
    bcol, brow = basis
    act = np.flatnonzero(~brow)
    if act.size != int(bcol.sum()) or act.size == 0:
        return x, y
    xp = np.where(x > 0.5, 1.0, 0.0)  # nonbasic columns sit at a bound
    M = rows[np.ix_(act, bcol)]
    try:
        xp[bcol] = np.linalg.solve(M, rhs - rows[act][:, ~bcol] @ xp[~bcol])
        y[act] = np.linalg.solve(M.T, -c[bcol])
    except np.linalg.LinAlgError:
        return x, np.zeros(rows.shape[0])
    return np.clip(xp, 0.0, 1.0), y


@dataclass(frozen=True)
class Polish:
    """Once the largest violation is in (``tol``, ``below``] (only the LP's own tolerance is left to
    remove), recompute the LP's vertex and duals exactly from its basis (:func:`_polished`; dense
    O(n³), so not in the early rounds): a second certified candidate and a second lower bound."""

    below: float


@dataclass(frozen=True)
class Oracle:
    """What the loop needs of a model.

    Attributes:
        separate: (full table, keys already rows, how many) ↦ (the rigorous maximum violation v̂
            over every constraint, the keys of the most violated rows above the tolerance that are
            not yet rows, most violated first).
        rows: keys ↦ their LP rows over the form's variables, (row·x − rhs) of the sign of the
            violation.
        violation: full table ↦ v̂ alone (for a :class:`Polish` candidate).
    """

    separate: Callable[[np.ndarray, set, int], tuple[float, Any]]
    rows: Callable[[Any], np.ndarray]
    violation: Callable[[np.ndarray], float]


@dataclass
class Outcome:
    """The loop's result: the best certified point, why it stopped, the rounds, the lower bound and
    the working-set LP (its rows)."""

    x: np.ndarray
    stop: StopReason
    rounds: int
    lower_bound: float
    lp: RestrictedLP


R = TypeVar("R", covariant=True)


class Rounds(Protocol[R]):
    """One run of constraint generation as the engine drives it: its state and its strategies.

    ``round(rnd)`` runs round ``rnd`` (1-based) and returns the run's result when it stops there,
    else None; ``at_limit()`` is the result when ``max_rounds`` rounds ran without a stop."""

    max_rounds: int

    def round(self, rnd: int) -> R | None: ...

    def at_limit(self) -> R: ...


def run_rounds(run: Rounds[R]) -> R:
    """The one constraint-generation loop of every member model: rounds 1, 2, … of ``run`` until one
    stops or ``run.max_rounds`` have run.

    The runs: :func:`constraint_generation` (the models whose oracle sees every row: disjoint, record and
    budget groups, grouped members), the shared-data model's run (its strategies — screens, the exact-
    objective bound's schedule, line searches, proximal steps — are named objects of
    :mod:`darrm.solver.cutting_planes`) and the profile-bounded LP (:func:`darrm.solver.multi_pair.solve_pairs`).
    What a run proves is its own (each run's docstring); the driver only counts rounds."""
    for rnd in range(1, int(run.max_rounds) + 1):
        out = run.round(rnd)
        if out is not None:
            return out
    return run.at_limit()


class Incumbent:
    """The best certified point of a run and its cost, the upper bound UB = c·x.

    A point x whose rigorous maximum violation v comes from an exhaustive separation is certified as
    x itself (v ≤ 0) or as its repair by scaling (:func:`darrm.privacy.certify.repair`, which reads
    ``params.rhs`` and ``params.check`` only); :meth:`offer` keeps it when it is cheaper."""

    def __init__(self, params, c: np.ndarray):
        self.params, self.c = params, c
        self.x: np.ndarray | None = None
        self.ub = math.inf

    def offer(self, x: np.ndarray, v: float) -> np.ndarray:
        """x with rigorous maximum violation v: x itself (v ≤ 0) or its repair; kept if better.  Returns
        the certified point."""
        x_f = repair(x, self.params, v)[0] if v > 0.0 else x
        self.keep(x_f)
        return x_f

    def keep(self, x_f: np.ndarray) -> None:
        """A certified point: kept when there is none yet or it is cheaper."""
        cost = float(self.c @ x_f)
        if self.x is None or cost < self.ub:
            self.x, self.ub = x_f, cost


class _Loop:
    """One run of :func:`constraint_generation` (a :class:`Rounds`): the LP, the bounds, the best
    certified point, the in-out :class:`Stabilizer` and the basis :class:`Polish`."""

    def __init__(self, params, form: TableForm, oracle: Oracle, *, max_rounds: int, cuts_per_round: int,
                 gap_tol: float, lp_backend: str, stabilizer: Stabilizer, tie_break: float, tol: float,
                 polish: Polish | None, solver_opts: dict | None, log: Callable[[str], None] | None):
        self.params, self.form, self.oracle, self.tol = params, form, oracle, tol
        self.max_rounds, self.cuts_per_round, self.gap_tol = int(max_rounds), cuts_per_round, gap_tol
        self.stab, self.polish, self.log = stabilizer, polish, log
        self.c = form.costs
        self.rhs = params.rhs
        self.scale = float(np.max(np.abs(self.c))) or 1.0
        # Tie-break toward larger γ: for large K the prior's mass underflows to 0 away from
        # its mean, and a degenerate LP would leave those γ(l) arbitrary (and constraint
        # generation slow).  Bounds and objectives are evaluated with the exact c.
        self.c_lp = self.c / self.scale - tie_break
        self.lp = make_restricted_lp(lp_backend, self.c_lp, self.rhs, solver_opts)
        self.lb = -math.inf
        self.best = Incumbent(params, self.c)
        self.seen: set = set()

    def exact_bound(self, polish_basis: bool) -> None:
        """The same rows, exact objective, warm start: the tightest bound these rows allow (and, with
        ``polish_basis``, the bound of the duals recomputed from its basis)."""
        lp, c, scale, rhs = self.lp, self.c, self.scale, self.rhs
        lp.set_objective(c / scale)
        x_ex, y = lp.solve()
        lp.set_objective(self.c_lp)
        self.lb = max(self.lb, lagrangian_bound(c, lp.rows, rhs, scale * y))
        if polish_basis:
            y_p = _polished(np.clip(x_ex, 0.0, 1.0), lp.rows, rhs, c, lp.basis())[1]
            self.lb = max(self.lb, lagrangian_bound(c, lp.rows, rhs, y_p))

    def polish_candidate(self, x: np.ndarray, basis) -> None:
        """The LP's vertex recomputed exactly from its basis: a second certified candidate (kept only
        when cheaper)."""
        x_p = _polished(x, self.lp.rows, self.rhs, self.c, basis)[0]
        v_p = float(self.oracle.violation(self.form.full(x_p)))
        x_pf = repair(x_p, self.params, v_p)[0] if v_p > 0.0 else x_p
        if float(self.c @ x_pf) < self.best.ub:
            self.best.x, self.best.ub = x_pf, float(self.c @ x_pf)

    def outcome(self, stop: StopReason, rnd: int) -> Outcome:
        assert self.best.x is not None
        return Outcome(self.best.x, stop, rnd, self.lb, self.lp)

    def at_limit(self) -> Outcome:
        return self.outcome(StopReason.ROUND_LIMIT, self.max_rounds)

    def round(self, rnd: int) -> Outcome | None:
        """Solve the LP, separate at the stabilised point, bound, keep the better certified point, stop
        or add the cuts (:func:`constraint_generation`)."""
        lp, stab, polish, best = self.lp, self.stab, self.polish, self.best
        x_out, _ = lp.solve()
        x_out = np.clip(x_out, 0.0, 1.0)
        x, at_out = stab.separation_point(best.x, x_out)
        v, keys = self.oracle.separate(self.form.full(x), self.seen, self.cuts_per_round)
        polishing = polish is not None and self.tol < v <= polish.below
        basis_x = lp.basis() if polishing else None
        self.exact_bound(polishing)
        x_f = best.offer(x, v)
        if polishing and best.ub - self.lb > self.gap_tol:
            self.polish_candidate(x, basis_x)
        if self.log:
            lam = "" if stab.lam0 >= 1.0 and not stab.auto else f"λ={1.0 if at_out else stab.lam:.2f}, "
            self.log(f"round {rnd}: {lp.rows.shape[0]} LP rows, {lam}max violation {v:.3e}, "
                     f"gap ≤ {best.ub - self.lb:.3e}")
        if at_out and v <= self.tol:
            best.x, best.ub = x_f, float(self.c @ x_f)
            return self.outcome(StopReason.NO_VIOLATION, rnd)
        if best.ub - self.lb <= self.gap_tol:
            return self.outcome(StopReason.GAP, rnd)
        if not at_out and v <= self.tol:
            stab.look_at_lp_point()  # the separation point is feasible (now the incumbent): next, the LP point
            return None
        stab.after_violation(v, at_out)
        if not keys:
            if not at_out:
                stab.look_at_lp_point()  # nothing new between the incumbent and the LP point
                return None
            return self.outcome(StopReason.LP_TOLERANCE, rnd)
        if rnd == self.max_rounds:
            return self.outcome(StopReason.ROUND_LIMIT, rnd)
        self.seen.update(keys)
        lp.add(self.oracle.rows(keys))
        return None


def constraint_generation(
    params,
    form: TableForm,
    oracle: Oracle,
    *,
    max_rounds: int,
    cuts_per_round: int,
    gap_tol: float,
    lp_backend: str,
    stabilizer: Stabilizer,
    tie_break: float,
    tol: float,
    polish: Polish | None = None,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
) -> Outcome:
    """Constraint generation with in-out separation and proven bounds (module docstring).

    Each round solves the restricted LP (costs scaled, tie-broken toward larger γ) for its point
    x_out, separates at x = x_in + λ(x_out − x_in) (``stabilizer``; λ = 1: x_out itself), re-solves
    the LP warm with the exact objective for the lower bound, and keeps the better of the best
    certified point and x's repair.  Stops (:class:`darrm.status.StopReason`) when the LP point
    violates nothing by more than ``tol`` (that point, repaired, is returned), when the proven gap
    is ≤ ``gap_tol``, when every violated key at the LP point is already a row (only the LP's
    feasibility tolerance is left), or at ``max_rounds``.

    Args:
        params: the model's parameters (``rhs``, and ``check`` for the repair).
        form: the LP's variables and costs, and how an LP point makes a full table.
        oracle: the model's separation oracle and rows (:class:`Oracle`).
        max_rounds: the round limit.
        cuts_per_round: keys added per round.
        gap_tol: the proven-gap target (expected-error units).
        lp_backend: "highs" or "cvxpy".
        stabilizer: the in-out λ schedule (``Stabilizer(1.0)``: plain Kelley cuts).
        tie_break: subtracted from every normalised LP cost.
        tol: a violation above this makes a cut; at most this at the LP point stops.
        polish: recompute near-feasible vertices from their basis (None: never).
        solver_opts: options for the LP back end.
        log: one line per round.
    """
    return run_rounds(_Loop(params, form, oracle, max_rounds=max_rounds, cuts_per_round=cuts_per_round,
                            gap_tol=gap_tol, lp_backend=lp_backend, stabilizer=stabilizer, tie_break=tie_break,
                            tol=tol, polish=polish, solver_opts=solver_opts, log=log))
