"""γ_opt for disjoint members: constraint generation over the O(K) rows with proven bounds."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ...prior import IIDPrior, Prior
from ...privacy.certify import Certificate, repair
from ...solver.cuts import most_violated
from ...solver.finalize import TableForm, certified_gamma_opt, total_form
from ...solver.options import SolveOptions
from ...solver.restricted_lp import lagrangian_bound, make_restricted_lp
from ...status import StopReason
from ...table import GammaTable
from .certificate import certify_disjoint, constraint_row, violations
from .params import DisjointParams

#: Subtracted from every LP cost: among (near-)optimal γ prefer the largest.
TIE_BREAK = 1e-8

#: Below this largest violation the LP point is re-solved exactly from its basis
#: (:func:`_polished`; dense O(n³), so not in the early rounds).
POLISH_BELOW = 1e-8

#: A (vertex, n_high, output, direction) index whose violation exceeds this becomes a cut.
TOL_CP = 1e-13


def _polished(x: np.ndarray, rows: np.ndarray, rhs: float, c: np.ndarray,
              basis: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """(x′, y′): the LP's optimal vertex and its row duals recomputed in float64 from its basis.

    HiGHS works to a feasibility tolerance (~1e-10) and ignores matrix entries below
    ``small_matrix_value``: with randomised-response members its point sits
    outside exact rows by ~1e-9, and scaling it back (:func:`darrm.solver.gamma_opt.repair`) costs
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


def solve_gamma_opt_disjoint(
    params: DisjointParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    tol: float | None = None,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
) -> GammaTable:
    """Certified γ_opt for disjoint members by constraint generation over the O(K) rows,
    with a proven optimality gap (the contract of :func:`darrm.solver.gamma_opt.solve_gamma_opt`).

    Each round solves the restricted LP (:mod:`darrm.solver.restricted_lp`, objective
    :func:`darrm.solver.gamma_opt.objective_coefficients` scaled and tie-broken toward larger γ) for its
    point x, and re-solves it warm with the exact objective: the duals give a proven
    **lower bound** LB on the full LP (:func:`darrm.solver.restricted_lp.lagrangian_bound`,
    evaluated on the exact rows).  All C·K·4 violations of x are evaluated exactly
    (:func:`violations`); x scaled by their maximum (:func:`darrm.solver.gamma_opt.repair`) is feasible,
    an **upper bound** UB; the best such point is kept.  The ``cuts_per_round`` most
    violated indices (vertex, n_high, output, direction) not yet in the LP are added.

    Stops (:class:`darrm.status.StopReason`) when x violates nothing by more than
    :data:`TOL_CP` (x is returned), when UB − LB ≤ ``gap_tol`` (the best certified point),
    when every violated index is already a row (only the LP's feasibility tolerance is
    left), or at ``max_rounds``.  The returned table is certified by
    :func:`certify_disjoint` (scaled toward 0 if needed: no uncertified table is
    returned), and its ``info["optimality_gap"]`` = its exact expected error − (A + LB) is
    computed from that final table.  Its status is "optimal" iff that gap ≤ ``gap_tol``
    (:func:`darrm.status.status_for`); otherwise a :class:`~darrm.errors.SolveError`
    is raised unless ``accept_gap``, which returns it with ``converged=False``.

    Args:
        options: :class:`~darrm.SolveOptions`: ``cuts_per_round`` (most violated indices added
            per round), the round limit (:data:`~darrm.solver.options.DEFAULT_MAX_ROUNDS`
            ["disjoint"] by default; at the limit see ``accept_gap``: return the best certified
            table with its stated gap instead of raising), ``gap_tol`` (target proven gap,
            expected-error units), ``lp_backend``, ``max_memory`` (the laws of the other members'
            counts must fit it: :meth:`DisjointParams.check_memory`, checked before any work).
        log: callable receiving one line per round (and first the memory estimate).
    """
    opts = SolveOptions() if options is None else options
    return constraint_generation(
        params, prior, opts, what="disjoint members",
        violations_fn=lambda g: violations(g, params),
        row_fn=lambda key: constraint_row(params, *key),
        certify_fn=lambda g: certify_disjoint(g, params, tol=tol, max_memory=opts.max_memory),
        method="disjoint-cutting-planes", rounds_key="disjoint", solver_opts=solver_opts, log=log)


def constraint_generation(
    params,
    prior: Prior | None,
    opts: SolveOptions,
    *,
    violations_fn: Callable[[np.ndarray], np.ndarray],
    row_fn: Callable[[tuple[int, ...]], np.ndarray],
    certify_fn: Callable[[np.ndarray], Certificate],
    method: str,
    rounds_key: str,
    what: str,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
    form: TableForm | None = None,
) -> GammaTable:
    """The loop of :func:`solve_gamma_opt_disjoint` for any member model whose every constraint is
    evaluated at once (the disjoint members; the record groups of :mod:`darrm.models.shard_groups`; the
    budget groups of :mod:`darrm.models.weighted_shards`).

    Args:
        params: the model's parameters: ``K``, ``rhs`` (the right-hand side of ``row_fn``'s rows),
            ``check`` (what :func:`darrm.privacy.certify.repair` scales with, in the units of
            ``violations_fn``) and ``check_memory`` (refuses more than ``opts.max_memory`` before any work).
        prior: the prior of the objective (None: i.i.d. uniform).
        opts: the solve options (``cuts_per_round``, ``gap_tol``, ``lp_backend``, ``accept_gap``).
        violations_fn: γ(0..K) ↦ every constraint's rigorous violation bound (an array; its
            indices are the constraints' keys).
        row_fn: a key ↦ its LP row over γ(mid..K), with (row·x − rhs) of the sign of that violation.
        certify_fn: the model's certificate of a full table.
        method: the table's ``info["method"]``.
        rounds_key: the key of :data:`~darrm.solver.options.DEFAULT_MAX_ROUNDS` for the round limit.
        what: the members' name in the first log line (the memory estimate).
        solver_opts: options for the LP back end.
        log: one line per round.
        form: how an LP point makes a table and what it costs (None: the paper's γ(mid..K),
            :func:`darrm.solver.finalize.total_form`).

    Returns:
        The certified table with its proven gap (:func:`darrm.solver.finalize.certified_gamma_opt`).
    """
    need = params.check_memory(opts.max_memory)
    if log:
        log(f"{what}: in this process, about {need / 2**20:.0f} MiB peak (estimate)")
    cuts_per_round, max_rounds = opts.cuts_per_round, opts.rounds(rounds_key)
    gap_tol, lp_backend = opts.gap_tol, opts.lp_backend
    prior = IIDPrior() if prior is None else prior
    t0 = time.perf_counter()
    K, rhs = params.K, params.rhs
    form = total_form(K, prior) if form is None else form
    c = form.costs
    scale = float(np.max(np.abs(c))) or 1.0
    # Tie-break toward larger γ: for large K the prior's mass underflows to 0 away from
    # its mean, and a degenerate LP would leave those γ(l) arbitrary (and constraint
    # generation slow).  Bounds and objectives are evaluated with the exact c.
    c_lp = c / scale - TIE_BREAK
    lp = make_restricted_lp(lp_backend, c_lp, rhs, solver_opts)
    seen: set[tuple[int, ...]] = set()
    lb, ub = -math.inf, math.inf
    x_best: np.ndarray | None = None
    stop = StopReason.ROUND_LIMIT
    rnd = 0
    for rnd in range(1, int(max_rounds) + 1):
        x, _ = lp.solve()
        x = np.clip(x, 0.0, 1.0)
        V = violations_fn(form.full(x))
        v = float(V.max())
        polish = TOL_CP < v <= POLISH_BELOW  # only the LP's own tolerance is left to remove
        basis_x = lp.basis() if polish else None
        # the same rows, exact objective, warm start: the tightest bound these rows allow
        lp.set_objective(c / scale)
        x_ex, y = lp.solve()
        lp.set_objective(c_lp)
        lb = max(lb, lagrangian_bound(c, lp.rows, rhs, scale * y))
        if polish:
            y_p = _polished(np.clip(x_ex, 0.0, 1.0), lp.rows, rhs, c, lp.basis())[1]
            lb = max(lb, lagrangian_bound(c, lp.rows, rhs, y_p))
        x_f = repair(x, params, v)[0] if v > 0.0 else x  # repair uses params.rhs only
        if x_best is None or float(c @ x_f) < ub:
            x_best, ub = x_f, float(c @ x_f)
        if polish and ub - lb > gap_tol:
            # the LP's vertex recomputed exactly from its basis: a second certified candidate
            x_p = _polished(x, lp.rows, rhs, c, basis_x)[0]
            v_p = float(violations_fn(form.full(x_p)).max())
            x_pf = repair(x_p, params, v_p)[0] if v_p > 0.0 else x_p
            if float(c @ x_pf) < ub:
                x_best, ub = x_pf, float(c @ x_pf)
        if log:
            log(f"round {rnd}: {lp.rows.shape[0]} LP rows, max violation {v:.3e}, gap ≤ {ub - lb:.3e}")
        if v <= TOL_CP:
            x_best, ub, stop = x_f, float(c @ x_f), StopReason.NO_VIOLATION
            break
        if ub - lb <= gap_tol:
            stop = StopReason.GAP
            break
        new = most_violated(V, seen, int(cuts_per_round), TOL_CP)
        if not new:
            stop = StopReason.LP_TOLERANCE
            break
        if rnd == max_rounds:
            break
        seen.update(new)
        lp.add(np.array([row_fn(key) for key in new]))
    assert x_best is not None
    info = {"method": method, "stop": stop.value, "rounds": rnd, "lp_lower_bound": lb,
            "lp_rows": int(lp.rows.shape[0]), "lp_backend": lp_backend, "seconds_solve": time.perf_counter() - t0}
    return certified_gamma_opt(
        x_best, params, prior, certify_fn, opts, info, lp_backend=lp_backend, form=form)
