"""γ_opt for disjoint members: constraint generation over the O(K) rows with proven bounds."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ...prior import IIDPrior, Prior
from ...privacy.certify import Certificate
from ...solver.cuts import most_violated
from ...solver.engine import Oracle, Polish, Stabilizer
from ...solver.engine import constraint_generation as run_engine
from ...solver.finalize import TableForm, certified_gamma_opt, total_form
from ...solver.options import SolveOptions
from ...table import GammaTable
from .certificate import certify_disjoint, constraint_row, violations
from .params import MAX_ROUNDS, DisjointParams

#: Subtracted from every LP cost: among (near-)optimal γ prefer the largest.
TIE_BREAK = 1e-8

#: Below this largest violation the LP point is re-solved exactly from its basis
#: (:class:`darrm.solver.engine.Polish`; dense O(n³), so not in the early rounds).
POLISH_BELOW = 1e-8

#: A (vertex, n_high, output, direction) index whose violation exceeds this becomes a cut.
TOL_CP = 1e-13


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
    (:func:`violations`); x scaled by their maximum (:func:`darrm.privacy.certify.repair`) is feasible,
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
            per round), the round limit (:data:`~darrm.models.disjoint.params.MAX_ROUNDS`
            by default; at the limit see ``accept_gap``: return the best certified
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
        method="disjoint-cutting-planes", solver_opts=solver_opts, log=log)


def constraint_generation(
    params,
    prior: Prior | None,
    opts: SolveOptions,
    *,
    violations_fn: Callable[[np.ndarray], np.ndarray],
    row_fn: Callable[[tuple[int, ...]], np.ndarray],
    certify_fn: Callable[[np.ndarray], Certificate],
    method: str,
    what: str,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
    form: TableForm | None = None,
) -> GammaTable:
    """:func:`solve_gamma_opt_disjoint` for any member model whose every constraint is evaluated at
    once (the disjoint members; the record groups of :mod:`darrm.models.shard_groups`; the budget groups of
    :mod:`darrm.models.weighted_shards`): the engine's loop (:func:`darrm.solver.engine.constraint_generation`,
    plain Kelley cuts, basis polish) and the final certificate.

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
    prior = IIDPrior() if prior is None else prior
    t0 = time.perf_counter()
    form = total_form(params.K, prior) if form is None else form

    def separate(g: np.ndarray, seen: set, top: int):
        V = violations_fn(g)
        return float(V.max()), most_violated(V, seen, int(top), TOL_CP)

    oracle = Oracle(separate=separate, rows=lambda keys: np.array([row_fn(key) for key in keys]),
                    violation=lambda g: float(violations_fn(g).max()))
    out = run_engine(params, form, oracle, max_rounds=opts.rounds(MAX_ROUNDS), cuts_per_round=opts.cuts_per_round,
                     gap_tol=opts.gap_tol, lp_backend=opts.lp_backend, stabilizer=Stabilizer(1.0),
                     tie_break=TIE_BREAK, tol=TOL_CP, polish=Polish(POLISH_BELOW), solver_opts=solver_opts, log=log)
    info = {"method": method, "stop": out.stop.value, "rounds": out.rounds, "lp_lower_bound": out.lower_bound,
            "lp_rows": int(out.lp.rows.shape[0]), "lp_backend": opts.lp_backend,
            "seconds_solve": time.perf_counter() - t0}
    return certified_gamma_opt(
        out.x, params, prior, certify_fn, opts, info, lp_backend=opts.lp_backend, form=form)
